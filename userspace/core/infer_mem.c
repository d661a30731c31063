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
	m->pg = malloc(INFER_CACHE_PAGES * sizeof(*m->pg));
	if (!m->pg)
		return -ENOMEM;
	for (int i = 0; i < INFER_CACHE_PAGES; i++)
		m->pg[i].base = UINT64_MAX, m->pg[i].used = 0;
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
	free(m->pg);
	m->pg = NULL;
	for (int i = 0; i < INFER_CACHE_BLOCKS; i++) {
		free(m->blk[i].data);
		m->blk[i].data = NULL;
	}
}

/* Whether reading len more bytes would pass the budget (and from then on, any). */
static bool over_budget(struct infer_mem *m, uint64_t len)
{
	if (m->budget && m->bytes_read + len > m->budget)
		m->over = true;
	return m->over;
}

/* The cached block holding addr, NULL when it is not cached. */
static const uint8_t *cached_block(struct infer_mem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(INFER_BLOCK - 1);

	for (int i = 0; i < INFER_CACHE_BLOCKS; i++)
		if (m->blk[i].base == base) {
			m->blk[i].used = ++m->clock;
			return m->blk[i].data;
		}
	return NULL;
}

/* The page holding addr, from a cached block or a page of its own; NULL as block(). */
static const uint8_t *page(struct infer_mem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(INFER_PAGE - 1);
	const uint8_t *b = cached_block(m, addr);
	struct infer_mem_page *victim = &m->pg[0];
	int64_t n;

	if (b)
		return b + (base & (INFER_BLOCK - 1));
	m->clock++;
	for (int i = 0; i < INFER_CACHE_PAGES; i++) {
		if (m->pg[i].base == base) {
			m->pg[i].used = m->clock;
			return m->pg[i].data;
		}
		if (m->pg[i].used < victim->used)
			victim = &m->pg[i];
	}
	if (over_budget(m, INFER_PAGE))
		return NULL;
	victim->base = UINT64_MAX;
	n = m->rd(m->ctx, base, victim->data, INFER_PAGE);
	if (n < 0)
		return NULL;
	m->bytes_read += (uint64_t)n;
	victim->base = base;
	victim->used = m->clock;
	return victim->data;
}

/* The cached block holding addr, read if need be; NULL past the budget or on error. */
static const uint8_t *block(struct infer_mem *m, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(INFER_BLOCK - 1);
	struct infer_mem_block *victim = &m->blk[0];
	int64_t n;

	m->clock++;
	for (int i = 0; i < INFER_CACHE_BLOCKS; i++) {
		if (m->blk[i].base == base) {
			m->blk[i].used = m->clock;
			return m->blk[i].data;
		}
		if (m->blk[i].used < victim->used)
			victim = &m->blk[i];
	}
	if (over_budget(m, INFER_BLOCK))
		return NULL;
	victim->base = UINT64_MAX;
	n = m->rd(m->ctx, base, victim->data, INFER_BLOCK);
	if (n < 0)
		return NULL;
	m->bytes_read += (uint64_t)n;
	victim->base = base;
	victim->used = m->clock;
	return victim->data;
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
