/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * glibc malloc's chunks, read from a running process (x86-64: 8-byte size
 * fields, 16-byte alignment). A chunk is [prev_size][size|A|M|P][user
 * data...]; the low bits of size are PREV_INUSE (0x1: the chunk before is
 * in use), IS_MMAPPED (0x2), NON_MAIN_ARENA (0x4). Whether a chunk is in
 * use is the next chunk's PREV_INUSE bit; the last chunk of a heap is the
 * top chunk (free). A heap of another arena starts with its heap_info
 * (ar_ptr, prev, size, ...), the first heap of an arena then its
 * malloc_state, and its chunks after them. Blocks of M_MMAP_THRESHOLD and
 * more are mmap'd each with a header: prev_size 0, size | IS_MMAPPED.
 * Fast-bin and tcache chunks keep their PREV_INUSE bit set: they count as
 * in use here (small; what reaches them is stale).
 */
#ifndef MEMATTR_HEAPWALK_H
#define MEMATTR_HEAPWALK_H

#include <stdbool.h>
#include <stdint.h>

#include "infer_mem.h"

#define CHUNK_PREV_INUSE	0x1ULL
#define CHUNK_IS_MMAPPED	0x2ULL
#define CHUNK_NON_MAIN_ARENA	0x4ULL
#define CHUNK_FLAGS		0x7ULL
#define CHUNK_MINSIZE		32ULL
#define HEAP_MAX_SIZE		(64ULL << 20)	/* 2 * DEFAULT_MMAP_THRESHOLD_MAX on 64-bit */

/* One chunk: [start, end), in use or free (the top chunk is free). */
typedef int (*heap_chunk_cb)(void *ctx, uint64_t start, uint64_t end, bool in_use);

/*
 * Walk the chunks from first up to end, calling cb for each (a non-zero
 * return stops the walk). Returns the address where the walk stopped:
 * end when it reached the top chunk (or an arena's fencepost), else the
 * first chunk it could not read or whose size makes no sense.
 */
uint64_t heapwalk_chunks(struct infer_mem *m, uint64_t first, uint64_t end, heap_chunk_cb cb,
			 void *ctx);

/*
 * The first chunk of an arena's heap mapped at start (HEAP_MAX_SIZE
 * aligned), found as the first offset after heap_info and malloc_state
 * where a run of chunks holds; 0 when none does. *used_end: the end of
 * the heap's used part (heap_info.size).
 */
uint64_t heapwalk_arena_first(struct infer_mem *m, uint64_t start, uint64_t end,
			      uint64_t *used_end);

/* Length of the mmap'd chunk whose header is at page-aligned addr, 0 when none is. */
uint64_t heapwalk_mmapped_at(struct infer_mem *m, uint64_t addr, uint64_t end);

#endif
