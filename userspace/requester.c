// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "requester.h"

void code_reader_init(struct code_reader *cr, pid_t pid)
{
	memset(cr, 0, sizeof(*cr));
	cr->pid = pid;
	cr->fd = -1;
}

void code_reader_close(struct code_reader *cr)
{
	if (cr->fd >= 0)
		close(cr->fd);
	code_reader_init(cr, cr->pid);
}

struct scan_ctx {
	struct code_reader *cr;
	struct region_table *t;
};

static int read_code(void *ctx, uint64_t addr, uint8_t *buf)
{
	struct scan_ctx *s = ctx;
	struct code_reader *cr = s->cr;
	/* Return addresses are spread; the low bits pick the slot. */
	struct code_cache_slot *slot = &cr->slot[(addr ^ (addr >> 12)) % CODE_CACHE_SLOTS];
	char path[64];

	if (slot->addr == addr) {
		memcpy(buf, slot->bytes, CALLSCAN_CODE_BYTES);
		return 0;
	}
	if (cr->fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", cr->pid);
		cr->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (cr->fd < 0)
			return -errno;
	}
	if (pread(cr->fd, buf, CALLSCAN_CODE_BYTES, (off_t)(addr - CALLSCAN_CODE_BYTES)) !=
	    CALLSCAN_CODE_BYTES)
		return -EIO;
	slot->addr = addr;
	memcpy(slot->bytes, buf, CALLSCAN_CODE_BYTES);
	return 0;
}

static bool code_owner(void *ctx, uint64_t addr, comp_id *owner)
{
	struct scan_ctx *s = ctx;
	struct region *r = regions_find(s->t, addr);

	if (!r || !(r->flags & REGION_EXEC))
		return false;
	*owner = r->owner;
	return true;
}

/*
 * The stack as the program left it: return addresses a uretprobe replaced
 * with the kernel's trampoline (a tracer's probe on malloc) put back from
 * the task's return instances, matched by their stack slot.
 */
static const uint8_t *unhijacked_stack(const struct ev_syscall *e, uint8_t *copy, size_t len)
{
	uint32_t n = e->nret < MEMATTR_MAX_HIJACKED ? e->nret : MEMATTR_MAX_HIJACKED;
	bool copied = false;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = e->ret_slot[i] - e->user_sp;

		if (e->ret_slot[i] < e->user_sp || off % 8 || off + 8 > len)
			continue;
		if (!copied) {
			memcpy(copy, e->stack, len);
			copied = true;
		}
		memcpy(copy + off, &e->ret_addr[i], 8);
	}
	return copied ? copy : e->stack;
}

bool requester_find(struct code_reader *cr, struct region_table *regions,
		    comp_id forwarder, comp_id entry_of, const struct ev_syscall *e,
		    struct requester *rq)
{
	const uint8_t *scanned;
	struct scan_ctx s = { .cr = cr, .t = regions };
	struct callscan_ops ops = { .code_owner = code_owner, .read_code = read_code, .ctx = &s };
	struct callscan_result res;
	size_t len = e->stack_len < sizeof(e->stack) ? e->stack_len : sizeof(e->stack);
	uint8_t stack[MEMATTR_STACK_BYTES];
	struct region *r;

	memset(rq, 0, sizeof(*rq));
	/* Inside a probed malloc: its caller is known exactly, unless it is libc itself (strdup). */
	scanned = unhijacked_stack(e, stack, len);
	if (!callscan_find_caller(scanned, len, forwarder, &ops, &res)) {
		rq->libc_only = res.frames > 0;
		return false;
	}
	if (res.owner == entry_of)
		rq->entry = callscan_outermost(scanned, len, res.offset, entry_of, forwarder, &ops);
	r = regions_find(regions, res.caller);
	rq->caller = res.caller;
	rq->owner = res.owner;
	rq->owner_final = r && !(r->flags & REGION_FROM_EVENT);
	return true;
}
