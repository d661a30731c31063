// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>

#include "lost_records.h"
#include "process.h"

void lost_records_begin(struct lost_check *c, const struct proc *p)
{
	const struct region_table *t = &p->regions;
	size_t n = 0;

	c->v = NULL;
	c->n = 0;
	if (!p->records_lost)
		return;
	c->v = t->n ? malloc(t->n * sizeof(*c->v)) : NULL;
	if (!c->v)
		return;
	for (size_t i = 0; i < t->n; i++) {
		const struct region *r = &t->r[i];

		/* A file's pages are its file's whoever maps it; nobody's stays nobody's. */
		if (r->flags & REGION_FILE || r->owner == COMP_UNATTRIBUTED)
			continue;
		c->v[n++] = (struct lost_span){ r->start, r->end };
	}
	c->n = n;
}

/* Bytes of [start, end) that regions cover. */
static uint64_t covered(struct region_table *t, uint64_t start, uint64_t end)
{
	uint64_t n = 0;

	for (struct region *r = regions_next(t, start); r && r->start < end; r = regions_next(t, r->end)) {
		uint64_t a = r->start > start ? r->start : start;
		uint64_t b = r->end < end ? r->end : end;

		n += b - a;
	}
	return n;
}

size_t lost_records_end(struct lost_check *c, struct proc *p, bool ok)
{
	size_t changed = 0;

	if (ok && p->records_lost) {
		for (size_t i = 0; i < c->n; i++) {
			const struct lost_span *s = &c->v[i];

			if (covered(&p->regions, s->start, s->end) == s->end - s->start)
				continue;
			regions_set_owner(&p->regions, s->start, s->end, COMP_UNATTRIBUTED, false);
			changed++;
		}
		p->records_lost = false;
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
	return changed;
}
