/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled attribution: the large regions still filling, each with the part
 * of it that still lacks pages. A count of a region finds its pages in
 * memory; those stay there until a request gives them back (which touches
 * the region: its window goes, process.c) or the kernel reclaims them
 * (drift, as for every page outside the counts). So the next count of the
 * region need only read [lo, hi), from its first page not in memory to the
 * end of its last one: the rest was all in. HPCCG's matrix, a 216 MiB
 * array filled but for its last few MiB, is 55,000 pages read at every
 * sample otherwise, for the pages of a tail that never fills
 * (touched_count.c, docs/attribution.md "Sampled attribution").
 */
#ifndef MEMATTR_COUNT_WINDOW_H
#define MEMATTR_COUNT_WINDOW_H

#include <stdint.h>

#define COUNT_WINDOWS_MAX	16
/* Smaller regions are read whole (a read of 256 pages is cheap; the table is not). */
#define COUNT_WINDOW_MIN	(1ULL << 20)

struct count_window {
	uint64_t start, end;	/* the region's extent when counted: a window holds for it alone */
	uint64_t lo, hi;	/* [lo, hi): what may still lack pages; every page outside it was in */
};

struct count_windows {
	struct count_window w[COUNT_WINDOWS_MAX];
	unsigned int n;
};

/* The window of the region [start, end), or NULL (none, or the region is no longer that extent). */
const struct count_window *count_window_find(const struct count_windows *ws, uint64_t start,
					     uint64_t end);

/*
 * The region [start, end) counted: what may still lack pages is [lo, hi)
 * (none: lo == hi). Kept where it saves a read and there is room (the
 * largest regions are kept when the table is full).
 */
void count_window_set(struct count_windows *ws, uint64_t start, uint64_t end, uint64_t lo,
		      uint64_t hi);

/*
 * A request over [start, end): the windows of the regions there go (pages
 * may have left). Not beside it: a mapping made next to a region leaves
 * its pages as they were, and a region that grew or merged with it is
 * another extent, which no window matches.
 */
void count_window_drop(struct count_windows *ws, uint64_t start, uint64_t end);

void count_window_clear(struct count_windows *ws);

#endif
