// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sampled attribution: the count, page by page, of the regions in the
 * ranges that requests touched since the last count of all pages
 * (process.c keeps the ranges). A range is counted where regions are, one
 * span of regions side by side at a time (one read of the kernel's page
 * tables for the span, not one per region: a heap of small allocations is
 * thousands of regions), and each region is counted whole, so its figure
 * is exact. What is left of a range afterwards is what can still gain
 * pages without a new request: from the first region not wholly in memory
 * to the last one.
 */
#include <errno.h>
#include <stdint.h>

#include "process.h"

/* Overlapping or adjacent ranges merge; past PROC_TOUCHED_MAX, "all of them" (touched_full). */
void proc_touch(struct proc *p, uint64_t start, uint64_t end)
{
	struct touched_range *r;

	if (start >= end || p->touched_full)
		return;
	/* Overlapping or adjacent ranges become one (all of them: a wide advice spans several). */
	for (unsigned int i = 0; i < p->ntouched;) {
		r = &p->touched[i];
		if (start <= r->end && end >= r->start) {
			start = start < r->start ? start : r->start;
			end = end > r->end ? end : r->end;
			*r = p->touched[--p->ntouched];
		} else {
			i++;
		}
	}
	if (p->ntouched == PROC_TOUCHED_MAX) {
		p->touched_full = true;
		return;
	}
	p->touched[p->ntouched++] = (struct touched_range){ start, end };
}

/* The end of the span of regions side by side from r, within [.., limit). */
static uint64_t span_end(struct region_table *t, const struct region *r, uint64_t limit)
{
	uint64_t end = r->end;
	const struct region *q;

	while (end < limit && (q = regions_next(t, end)) && q->start == end)
		end = q->end;
	return end;
}

/*
 * Count the regions in [start, end), span by span, each whole; the first
 * and last region not wholly in memory in *open_start and *open_end (0:
 * none). keep_grown: a region that grew since its last count is kept as
 * a touched range (while there is room: overflowing would ask for a count
 * of all pages at the next sample).
 */
static int count_range(struct proc *p, const struct page_count_ops *ops, void *ctx,
		       uint64_t start, uint64_t end_limit, uint64_t now_ns, bool keep_grown,
		       uint64_t *open_start, uint64_t *open_end)
{
	struct region *r = regions_next(&p->regions, start);

	*open_start = *open_end = 0;
	while (r && r->start < end_limit) {
		uint64_t end = span_end(&p->regions, r, end_limit);
		int ret = ops->span ? ops->span(ctx, r->start, end) : 0;

		if (ret)
			return ret;
		for (; r && r->start < end; r = regions_next(&p->regions, r->end)) {
			int64_t got = ops->resident(ctx, r->start, r->end);

			if (got < 0)
				return (int)got;
			if (keep_grown && got > r->rss && p->ntouched < PROC_TOUCHED_MAX)
				proc_touch(p, r->start, r->end);
			r->rss = got;
			r->counted_ns = now_ns;
			/* Every page in: only another request (touching it again) can change it. */
			if ((uint64_t)got >= r->end - r->start)
				continue;
			if (!*open_end)
				*open_start = r->start;
			*open_end = r->end;
		}
	}
	return 0;
}

int proc_count_touched_by(struct proc *p, const struct page_count_ops *ops, void *ctx,
			  uint64_t now_ns)
{
	unsigned int i = 0;

	if (p->touched_full)
		return -E2BIG;
	while (i < p->ntouched) {
		struct touched_range *t = &p->touched[i];
		uint64_t open_start, open_end;
		int ret = count_range(p, ops, ctx, t->start, t->end, now_ns, false, &open_start, &open_end);

		if (ret)
			return ret;
		if (!open_end) {
			p->touched[i] = p->touched[--p->ntouched];
			continue;
		}
		if (open_start > t->start)
			t->start = open_start;
		if (open_end < t->end)
			t->end = open_end;
		i++;
	}
	return 0;
}

int proc_count_all_by(struct proc *p, const struct page_count_ops *ops, void *ctx, uint64_t now_ns)
{
	uint64_t open_start, open_end;

	/* This count covers every range kept: what is kept after it, it finds growing. */
	p->ntouched = 0;
	p->touched_full = false;
	return count_range(p, ops, ctx, 0, UINT64_MAX, now_ns, true, &open_start, &open_end);
}
