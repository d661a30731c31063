// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "hooks.h"

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * After a register was loaded with the target: jmp *reg (ff e0+r) or
 * push reg; ret (50+r; c3), REX.B (41) first for r8-r15. The register
 * must be the one loaded, else the bytes are something else.
 */
static size_t jumps_via(const uint8_t *p, size_t len, unsigned int reg)
{
	size_t rex = reg >= 8;

	if (rex && (len < 1 || p[0] != 0x41))
		return 0;
	p += rex;
	len -= rex;
	if (len >= 2 && p[0] == 0xff && p[1] == 0xe0 + (reg & 7))
		return 1;
	if (len >= 2 && p[0] == 0x50 + (reg & 7) && p[1] == 0xc3)
		return 1;
	return 0;
}

static enum hook_jump decode(const uint8_t *c, size_t len, uint64_t addr, uint64_t *target)
{
	unsigned int reg;

	if (len >= 5 && c[0] == 0xe9) {
		*target = addr + 5 + (uint64_t)(int64_t)(int32_t)le32(c + 1);
		return HOOK_JUMP_DIRECT;
	}
	if (len >= 2 && c[0] == 0xeb) {
		*target = addr + 2 + (uint64_t)(int64_t)(int8_t)c[1];
		return HOOK_JUMP_DIRECT;
	}
	/* movabs $imm64, %reg: REX.W (48, or 49 for r8-r15), b8+r. */
	if (len >= 10 && (c[0] == 0x48 || c[0] == 0x49) && c[1] >= 0xb8 && c[1] <= 0xbf) {
		reg = (unsigned int)(c[1] - 0xb8) + (c[0] == 0x49 ? 8 : 0);
		if (!jumps_via(c + 10, len - 10, reg))
			return HOOK_JUMP_NONE;
		*target = le64(c + 2);
		return HOOK_JUMP_DIRECT;
	}
	/* mov $imm32, %r32 (zero-extended): b8+r, or 41 b8+r for r8d-r15d. */
	if (len >= 6 && c[0] == 0x41 && c[1] >= 0xb8 && c[1] <= 0xbf) {
		reg = (unsigned int)(c[1] - 0xb8) + 8;
		if (!jumps_via(c + 6, len - 6, reg))
			return HOOK_JUMP_NONE;
		*target = le32(c + 2);
		return HOOK_JUMP_DIRECT;
	}
	if (len >= 5 && c[0] >= 0xb8 && c[0] <= 0xbf) {
		reg = (unsigned int)(c[0] - 0xb8);
		if (!jumps_via(c + 5, len - 5, reg))
			return HOOK_JUMP_NONE;
		*target = le32(c + 1);
		return HOOK_JUMP_DIRECT;
	}
	/* jmp *disp32(%rip): the target is in memory, 6 + disp past addr. */
	if (len >= 6 && c[0] == 0xff && c[1] == 0x25) {
		uint64_t slot = addr + 6 + (uint64_t)(int64_t)(int32_t)le32(c + 2);

		if (len >= 8 && slot >= addr && slot - addr <= len - 8) {
			*target = le64(c + (slot - addr));
			return HOOK_JUMP_DIRECT;
		}
		*target = slot;
		return HOOK_JUMP_INDIRECT;
	}
	/* push $imm32 (sign-extended); [movl $hi32, 4(%rsp);] ret */
	if (len >= 6 && c[0] == 0x68) {
		uint64_t lo = (uint64_t)(int64_t)(int32_t)le32(c + 1);

		if (c[5] == 0xc3) {
			*target = lo;
			return HOOK_JUMP_DIRECT;
		}
		if (len >= 14 && c[5] == 0xc7 && c[6] == 0x44 && c[7] == 0x24 && c[8] == 0x04 &&
		    c[13] == 0xc3) {
			*target = (lo & 0xffffffffULL) | (uint64_t)le32(c + 9) << 32;
			return HOOK_JUMP_DIRECT;
		}
	}
	return HOOK_JUMP_NONE;
}

enum hook_jump hook_decode_jump(const uint8_t *code, size_t len, uint64_t addr,
				uint64_t *target)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	enum hook_jump j = decode(code, len, addr, target);

	/* A patcher that keeps the landing pad (CET) writes its jump after it. */
	if (j == HOOK_JUMP_NONE && len > sizeof(endbr64) &&
	    !memcmp(code, endbr64, sizeof(endbr64)))
		j = decode(code + sizeof(endbr64), len - sizeof(endbr64),
			   addr + sizeof(endbr64), target);
	return j;
}
