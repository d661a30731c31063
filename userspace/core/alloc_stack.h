/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The allocation stacks of one process, each kept once: a memory request's
 * requester and its callers (return addresses, innermost first, at most
 * ALLOC_STACK_DEPTH), named by a small id the regions it created carry, so
 * each resident byte has the stack that asked for it, not only an owner.
 * Bounded: past ALLOC_STACK_MAX stacks a new one gets no id (0) and is
 * counted in dropped; its memory keeps its owner, as before stacks.
 */
#ifndef MEMATTR_ALLOC_STACK_H
#define MEMATTR_ALLOC_STACK_H

#include <stddef.h>
#include <stdint.h>

#define ALLOC_STACK_DEPTH	8
#define ALLOC_STACK_MAX		4096	/* per process: 4096 * 72 bytes and the index */

struct alloc_stacks {
	uint64_t *pcs;		/* n * ALLOC_STACK_DEPTH: stack id i + 1 at i * DEPTH */
	uint8_t *depth;		/* frames of each */
	size_t n, cap;
	uint32_t *slot;		/* open addressing: id, 0 empty */
	size_t nslot;
	uint64_t dropped;	/* stacks not kept: the table was full (or out of memory) */
};

/* The id of pcs[0..n) (n <= ALLOC_STACK_DEPTH, more are cut), added when new; 0: none kept. */
uint32_t alloc_stack_intern(struct alloc_stacks *s, const uint64_t *pcs, unsigned int n);

/* The frames of stack id into *pcs: their count, 0 for an id not in s. Valid until the next intern. */
unsigned int alloc_stack_get(const struct alloc_stacks *s, uint32_t id, const uint64_t **pcs);

/* dst becomes a copy of src (a forked child's regions carry its parent's ids). 0, or -1. */
int alloc_stacks_copy(struct alloc_stacks *dst, const struct alloc_stacks *src);

void alloc_stacks_free(struct alloc_stacks *s);

#endif
