// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>

#include "gone_regions.h"

void gone_regions_read_begins(struct gone_regions *g, uint64_t read_ns)
{
	size_t j = 0;

	for (size_t i = 0; i < g->n; i++)
		if (g->g[i].read_ns >= g->prev_read_ns)
			g->g[j++] = g->g[i];
	g->n = j;
	g->prev_read_ns = read_ns;
}

int gone_regions_keep(struct gone_regions *g, const struct region *r, uint64_t read_ns)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct gone_region *m;

		if (cap > GONE_REGIONS_MAX)
			cap = GONE_REGIONS_MAX;
		if (g->n == cap)
			return -1;
		m = realloc(g->g, cap * sizeof(*m));
		if (!m)
			return -1;
		g->g = m;
		g->cap = cap;
	}
	g->g[g->n++] = (struct gone_region){ *r, read_ns, false };
	return 0;
}

const struct region *gone_regions_find(const struct gone_regions *g, uint64_t addr, uint64_t ts)
{
	const struct gone_region *best = NULL;

	for (size_t i = 0; i < g->n; i++) {
		const struct gone_region *x = &g->g[i];

		if (addr < x->r.start || addr >= x->r.end || x->read_ns <= ts)
			continue;
		if (!best || x->read_ns < best->read_ns)
			best = x;
	}
	return best ? &best->r : NULL;
}

void gone_regions_release(struct gone_regions *g, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->g[i].r.start < end && g->g[i].r.end > start)
			g->g[i].released = true;
}

int64_t gone_regions_unreleased(const struct gone_regions *g, uint64_t read_ns, int64_t *rss,
				size_t ncomp)
{
	int64_t sum = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct gone_region *x = &g->g[i];

		if (x->released || x->read_ns != read_ns || x->r.rss <= 0)
			continue;
		sum += x->r.rss;
		if (rss)
			rss[x->r.owner < ncomp ? x->r.owner : COMP_UNATTRIBUTED] += x->r.rss;
	}
	return sum;
}

void gone_regions_free(struct gone_regions *g)
{
	free(g->g);
	*g = (struct gone_regions){ 0 };
}
