/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who called malloc: find, in a copy of the top of a user stack, the first
 * return address that lies outside the forwarding layer (libc and the
 * loader). It is how memory that reaches the kernel through malloc, mmap(),
 * brk() or mprotect() is charged to the code that asked for it, without a
 * uprobe on every malloc.
 *
 * Without frame pointers the stack is scanned word by word. A word counts as
 * a return address only if it points into executable code and the bytes
 * just before it decode as a call instruction that ends exactly there; that
 * rejects almost every stale pointer and data word. The scan is pure: the
 * caller supplies how to look up code and read its bytes, so the unit tests
 * run it on fabricated stacks.
 */
#ifndef MEMATTR_CALLSCAN_H
#define MEMATTR_CALLSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "components.h"

/* Longest x86-64 call encoding we recognise (REX + FF /2 + SIB + disp32). */
#define CALLSCAN_CODE_BYTES	8

struct callscan_ops {
	/* Owner of the executable mapping holding addr; false when addr is not code. */
	bool (*code_owner)(void *ctx, uint64_t addr, comp_id *owner);
	/* Copy the CALLSCAN_CODE_BYTES bytes that end at addr; 0 or -errno. */
	int (*read_code)(void *ctx, uint64_t addr, uint8_t *buf);
	void *ctx;
};

struct callscan_result {
	uint64_t caller;	/* first return address outside the forwarders, 0: none */
	comp_id owner;		/* its mapping's owner */
	unsigned int frames;	/* return addresses seen up to and including it */
	size_t offset;		/* where in the stack copy it was */
};

/*
 * True when the n bytes in code (those right before a return address) end
 * with a complete call instruction: E8 rel32, or FF /2 in any register or
 * memory form, with an optional REX prefix.
 */
bool callscan_ends_with_call(const uint8_t *code, size_t n);

/*
 * Scan len bytes of stack (8-byte aligned words from the stack pointer up)
 * for the first return address whose owner is not forwarder. Returns true
 * and fills res when one is found.
 */
bool callscan_find_caller(const uint8_t *stack, size_t len, comp_id forwarder,
			  const struct callscan_ops *ops, struct callscan_result *res);

/*
 * From offset on, the outermost return address in code owned by inner
 * before the stack leaves it for other code (libc frames are passed over):
 * for memory MPI asked for, the address inside the MPI function the
 * application called (MPI_Init -> ompi_mpi_init -> ... -> malloc). 0 when
 * the copy ends before the stack leaves inner: the entry is not in it.
 */
uint64_t callscan_outermost(const uint8_t *stack, size_t len, size_t offset, comp_id inner,
			    comp_id forwarder, const struct callscan_ops *ops);

#endif
