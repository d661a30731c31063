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
	for (int i = 0; i < INFER_CACHE_BLOCKS; i++) {
		free(m->blk[i].data);
		m->blk[i].data = NULL;
	}
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
	if (m->budget && m->bytes_read >= m->budget) {
		m->over = true;
		return NULL;
	}
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
	const uint8_t *b = block(m, addr);

	if (!b)
		return false;
	memcpy(w, b + (addr & (INFER_BLOCK - 1)), sizeof(*w));
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
