// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "heapwalk.h"

#define FENCEPOST	16ULL	/* the two chunks closing an arena heap that was left */
#define ARENA_PROBE	4096ULL	/* heap_info and malloc_state (~2.2 KiB) fit below this */
#define ARENA_CHECK	16	/* chunks that must hold in a row for a first-chunk guess */

static bool chunk_size(struct infer_mem *m, uint64_t c, uint64_t *size, uint64_t *raw)
{
	if (!infer_mem_word(m, c + 8, raw))
		return false;
	*size = *raw & ~CHUNK_FLAGS;
	return true;
}

uint64_t heapwalk_chunks(struct infer_mem *m, uint64_t first, uint64_t end, heap_chunk_cb cb,
			 void *ctx)
{
	uint64_t c = first, sz, raw, nsz, nraw;

	while (c + CHUNK_MINSIZE <= end) {
		if (!chunk_size(m, c, &sz, &raw))
			return c;
		if (sz == FENCEPOST && (raw & CHUNK_PREV_INUSE))
			return end;
		if (sz < CHUNK_MINSIZE || (sz & 15) || (raw & CHUNK_IS_MMAPPED) || sz > end - c)
			return c;
		/* The top chunk: what is left of the heap after it cannot hold a chunk. */
		if (end - (c + sz) < CHUNK_MINSIZE) {
			if (cb && cb(ctx, c, end, false))
				return c;
			return end;
		}
		if (!chunk_size(m, c + sz, &nsz, &nraw))
			return c;
		if (cb && cb(ctx, c, c + sz, nraw & CHUNK_PREV_INUSE))
			return c;
		c += sz;
	}
	return c >= end ? end : c;
}

/* Counts chunks of a trial walk, stopping it after ARENA_CHECK. */
static int count_chunk(void *ctx, uint64_t start, uint64_t end, bool in_use)
{
	unsigned int *n = ctx;

	(void)start;
	(void)end;
	(void)in_use;
	return ++*n >= ARENA_CHECK;
}

uint64_t heapwalk_arena_first(struct infer_mem *m, uint64_t start, uint64_t end,
			      uint64_t *used_end)
{
	uint64_t size;

	*used_end = end;
	if (!infer_mem_word(m, start + 16, &size))
		return 0;
	if (size > CHUNK_MINSIZE && size <= end - start)
		*used_end = start + size;
	/* heap_info is 4-5 words: the chunks start after it, 16-aligned. */
	for (uint64_t c = start + 32; c < start + ARENA_PROBE && c < *used_end; c += 16) {
		unsigned int n = 0;
		uint64_t stop = heapwalk_chunks(m, c, *used_end, count_chunk, &n);

		if (n >= ARENA_CHECK || stop == *used_end)
			return c;
		if (m->over)
			return 0;
	}
	return 0;
}

uint64_t heapwalk_mmapped_at(struct infer_mem *m, uint64_t addr, uint64_t end)
{
	uint64_t prev, raw, sz;

	if (!infer_mem_word(m, addr, &prev) || !infer_mem_word(m, addr + 8, &raw))
		return 0;
	sz = raw & ~CHUNK_FLAGS;
	if (prev || (raw & CHUNK_FLAGS) != CHUNK_IS_MMAPPED || !sz || (sz & 4095) ||
	    sz > end - addr)
		return 0;
	return sz;
}
