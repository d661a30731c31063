// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "recount_gap.h"

/*
 * The share is half the bound the components keep against exact
 * attribution (docs/attribution.md, "Sampled attribution"): the drift
 * alone cannot take a component past it.
 */
#define DRIFT_SHARE	100		/* 1% of the total */
#define DRIFT_FLOOR	(64 << 10)	/* bytes: below it, never counted again */

/*
 * The process runs while its mappings are read (tens of ms on a busy
 * node): pages it faults in a mapping already read are in VmRSS after
 * the count but in no region. Taken for the gap, they would be hidden
 * as `unattributed` until the drift moved by the whole bound again. So
 * only what both readings of VmRSS agree on is a gap: a count during
 * which VmRSS did not move sets it exactly; otherwise the old gap is
 * kept, moved only as far as needed to lie between the two readings
 * (any gap there explains the count; the rest is the process moving,
 * i.e. drift). No count is forced by this: what the process moved
 * during the count is drift the ordinary bound weighs at the next
 * sample, so it adds at most the count's own duration to the time over
 * which a growing process must move 1% to be counted again.
 */
int64_t recount_gap_after(int64_t base, int64_t gap_before, int64_t gap_after)
{
	int64_t lo = gap_before < gap_after ? gap_before : gap_after;
	int64_t hi = gap_before < gap_after ? gap_after : gap_before;

	return base < lo ? lo : base > hi ? hi : base;
}

bool recount_drifted(int64_t total, int64_t drift, int64_t gap)
{
	int64_t d = drift - gap;

	if (d < 0)
		d = -d;
	return d > DRIFT_FLOOR && d > total / DRIFT_SHARE;
}

bool recount_moved(int64_t before, int64_t after)
{
	return recount_drifted(after, after - before, 0);
}
