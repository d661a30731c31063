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
 * to the last one. A large region still filling is read, at its next
 * counts, only from its first page not in memory to its last one (its
 * window, count_window.h): the rest was in, and stays in until a request
 * over it (which drops the window) or the kernel's reclaim (drift).
 */
#include <errno.h>
#include <stdint.h>

#include "process.h"

/* Overlapping or adjacent ranges merge; past PROC_TOUCHED_MAX, "all of them" (touched_full). */
static void keep_range(struct proc *p, uint64_t start, uint64_t end)
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

/* A request: its range may have given pages back, so the regions there are read whole again. */
void proc_touch(struct proc *p, uint64_t start, uint64_t end)
{
	if (start < end)
		count_window_drop(&p->windows, start, end);
	keep_range(p, start, end);
}

/*
 * The end of the span of regions side by side from r, within [.., limit):
 * up to a region with a window (read apart, its window alone).
 */
static uint64_t span_end(struct proc *p, const struct region *r, uint64_t limit)
{
	uint64_t end = r->end;
	const struct region *q;

	while (end < limit && (q = regions_next(&p->regions, end)) && q->start == end &&
	       !count_window_find(&p->windows, q->start, q->end))
		end = q->end;
	return end;
}

/*
 * r's pages: those of [lo, hi) read, every page outside it in (its
 * window; else [lo, hi) is r). What may still lack pages is its window
 * for the next count, once a count finds it as the last one left it: a
 * region still filling is read whole (during HPCCG's and CloverLeaf's
 * fills, windows from every count came with samples far off exact,
 * docs/attribution.md). *full: r has every page in.
 */
static int count_region(struct proc *p, const struct page_count_ops *ops, void *ctx,
			struct region *r, uint64_t lo, uint64_t hi, uint64_t now_ns, bool keep_grown,
			bool *full)
{
	uint64_t len = r->end - r->start, first, last_end;
	int64_t got = ops->resident(ctx, lo, hi);
	bool steady;

	if (got < 0)
		return (int)got;
	got += (int64_t)(len - (hi - lo));
	if (keep_grown && got > r->rss && p->ntouched < PROC_TOUCHED_MAX)
		keep_range(p, r->start, r->end);
	steady = got == r->rss;
	r->rss = got;
	r->counted_ns = now_ns;
	*full = (uint64_t)got >= len;
	/* A region still filling is read whole, as before windows; one that stopped, its window. */
	if (*full)
		first = last_end = 0;
	else if (!steady || !ops->absent || !ops->absent(ctx, lo, hi, &first, &last_end))
		first = r->start, last_end = r->end;
	count_window_set(&p->windows, r->start, r->end, first, last_end);
	return 0;
}

/*
 * Count the regions in [start, end), span by span, each whole (a region
 * with a window: its window, the rest of it known in); the first and last
 * region not wholly in memory in *open_start and *open_end (0: none).
 * keep_grown: a region that grew since its last count is kept as a
 * touched range (while there is room: overflowing would ask for a count
 * of all pages at the next sample).
 */
static int count_range(struct proc *p, const struct page_count_ops *ops, void *ctx,
		       uint64_t start, uint64_t end_limit, uint64_t now_ns, bool keep_grown,
		       uint64_t *open_start, uint64_t *open_end)
{
	struct region *r = regions_next(&p->regions, start);

	*open_start = *open_end = 0;
	while (r && r->start < end_limit) {
		const struct count_window *w = count_window_find(&p->windows, r->start, r->end);
		uint64_t from = w ? w->lo : r->start, end = w ? w->hi : span_end(p, r, end_limit);
		int ret = ops->span ? ops->span(ctx, from, end) : 0;
		bool full;

		if (ret)
			return ret;
		p->count_read_bytes += end - from;
		if (w)
			end = r->end;	/* the region alone */
		for (; r && r->start < end; r = regions_next(&p->regions, r->end)) {
			ret = w ? count_region(p, ops, ctx, r, w->lo, w->hi, now_ns, keep_grown, &full) :
				  count_region(p, ops, ctx, r, r->start, r->end, now_ns, keep_grown, &full);
			if (ret)
				return ret;
			/* Every page in: only another request (touching it again) can change it. */
			if (full)
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
