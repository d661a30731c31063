// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "infer_mem.h"

int infer_mem_init(struct infer_mem *m, infer_read_fn rd, void *ctx, uint64_t budget)
{
	memset(m, 0, sizeof(*m));
	m->rd = rd;
	m->ctx = ctx;
	m->budget = budget;
	m->pages = malloc(INFER_CACHE_PAGES * INFER_PAGE);
	if (!m->pages)
		return -ENOMEM;
	for (int i = 0; i < INFER_CACHE_PAGES; i++)
		m->pg[i] = (struct infer_mem_block){ UINT64_MAX, 0, m->pages + i * INFER_PAGE };
	for (int i = 0; i < INFER_CACHE_BLOCKS; i++) {
		m->blk[i].base = UINT64_MAX;
		m->blk[i].data = malloc(INFER_BLOCK);
		if (!m->blk[i].data) {
			infer_mem_free(m);
			return -ENOMEM;
		}
	}
	return 0;
}

void infer_mem_free(struct infer_mem *m)
{
	free(m->pages);
	m->pages = NULL;
	for (int i = 0; i < INFER_CACHE_BLOCKS; i++) {
		free(m->blk[i].data);
		m->blk[i].data = NULL;
	}
}

/* The cached piece at base, NULL when it is not cached. */
static struct infer_mem_block *cached(struct infer_mem *m, struct infer_mem_block *c, int n,
				      uint64_t base)
{
	for (int i = 0; i < n; i++)
		if (c[i].base == base) {
			c[i].used = ++m->clock;
			return &c[i];
		}
	return NULL;
}

/*
 * The piece of len bytes at base, from the cache c or read into its least
 * recently used slot; NULL past the budget (which reading len more bytes
 * would pass) or on error.
 */
static const uint8_t *piece(struct infer_mem *m, struct infer_mem_block *c, int n, uint64_t base,
			    size_t len)
{
	struct infer_mem_block *victim = cached(m, c, n, base);
	int64_t got;

	if (victim)
		return victim->data;
	victim = &c[0];
	for (int i = 1; i < n; i++)
		if (c[i].used < victim->used)
			victim = &c[i];
	if (m->budget && m->bytes_read + len > m->budget)
		m->over = true;
	if (m->over)
		return NULL;
	victim->base = UINT64_MAX;
	got = m->rd(m->ctx, base, victim->data, len);
	if (got < 0)
		return NULL;
	m->bytes_read += (uint64_t)got;
	victim->base = base;
	victim->used = ++m->clock;
	return victim->data;
}

static const uint8_t *block(struct infer_mem *m, uint64_t addr)
{
	return piece(m, m->blk, INFER_CACHE_BLOCKS, addr & ~(uint64_t)(INFER_BLOCK - 1), INFER_BLOCK);
}

/* The page holding addr: in a cached block, or read alone. */
static const uint8_t *page(struct infer_mem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(INFER_PAGE - 1);
	struct infer_mem_block *b = cached(m, m->blk, INFER_CACHE_BLOCKS,
					   addr & ~(uint64_t)(INFER_BLOCK - 1));

	if (b)
		return b->data + (base & (INFER_BLOCK - 1));
	return piece(m, m->pg, INFER_CACHE_PAGES, base, INFER_PAGE);
}

bool infer_mem_word(struct infer_mem *m, uint64_t addr, uint64_t *w)
{
	const uint8_t *p = page(m, addr);

	if (!p)
		return false;
	memcpy(w, p + (addr & (INFER_PAGE - 1)), sizeof(*w));
	return true;
}

bool infer_mem_words(struct infer_mem *m, uint64_t addr, uint64_t len, infer_words_cb cb,
		     void *ctx)
{
	uint64_t end = addr + len;

	addr = (addr + 7) & ~7ULL;
	while (addr + 8 <= end) {
		uint64_t off = addr & (INFER_BLOCK - 1);
		uint64_t piece = INFER_BLOCK - off;
		const uint8_t *b = block(m, addr);

		if (!b)
			return false;
		if (piece > end - addr)
			piece = end - addr;
		cb(ctx, addr, (const uint64_t *)(const void *)(b + off), (size_t)(piece / 8));
		addr += piece & ~7ULL;
	}
	return true;
}
