// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>

#include "reads.h"
#include "sampled.h"
#include "tracker.h"
#include "tracker_base.h"

/*
 * The share is half the bound the components keep against exact
 * attribution (docs/attribution.md, "Sampled attribution"): the drift
 * alone cannot take a component past it.
 */
#define DRIFT_SHARE	100		/* 1% of the total */
#define DRIFT_FLOOR	(64 << 10)	/* bytes: below it, never counted again */

static int64_t drift(const struct proc *p)
{
	return p->sample_total - regions_rss_total(&p->regions);
}

/* Beyond the gap of the last count of all pages, by more than the bound? */
static bool drifted(const struct proc *p)
{
	int64_t d = drift(p) - p->recount_gap;

	if (d < 0)
		d = -d;
	return d > DRIFT_FLOOR && d > p->sample_total / DRIFT_SHARE;
}

/*
 * A count of all of p's pages just ended, with VmRSS read right after it:
 * its gap is the new base. (Not after the other reads of the mappings: one
 * made while the ring buffer drained, long before this sample's VmRSS,
 * would take the pages faulted since for the gap.)
 */
static void counted_all(struct proc *p)
{
	p->recount_gap = drift(p);
	p->ntouched = 0;
	p->touched_full = false;
}

/*
 * The regions its requests touched are counted every time (a request that
 * gives pages back can hide pages taken elsewhere from the drift); all of
 * its pages only past the drift bound, or when the touched ranges
 * overflowed.
 */
void sampled_count(struct tracker *t, struct session *s, struct proc *p)
{
	double t0 = tracker_mono_s();
	int ret;

	if (p->ntouched && !p->touched_full) {
		ret = proc_count_touched(p);
		if (ret == -ESRCH || ret == -ENOENT)
			goto done;	/* gone: the next sample retires it */
		if (ret)
			p->touched_full = true;		/* not countable by range: count it all */
		else if (reads_vmrss(t, s, p) == -ESRCH)
			goto done;
		else
			s->recounts_touched++;
	}
	if (p->touched_full || drifted(p)) {
		s->recounts++;
		if (reads_mappings(t, s, p) && reads_vmrss(t, s, p) != -ESRCH)
			counted_all(p);
	}
done:
	s->recount_ns += (uint64_t)((tracker_mono_s() - t0) * 1e9);
}
