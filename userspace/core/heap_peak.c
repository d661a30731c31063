// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "heap_peak.h"

void heap_peak_begin(struct heap_peak *hp)
{
	hp->n = 0;
	hp->dropped = 0;
}

static int grow(struct heap_peak *hp)
{
	size_t cap = hp->cap ? 2 * hp->cap : 64;
	struct heap_site *s;

	if (cap > HEAP_PEAK_MAX_SITES)
		cap = HEAP_PEAK_MAX_SITES;
	s = realloc(hp->sites, cap * sizeof(*s));
	if (!s)
		return -1;
	hp->sites = s;
	hp->cap = cap;
	return 0;
}

int heap_peak_add(struct heap_peak *hp, uint64_t addr, const struct site_stats *st)
{
	/* A site whose blocks were all freed held nothing at the peak. */
	if (st->live_bytes <= 0 && !heap_site_live_blocks(st))
		return 0;
	if (hp->n >= HEAP_PEAK_MAX_SITES || (hp->n == hp->cap && grow(hp))) {
		hp->dropped++;
		return 0;
	}
	hp->sites[hp->n++] = (struct heap_site){ addr, *st };
	return 1;
}

void heap_peak_reset(struct heap_peak *hp)
{
	hp->n = 0;
	hp->dropped = 0;
	hp->due = false;
}

void heap_peak_free(struct heap_peak *hp)
{
	free(hp->sites);
	memset(hp, 0, sizeof(*hp));
}
