// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interned allocation stacks: a hash table over fixed-size rows. A process
 * makes the same requests from the same places over and over (a solver's
 * arrays, each time step), so the distinct stacks are few and each region
 * carries 4 bytes, not 64.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc_stack.h"

static uint64_t hash_pcs(const uint64_t *pcs, unsigned int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

	for (unsigned int i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return h;
}

static const uint64_t *row(const struct alloc_stacks *s, uint32_t id)
{
	return &s->pcs[(size_t)(id - 1) * ALLOC_STACK_DEPTH];
}

static int rehash(struct alloc_stacks *s, size_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t id = 1; id <= s->n; id++) {
		size_t j = hash_pcs(row(s, (uint32_t)id), s->depth[id - 1]) & (nslot - 1);

		while (slot[j])
			j = (j + 1) & (nslot - 1);
		slot[j] = (uint32_t)id;
	}
	free(s->slot);
	s->slot = slot;
	s->nslot = nslot;
	return 0;
}

static int grow(struct alloc_stacks *s)
{
	size_t cap = s->cap ? 2 * s->cap : 16;
	uint64_t *pcs;
	uint8_t *depth;

	if (cap > ALLOC_STACK_MAX)
		cap = ALLOC_STACK_MAX;
	pcs = realloc(s->pcs, cap * ALLOC_STACK_DEPTH * sizeof(*pcs));
	if (!pcs)
		return -1;
	s->pcs = pcs;
	depth = realloc(s->depth, cap * sizeof(*depth));
	if (!depth)
		return -1;
	s->depth = depth;
	s->cap = cap;
	return 0;
}

uint32_t alloc_stack_intern(struct alloc_stacks *s, const uint64_t *pcs, unsigned int n)
{
	size_t j;
	uint32_t id;

	if (!n)
		return 0;
	if (n > ALLOC_STACK_DEPTH)
		n = ALLOC_STACK_DEPTH;
	if (!s->nslot && rehash(s, 32))
		goto drop;
	for (j = hash_pcs(pcs, n) & (s->nslot - 1); s->slot[j]; j = (j + 1) & (s->nslot - 1)) {
		id = s->slot[j];
		if (s->depth[id - 1] == n && !memcmp(row(s, id), pcs, n * sizeof(*pcs)))
			return id;
	}
	/* One slot always stays empty: the probe above ends. */
	if (s->n >= ALLOC_STACK_MAX || s->n + 2 > s->nslot || (s->n == s->cap && grow(s)))
		goto drop;
	id = (uint32_t)++s->n;
	memset(&s->pcs[(size_t)(id - 1) * ALLOC_STACK_DEPTH], 0, ALLOC_STACK_DEPTH * sizeof(*pcs));
	memcpy(&s->pcs[(size_t)(id - 1) * ALLOC_STACK_DEPTH], pcs, n * sizeof(*pcs));
	s->depth[id - 1] = (uint8_t)n;
	s->slot[j] = id;
	/* At most half full: probes stay short. A failed rehash keeps the old, fuller table. */
	if (2 * s->n > s->nslot)
		rehash(s, 2 * s->nslot);
	return id;
drop:
	s->dropped++;
	return 0;
}

unsigned int alloc_stack_get(const struct alloc_stacks *s, uint32_t id, const uint64_t **pcs)
{
	if (!id || id > s->n)
		return 0;
	*pcs = row(s, id);
	return s->depth[id - 1];
}

int alloc_stacks_copy(struct alloc_stacks *dst, const struct alloc_stacks *src)
{
	struct alloc_stacks c = { .n = src->n, .cap = src->n, .nslot = src->nslot,
				  .dropped = src->dropped };

	if (src->n) {
		c.pcs = malloc(src->n * ALLOC_STACK_DEPTH * sizeof(*c.pcs));
		c.depth = malloc(src->n * sizeof(*c.depth));
		c.slot = malloc(src->nslot * sizeof(*c.slot));
		if (!c.pcs || !c.depth || !c.slot) {
			alloc_stacks_free(&c);
			return -1;
		}
		memcpy(c.pcs, src->pcs, src->n * ALLOC_STACK_DEPTH * sizeof(*c.pcs));
		memcpy(c.depth, src->depth, src->n * sizeof(*c.depth));
		memcpy(c.slot, src->slot, src->nslot * sizeof(*c.slot));
	} else {
		c.nslot = 0;
	}
	alloc_stacks_free(dst);
	*dst = c;
	return 0;
}

void alloc_stacks_free(struct alloc_stacks *s)
{
	free(s->pcs);
	free(s->depth);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}
