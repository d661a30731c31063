// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "callscan.h"

/*
 * Length of an FF /2 (call r/m64) instruction from its ModRM byte on, or 0
 * when the ModRM byte does not encode a call. The SIB byte, when present,
 * only matters through its base field (base 101 with mod 00 takes a disp32).
 */
static size_t modrm_call_len(const uint8_t *p, size_t avail)
{
	uint8_t modrm, mod, rm;
	size_t len = 1;

	if (!avail)
		return 0;
	modrm = p[0];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (((modrm >> 3) & 7) != 2)
		return 0;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		len++;			/* SIB */
		if (mod == 0 && (p[1] & 7) == 5)
			return len + 4;
	} else if (mod == 0 && rm == 5) {
		return len + 4;		/* RIP-relative disp32 */
	}
	if (mod == 1)
		return len + 1;
	if (mod == 2)
		return len + 4;
	return len;
}

bool callscan_ends_with_call(const uint8_t *code, size_t n)
{
	/* call rel32: E8 and four bytes. */
	if (n >= 5 && code[n - 5] == 0xe8)
		return true;
	/* call r/m64: [REX] FF ModRM [SIB] [disp], 2 to 8 bytes. */
	for (size_t len = 2; len <= n && len <= CALLSCAN_CODE_BYTES; len++) {
		const uint8_t *op = code + n - len;

		if (op[0] == 0xff && modrm_call_len(op + 1, len - 1) == len - 1)
			return true;
		if (len >= 3 && (op[0] & 0xf0) == 0x40 && op[1] == 0xff &&
		    modrm_call_len(op + 2, len - 2) == len - 2)
			return true;
	}
	return false;
}

static bool is_return_address(uint64_t w, const struct callscan_ops *ops, comp_id *owner)
{
	uint8_t code[CALLSCAN_CODE_BYTES];

	if (w < CALLSCAN_CODE_BYTES || !ops->code_owner(ops->ctx, w, owner))
		return false;
	if (ops->read_code(ops->ctx, w, code))
		return false;
	return callscan_ends_with_call(code, sizeof(code));
}

bool callscan_find_caller(const uint8_t *stack, size_t len, comp_id forwarder,
			  const struct callscan_ops *ops, struct callscan_result *res)
{
	unsigned int frames = 0;

	memset(res, 0, sizeof(*res));
	for (size_t off = 0; off + sizeof(uint64_t) <= len; off += sizeof(uint64_t)) {
		uint64_t w;
		comp_id owner;

		memcpy(&w, stack + off, sizeof(w));
		if (!is_return_address(w, ops, &owner))
			continue;
		frames++;
		if (owner == forwarder)
			continue;
		res->caller = w;
		res->owner = owner;
		res->frames = frames;
		res->offset = off;
		return true;
	}
	res->frames = frames;
	return false;
}

uint64_t callscan_outermost(const uint8_t *stack, size_t len, size_t offset, comp_id inner,
			    comp_id forwarder, const struct callscan_ops *ops)
{
	uint64_t last = 0;

	for (size_t off = offset; off + sizeof(uint64_t) <= len; off += sizeof(uint64_t)) {
		uint64_t w;
		comp_id owner;

		memcpy(&w, stack + off, sizeof(w));
		if (!is_return_address(w, ops, &owner) || owner == forwarder)
			continue;
		if (owner != inner)
			return last;
		last = w;
	}
	return 0;
}
