// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region table: lookups, mapping over and unmapping parts of regions,
 * charging deltas over ranges (with clamping), mremap moves, smaps resyncs,
 * the per-owner sums with PSS scaling, and the bound on the table size.
 * Owners are plain integers here: the table never looks names up.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "regions.h"

#define PG	0x1000ULL

struct want {
	uint64_t start, end;
	comp_id owner;
	int64_t rss;
};

/* The whole table, in order, must be exactly w. */
static void check(struct region_table *t, const struct want *w, size_t n)
{
	assert_int_equal(t->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct region *r = &t->r[i];

		if (r->start != w[i].start || r->end != w[i].end ||
		    r->owner != w[i].owner || r->rss != w[i].rss)
			print_error("region %zu: [%#llx, %#llx) owner %u rss %lld\n", i,
				    (unsigned long long)r->start, (unsigned long long)r->end,
				    r->owner, (long long)r->rss);
		assert_int_equal(r->start, w[i].start);
		assert_int_equal(r->end, w[i].end);
		assert_int_equal(r->owner, w[i].owner);
		assert_int_equal(r->rss, w[i].rss);
	}
}

#define CHECK(t, ...) do {						\
	const struct want w_[] = { __VA_ARGS__ };			\
	check((t), w_, sizeof(w_) / sizeof(w_[0]));			\
} while (0)

static void set_rss(struct region_table *t, uint64_t addr, int64_t rss)
{
	struct region *r = regions_find(t, addr);

	assert_non_null(r);
	r->rss = rss;
}

static int64_t rss_at(struct region_table *t, uint64_t addr)
{
	struct region *r = regions_find(t, addr);

	assert_non_null(r);
	return r->rss;
}

static void test_find(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_null(regions_find(&t, 0));
	assert_null(regions_find(&t, 0x1000));
	assert_int_equal(regions_map(&t, 3 * PG, 5 * PG, 2, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 1 * PG, 2 * PG, 1, REGION_FILE, NULL), 0);
	assert_int_equal(regions_map(&t, 5 * PG, 6 * PG, 3, 0, NULL), 0);
	CHECK(&t, { PG, 2 * PG, 1, 0 }, { 3 * PG, 5 * PG, 2, 0 }, { 5 * PG, 6 * PG, 3, 0 });
	assert_int_equal(t.r[0].flags, REGION_FILE);
	assert_null(regions_find(&t, PG - 1));
	assert_ptr_equal(regions_find(&t, PG), &t.r[0]);
	assert_ptr_equal(regions_find(&t, 2 * PG - 1), &t.r[0]);
	assert_null(regions_find(&t, 2 * PG));		/* end is exclusive */
	assert_null(regions_find(&t, 3 * PG - 1));
	assert_ptr_equal(regions_find(&t, 3 * PG), &t.r[1]);
	assert_ptr_equal(regions_find(&t, 5 * PG - 1), &t.r[1]);
	assert_ptr_equal(regions_find(&t, 5 * PG), &t.r[2]);
	assert_null(regions_find(&t, 6 * PG));
	assert_null(regions_find(&t, UINT64_MAX));
	/* Empty or inverted ranges are refused and change nothing. */
	assert_int_equal(regions_map(&t, 8 * PG, 8 * PG, 1, 0, NULL), -1);
	assert_int_equal(regions_map(&t, 9 * PG, 8 * PG, 1, 0, NULL), -1);
	assert_int_equal(t.n, 3);
	regions_clear(&t);
	assert_int_equal(t.n, 0);
	assert_null(regions_find(&t, PG));
	regions_free(&t);
	assert_null(t.r);
}

/* Many regions with holes: every boundary and hole is found right. */
static void test_find_many(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	/* Insert out of order so the table has to sort them. */
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t k = (i * 7919) % 1000;

		assert_int_equal(regions_map(&t, (3 * k + 1) * PG, (3 * k + 3) * PG,
					     (comp_id)(k % 100), 0, NULL), 0);
	}
	assert_int_equal(t.n, 1000);
	for (uint64_t k = 0; k < 1000; k++) {
		struct region *r = regions_find(&t, (3 * k + 1) * PG);

		assert_non_null(r);
		assert_int_equal(r->start, (3 * k + 1) * PG);
		assert_int_equal(r->owner, k % 100);
		assert_ptr_equal(regions_find(&t, (3 * k + 3) * PG - 1), r);
		assert_null(regions_find(&t, 3 * k * PG));
		assert_null(regions_find(&t, (3 * k + 1) * PG - 1));
	}
	regions_free(&t);
}

static void test_map_over(void **state)
{
	struct region_table t;
	int64_t dropped = -1;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, PG, 5 * PG, 1, 0, &dropped), 0);
	assert_int_equal(dropped, 0);
	set_rss(&t, PG, 4000);

	/* Strictly inside: the old region is split around the new one. */
	assert_int_equal(regions_map(&t, 2 * PG, 3 * PG, 2, REGION_FROM_EVENT, &dropped), 0);
	assert_int_equal(dropped, 1000);
	CHECK(&t, { PG, 2 * PG, 1, 1000 }, { 2 * PG, 3 * PG, 2, 0 }, { 3 * PG, 5 * PG, 1, 2000 });
	assert_int_equal(t.r[1].flags, REGION_FROM_EVENT);

	/* Over the tail of one and the head of the next. */
	set_rss(&t, 2 * PG, 800);
	assert_int_equal(regions_map(&t, 2 * PG + PG / 2, 4 * PG, 3, 0, &dropped), 0);
	assert_int_equal(dropped, 400 + 1000);
	CHECK(&t, { PG, 2 * PG, 1, 1000 }, { 2 * PG, 2 * PG + PG / 2, 2, 400 },
	      { 2 * PG + PG / 2, 4 * PG, 3, 0 }, { 4 * PG, 5 * PG, 1, 1000 });

	/* Exactly over one region, and then over everything and beyond. */
	assert_int_equal(regions_map(&t, 4 * PG, 5 * PG, 4, 0, &dropped), 0);
	assert_int_equal(dropped, 1000);
	CHECK(&t, { PG, 2 * PG, 1, 1000 }, { 2 * PG, 2 * PG + PG / 2, 2, 400 },
	      { 2 * PG + PG / 2, 4 * PG, 3, 0 }, { 4 * PG, 5 * PG, 4, 0 });
	assert_int_equal(regions_map(&t, 0, 8 * PG, 5, 0, &dropped), 0);
	assert_int_equal(dropped, 1400);
	CHECK(&t, { 0, 8 * PG, 5, 0 });

	/* NULL dropped_rss is allowed. */
	assert_int_equal(regions_map(&t, 0, PG, 6, 0, NULL), 0);
	CHECK(&t, { 0, PG, 6, 0 }, { PG, 8 * PG, 5, 0 });
	regions_free(&t);
}

/* pss and rss_at_sync are prorated along with rss when a region is cut. */
static void test_map_prorates_pss(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_sync(&t, 0, 4 * PG, 4000, 2000, 1, 0), 0);
	assert_int_equal(regions_map(&t, 0, PG, 2, 0, NULL), 0);
	CHECK(&t, { 0, PG, 2, 0 }, { PG, 4 * PG, 1, 3000 });
	assert_int_equal(t.r[1].pss, 1500);
	assert_int_equal(t.r[1].rss_at_sync, 3000);
	assert_int_equal(t.r[0].pss, 0);
	assert_int_equal(t.r[0].rss_at_sync, 0);
	regions_free(&t);
}

/*
 * An unmap that cuts a region (a heap trimmed in the middle of one brk
 * extension, a partial munmap) splits its figure by length; the kernel's
 * own delta says how much of it was really in the part that goes. What it
 * did not free stays with the part that remains, and what it freed beyond
 * the part's share came from there: the owner's figure keeps its pages.
 */
static void test_unmap_charged_edges(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);

	/* The resident pages were in the lower half: trimming the upper half frees none. */
	assert_int_equal(regions_map(&t, 0, 8 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 4 * PG);
	assert_int_equal(regions_unmap_charged(&t, 4 * PG, 8 * PG, 0), 0);
	CHECK(&t, { 0, 4 * PG, 1, 4 * PG });

	/* They were all in the part that goes: the part that stays holds none. */
	regions_unmap(&t, 0, 8 * PG);
	assert_int_equal(regions_map(&t, 0, 8 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 4 * PG);
	assert_int_equal(regions_unmap_charged(&t, 2 * PG, 8 * PG, -4 * PG), 0);
	CHECK(&t, { 0, 2 * PG, 1, 0 });
	regions_unmap(&t, 0, 8 * PG);

	assert_int_equal(regions_map(&t, 0, 8 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 4 * PG);
	assert_int_equal(regions_unmap_charged(&t, 0, 4 * PG, -3 * PG), 0);
	CHECK(&t, { 4 * PG, 8 * PG, 1, PG });

	/* A hole that frees nothing: both sides keep what it was given, by length. */
	regions_unmap(&t, 0, 8 * PG);
	assert_int_equal(regions_map(&t, 0, 8 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 2 * PG);
	assert_int_equal(regions_unmap_charged(&t, 2 * PG, 6 * PG, 0), 0);
	CHECK(&t, { 0, 2 * PG, 1, PG }, { 6 * PG, 8 * PG, 1, PG });

	/*
	 * Two regions cut: each side settles with its own region, and what
	 * stays is what was there less what the kernel freed.
	 */
	regions_unmap(&t, 0, 8 * PG);
	assert_int_equal(regions_map(&t, 0, 4 * PG, 1, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 4 * PG, 8 * PG, 2, 0, NULL), 0);
	set_rss(&t, 0, 4 * PG);
	set_rss(&t, 4 * PG, 0);
	assert_int_equal(regions_unmap_charged(&t, 2 * PG, 6 * PG, -PG), 0);
	CHECK(&t, { 0, 2 * PG, 1, 3 * PG }, { 6 * PG, 8 * PG, 2, 0 });
	set_rss(&t, 6 * PG, 2 * PG);
	assert_int_equal(regions_unmap_charged(&t, PG, 7 * PG, -2 * PG), 0);
	assert_int_equal(rss_at(&t, 0) + rss_at(&t, 7 * PG), 3 * PG);

	/* More freed than the region held (pages the events never saw): the rest is returned. */
	regions_unmap(&t, 0, 8 * PG);
	assert_int_equal(regions_map(&t, 0, 8 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 2 * PG);
	assert_int_equal(regions_unmap_charged(&t, 0, 8 * PG, -3 * PG), -PG);
	assert_int_equal(t.n, 0);
	regions_free(&t);
}

static void test_unmap(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, 0, 8 * PG, 1, REGION_SHARED, NULL), 0);
	set_rss(&t, 0, 8000);

	/* A hole in the middle leaves two regions, same owner and flags. */
	assert_int_equal(regions_unmap(&t, 2 * PG, 3 * PG), 1000);
	CHECK(&t, { 0, 2 * PG, 1, 2000 }, { 3 * PG, 8 * PG, 1, 5000 });
	assert_int_equal(t.r[0].flags, REGION_SHARED);
	assert_int_equal(t.r[1].flags, REGION_SHARED);
	assert_null(regions_find(&t, 2 * PG));

	/* The head of one region, the tail of another, and the hole between. */
	assert_int_equal(regions_unmap(&t, PG, 4 * PG), 1000 + 1000);
	CHECK(&t, { 0, PG, 1, 1000 }, { 4 * PG, 8 * PG, 1, 4000 });

	/* Nothing there. */
	assert_int_equal(regions_unmap(&t, PG, 4 * PG), 0);
	assert_int_equal(regions_unmap(&t, 5 * PG, 5 * PG), 0);
	CHECK(&t, { 0, PG, 1, 1000 }, { 4 * PG, 8 * PG, 1, 4000 });

	/* Several whole regions and a piece. */
	assert_int_equal(regions_map(&t, 9 * PG, 10 * PG, 2, 0, NULL), 0);
	set_rss(&t, 9 * PG, 7);
	assert_int_equal(regions_unmap(&t, 0, 6 * PG), 1000 + 2000);
	CHECK(&t, { 6 * PG, 8 * PG, 1, 2000 }, { 9 * PG, 10 * PG, 2, 7 });
	assert_int_equal(regions_unmap(&t, 0, 100 * PG), 2007);
	assert_int_equal(t.n, 0);
	regions_free(&t);
}

static void test_charge(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, 0, 1000, 1, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 1000, 2000, 2, 0, NULL), 0);

	/* No rss anywhere: by overlap length (1000 of A, 500 of B). */
	assert_int_equal(regions_charge_range(&t, 0, 1500, 300), 0);
	CHECK(&t, { 0, 1000, 1, 200 }, { 1000, 2000, 2, 100 });

	/* By rss inside the range: A holds 200*500/1000 there, B 100*500/1000. */
	assert_int_equal(regions_charge_range(&t, 500, 1500, 30), 0);
	CHECK(&t, { 0, 1000, 1, 220 }, { 1000, 2000, 2, 110 });

	/* Rounding never loses a byte: three equal holders of 99 share 100. */
	assert_int_equal(regions_map(&t, 2000, 3000, 3, 0, NULL), 0);
	set_rss(&t, 0, 99);
	set_rss(&t, 1000, 99);
	set_rss(&t, 2000, 99);
	assert_int_equal(regions_charge_range(&t, 0, 3000, 100), 0);
	CHECK(&t, { 0, 1000, 1, 132 }, { 1000, 2000, 2, 132 }, { 2000, 3000, 3, 133 });

	/* Negative. */
	assert_int_equal(regions_charge_range(&t, 0, 3000, -100), 0);
	CHECK(&t, { 0, 1000, 1, 99 }, { 1000, 2000, 2, 99 }, { 2000, 3000, 3, 99 });

	/* Zero, empty range, and a range no region touches. */
	assert_int_equal(regions_charge_range(&t, 0, 3000, 0), 0);
	assert_int_equal(regions_charge_range(&t, 500, 500, 7), 7);
	assert_int_equal(regions_charge_range(&t, 5000, 9000, 4096), 4096);
	assert_int_equal(regions_charge_range(&t, 5000, 9000, -4096), -4096);
	/* Partly covered: all of it goes to the covered part. */
	assert_int_equal(regions_charge_range(&t, 2500, 9000, 50), 0);
	CHECK(&t, { 0, 1000, 1, 99 }, { 1000, 2000, 2, 99 }, { 2000, 3000, 3, 149 });
	regions_free(&t);
}

static void test_charge_clamp(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, 0, 1000, 1, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 1000, 2000, 2, 0, NULL), 0);
	set_rss(&t, 0, 10);
	set_rss(&t, 1000, 1000);

	/*
	 * Weights 10 (all of A) and 100 (a tenth of B): A's share of -200 is
	 * -18, more than it holds; the 8 it lacks come out of B instead.
	 */
	assert_int_equal(regions_charge_range(&t, 0, 1100, -200), 0);
	CHECK(&t, { 0, 1000, 1, 0 }, { 1000, 2000, 2, 810 });

	/* More freed than everything there holds: zero, and the rest returned. */
	set_rss(&t, 0, 10);
	assert_int_equal(regions_charge_range(&t, 0, 2000, -2000), -1180);
	CHECK(&t, { 0, 1000, 1, 0 }, { 1000, 2000, 2, 0 });

	/* Spread over the second pass in proportion to what is left. */
	assert_int_equal(regions_map(&t, 2000, 3000, 3, 0, NULL), 0);
	set_rss(&t, 0, 1);
	set_rss(&t, 1000, 300);
	set_rss(&t, 2000, 100);
	/* Range [0, 1010): weights 1 and 3; A's share -25 leaves 24 to find. */
	assert_int_equal(regions_charge_range(&t, 0, 1010, -100), 0);
	CHECK(&t, { 0, 1000, 1, 0 }, { 1000, 2000, 2, 201 }, { 2000, 3000, 3, 100 });
	regions_free(&t);
}

static void test_move(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, 0x10 * PG, 0x12 * PG, 1, REGION_FROM_EVENT, NULL), 0);
	set_rss(&t, 0x10 * PG, 8192);

	/* Grow in place: the new part belongs to the same region, rss unchanged. */
	assert_int_equal(regions_move(&t, 0x10 * PG, 2 * PG, 0x10 * PG, 4 * PG), 0);
	CHECK(&t, { 0x10 * PG, 0x14 * PG, 1, 8192 });
	assert_int_equal(t.r[0].flags, REGION_FROM_EVENT);

	/* Shrink in place: the rss stays (the caller charged the freed pages). */
	assert_int_equal(regions_move(&t, 0x10 * PG, 4 * PG, 0x10 * PG, PG), 0);
	CHECK(&t, { 0x10 * PG, 0x11 * PG, 1, 8192 });

	/* Two pieces move to a new place, over the middle of a stale region. */
	assert_int_equal(regions_map(&t, 0x11 * PG, 0x12 * PG, 2, 0, NULL), 0);
	set_rss(&t, 0x11 * PG, 100);
	assert_int_equal(regions_map(&t, 0x40 * PG, 0x48 * PG, 3, 0, NULL), 0);
	set_rss(&t, 0x40 * PG, 800);
	assert_int_equal(regions_move(&t, 0x10 * PG, 2 * PG, 0x42 * PG, 2 * PG), 0);
	CHECK(&t, { 0x40 * PG, 0x42 * PG, 3, 200 }, { 0x42 * PG, 0x43 * PG, 1, 8192 },
	      { 0x43 * PG, 0x44 * PG, 2, 100 }, { 0x44 * PG, 0x48 * PG, 3, 400 });
	assert_null(regions_find(&t, 0x10 * PG));
	assert_null(regions_find(&t, 0x11 * PG));

	/* Move and grow: the last piece takes the new part. */
	assert_int_equal(regions_move(&t, 0x42 * PG, 2 * PG, 0x80 * PG, 5 * PG), 0);
	CHECK(&t, { 0x40 * PG, 0x42 * PG, 3, 200 }, { 0x44 * PG, 0x48 * PG, 3, 400 },
	      { 0x80 * PG, 0x81 * PG, 1, 8192 }, { 0x81 * PG, 0x85 * PG, 2, 100 });

	/* Move and shrink past a piece: its rss is spread over what is kept. */
	assert_int_equal(regions_move(&t, 0x80 * PG, 5 * PG, 0x90 * PG, PG / 2), 0);
	CHECK(&t, { 0x40 * PG, 0x42 * PG, 3, 200 }, { 0x44 * PG, 0x48 * PG, 3, 400 },
	      { 0x90 * PG, 0x90 * PG + PG / 2, 1, 8292 });

	/* Old and new ranges overlapping. */
	assert_int_equal(regions_move(&t, 0x44 * PG, 4 * PG, 0x46 * PG, 4 * PG), 0);
	CHECK(&t, { 0x40 * PG, 0x42 * PG, 3, 200 }, { 0x46 * PG, 0x4a * PG, 3, 400 },
	      { 0x90 * PG, 0x90 * PG + PG / 2, 1, 8292 });

	/* A part of a region moves; the rest stays. */
	assert_int_equal(regions_move(&t, 0x40 * PG, PG, 0x60 * PG, PG), 0);
	CHECK(&t, { 0x41 * PG, 0x42 * PG, 3, 100 }, { 0x46 * PG, 0x4a * PG, 3, 400 },
	      { 0x60 * PG, 0x61 * PG, 3, 100 }, { 0x90 * PG, 0x90 * PG + PG / 2, 1, 8292 });

	/* Nothing known at the source: the destination is still cleared. */
	assert_int_equal(regions_move(&t, 0x200 * PG, PG, 0x46 * PG, PG), 0);
	CHECK(&t, { 0x41 * PG, 0x42 * PG, 3, 100 }, { 0x47 * PG, 0x4a * PG, 3, 300 },
	      { 0x60 * PG, 0x61 * PG, 3, 100 }, { 0x90 * PG, 0x90 * PG + PG / 2, 1, 8292 });

	/* old_len 0 duplicates a shared mapping: same owner, no rss. */
	assert_int_equal(regions_move(&t, 0x60 * PG, 0, 0x70 * PG, 2 * PG), 0);
	assert_int_equal(regions_find(&t, 0x70 * PG)->owner, 3);
	assert_int_equal(rss_at(&t, 0x71 * PG), 0);
	assert_int_equal(regions_move(&t, 0x300 * PG, 0, 0x310 * PG, PG), -1);
	assert_int_equal(regions_move(&t, 0x60 * PG, PG, 0x62 * PG, 0), -1);
	assert_int_equal(t.n, 5);
	regions_free(&t);
}

static void test_sync(void **state)
{
	struct region_table t;
	struct region *r;

	(void)state;
	regions_init(&t, 0);

	/* Nothing known: the entry becomes one region of owner_if_new. */
	assert_int_equal(regions_sync(&t, 0, 3 * PG, 300, 150, 5, REGION_FILE), 0);
	CHECK(&t, { 0, 3 * PG, 5, 300 });
	assert_int_equal(t.r[0].pss, 150);
	assert_int_equal(t.r[0].rss_at_sync, 300);
	assert_int_equal(t.r[0].flags, REGION_FILE);

	/* No rss held: by length, gaps filled with new regions. */
	regions_clear(&t);
	assert_int_equal(regions_map(&t, 0, PG, 1, REGION_FROM_EVENT, NULL), 0);
	assert_int_equal(regions_map(&t, 2 * PG, 3 * PG, 2, 0, NULL), 0);
	assert_int_equal(regions_sync(&t, 0, 4 * PG, 400, 40, 9, REGION_SHARED), 0);
	CHECK(&t, { 0, PG, 1, 100 }, { PG, 2 * PG, 9, 100 }, { 2 * PG, 3 * PG, 2, 100 },
	      { 3 * PG, 4 * PG, 9, 100 });
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(t.r[i].pss, 10);
		assert_int_equal(t.r[i].rss_at_sync, 100);
	}
	/* Known regions keep their owner and flags; new ones take the entry's. */
	assert_int_equal(t.r[0].flags, REGION_FROM_EVENT);
	assert_int_equal(t.r[1].flags, REGION_SHARED);
	assert_int_equal(t.r[2].flags, 0);

	/* Partial coverage: by current rss, the parts outside split off untouched. */
	regions_clear(&t);
	assert_int_equal(regions_map(&t, PG, 3 * PG, 1, 0, NULL), 0);
	set_rss(&t, PG, 100);
	assert_int_equal(regions_map(&t, 6 * PG, 7 * PG, 3, 0, NULL), 0);
	set_rss(&t, 6 * PG, 30);
	assert_int_equal(regions_sync(&t, 2 * PG, 5 * PG, 8000, 4001, 7, REGION_FILE), 0);
	CHECK(&t, { PG, 2 * PG, 1, 50 }, { 2 * PG, 3 * PG, 1, 8000 }, { 3 * PG, 5 * PG, 7, 0 },
	      { 6 * PG, 7 * PG, 3, 30 });
	assert_int_equal(t.r[1].pss, 4001);
	assert_int_equal(t.r[2].pss, 0);
	assert_int_equal(t.r[0].rss_at_sync, 0);

	/* Proportions to current rss, exact in sum. */
	set_rss(&t, 2 * PG, 1);
	set_rss(&t, 3 * PG, 2);
	assert_int_equal(regions_sync(&t, 2 * PG, 5 * PG, 1000, 100, 7, 0), 0);
	CHECK(&t, { PG, 2 * PG, 1, 50 }, { 2 * PG, 3 * PG, 1, 333 }, { 3 * PG, 5 * PG, 7, 667 },
	      { 6 * PG, 7 * PG, 3, 30 });
	assert_int_equal(t.r[1].pss + t.r[2].pss, 100);
	assert_int_equal(t.r[1].pss, 33);

	/* Negative figures from a bad read are taken as zero. */
	assert_int_equal(regions_sync(&t, 6 * PG, 7 * PG, -5, -5, 7, 0), 0);
	r = regions_find(&t, 6 * PG);
	assert_int_equal(r->rss, 0);
	assert_int_equal(r->pss, 0);
	assert_int_equal(regions_sync(&t, 7 * PG, 7 * PG, 1, 1, 7, 0), -1);
	regions_free(&t);
}

static void test_sync_begin_end(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, 0, PG, 1, 0, NULL), 0);
	assert_int_equal(regions_map(&t, PG, 2 * PG, 2, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 4 * PG, 6 * PG, 3, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 8 * PG, 9 * PG, 4, 0, NULL), 0);

	regions_sync_begin(&t);
	assert_int_equal(regions_sync(&t, 0, PG, 10, 10, 0, 0), 0);
	/* Only the first half of region 3 is still mapped. */
	assert_int_equal(regions_sync(&t, 4 * PG, 5 * PG, 20, 20, 0, 0), 0);
	/* A mapping made while the sync runs is not stale. */
	assert_int_equal(regions_map(&t, 10 * PG, 11 * PG, 5, 0, NULL), 0);
	regions_sync_end(&t, NULL, NULL);
	CHECK(&t, { 0, PG, 1, 10 }, { 4 * PG, 5 * PG, 3, 20 }, { 10 * PG, 11 * PG, 5, 0 });

	/* An empty maps read drops everything. */
	regions_sync_begin(&t);
	regions_sync_end(&t, NULL, NULL);
	assert_int_equal(t.n, 0);
	regions_free(&t);
}

static void test_sum(void **state)
{
	struct region_table t;
	int64_t rss[4] = { 0 }, pss[4] = { 0 };

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_sync(&t, 0, PG, 1000, 500, 1, 0), 0);
	assert_int_equal(regions_sync(&t, PG, 2 * PG, 300, 300, 1, 0), 0);
	assert_int_equal(regions_sync(&t, 2 * PG, 3 * PG, 90, 30, 2, 0), 0);
	assert_int_equal(regions_map(&t, 4 * PG, 5 * PG, 3, 0, NULL), 0);
	/* An owner beyond the arrays lands in unattributed. */
	assert_int_equal(regions_map(&t, 6 * PG, 7 * PG, 200, 0, NULL), 0);
	set_rss(&t, 6 * PG, 5);

	regions_sum(&t, rss, pss, 4);
	assert_int_equal(rss[0], 5);
	assert_int_equal(pss[0], 5);
	assert_int_equal(rss[1], 1300);
	assert_int_equal(pss[1], 800);
	assert_int_equal(rss[2], 90);
	assert_int_equal(pss[2], 30);
	assert_int_equal(rss[3], 0);
	assert_int_equal(pss[3], 0);

	/* Between reads PSS follows rss; a new region's PSS is its rss. */
	set_rss(&t, 0, 2000);
	set_rss(&t, 2 * PG, 45);
	set_rss(&t, 4 * PG, 4096);
	memset(rss, 0, sizeof(rss));
	memset(pss, 0, sizeof(pss));
	regions_sum(&t, rss, pss, 4);
	assert_int_equal(rss[1], 2300);
	assert_int_equal(pss[1], 1000 + 300);
	assert_int_equal(rss[2], 45);
	assert_int_equal(pss[2], 15);
	assert_int_equal(rss[3], 4096);
	assert_int_equal(pss[3], 4096);

	/* Sums add to what is there. */
	regions_sum(&t, rss, pss, 4);
	assert_int_equal(rss[1], 4600);

	/* Synced with nothing resident, then faulted in: PSS is the rss. */
	regions_clear(&t);
	memset(rss, 0, sizeof(rss));
	memset(pss, 0, sizeof(pss));
	assert_int_equal(regions_sync(&t, 0, PG, 0, 0, 2, 0), 0);
	set_rss(&t, 0, 4096);
	regions_sum(&t, rss, pss, 4);
	assert_int_equal(pss[2], 4096);
	regions_free(&t);
}

/* An arena made writable piece by piece: each piece is its requester's. */
static void test_set_owner(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 0);
	assert_int_equal(regions_map(&t, 0, 16 * PG, 0, 0, NULL), 0);
	set_rss(&t, 0, 16 * 4096);
	/* The middle changes hands; what it holds (prorated) goes with it. */
	assert_int_equal(regions_set_owner(&t, 4 * PG, 8 * PG, 5, false), 0);
	CHECK(&t, { 0, 4 * PG, 0, 4 * 4096 }, { 4 * PG, 8 * PG, 5, 4 * 4096 },
	      { 8 * PG, 16 * PG, 0, 8 * 4096 });
	/* Across a hole and two regions: holes stay holes. */
	assert_int_equal(regions_map(&t, 20 * PG, 22 * PG, 1, 0, NULL), 0);
	assert_int_equal(regions_set_owner(&t, 6 * PG, 21 * PG, 7, false), 0);
	CHECK(&t, { 0, 4 * PG, 0, 4 * 4096 }, { 4 * PG, 6 * PG, 5, 2 * 4096 },
	      { 6 * PG, 8 * PG, 7, 2 * 4096 }, { 8 * PG, 16 * PG, 7, 8 * 4096 },
	      { 20 * PG, 21 * PG, 7, 0 }, { 21 * PG, 22 * PG, 1, 0 });
	assert_int_equal(regions_set_owner(&t, 3 * PG, 3 * PG, 1, false), -1);
	/* Only what nobody owns: region 0 (unowned) yes, 5 no, a file region no. */
	assert_int_equal(regions_map(&t, 30 * PG, 31 * PG, 0, REGION_FILE, NULL), 0);
	assert_int_equal(regions_set_owner(&t, 2 * PG, 5 * PG, 9, true), 0);
	assert_int_equal(regions_set_owner(&t, 30 * PG, 31 * PG, 9, true), 0);
	CHECK(&t, { 0, 2 * PG, 0, 2 * 4096 }, { 2 * PG, 4 * PG, 9, 2 * 4096 },
	      { 4 * PG, 5 * PG, 5, 4096 }, { 5 * PG, 6 * PG, 5, 4096 },
	      { 6 * PG, 8 * PG, 7, 2 * 4096 }, { 8 * PG, 16 * PG, 7, 8 * 4096 },
	      { 20 * PG, 21 * PG, 7, 0 }, { 21 * PG, 22 * PG, 1, 0 }, { 30 * PG, 31 * PG, 0, 0 });

	/* Flags follow the range, whole regions at a time. */
	regions_set_flags(&t, 20 * PG, 22 * PG, REGION_EXEC, true);
	assert_true(regions_find(&t, 20 * PG)->flags & REGION_EXEC);
	assert_true(regions_find(&t, 21 * PG)->flags & REGION_EXEC);
	assert_false(regions_find(&t, 8 * PG)->flags & REGION_EXEC);
	regions_set_flags(&t, 21 * PG, 22 * PG, REGION_EXEC, false);
	assert_true(regions_find(&t, 20 * PG)->flags & REGION_EXEC);
	assert_false(regions_find(&t, 21 * PG)->flags & REGION_EXEC);
	regions_free(&t);
}

/*
 * A process's new mappings mostly go below all the others (the kernel
 * maps top-down): a change at the bottom of a big table moves the
 * regions below it, not the whole table (a storm of 60,000 mappings had
 * the node service copying the table twice per record). The regions
 * above stay where they are; the table's contents stay right, and a
 * copy into a table with free slots before it holds them all.
 */
static void test_front_changes_move_few(void **state)
{
	struct region_table t, copy;
	const struct region *top;
	size_t n = 2000;

	(void)state;
	regions_init(&t, 0);
	regions_init(&copy, 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(regions_map(&t, (100 + 2 * i) * PG, (101 + 2 * i) * PG,
					     (comp_id)(i % 7), 0, NULL), 0);
	/* A storm's turn: map below all, fault, unmap. Room is made before r once. */
	assert_int_equal(regions_map(&t, 90 * PG, 91 * PG, 3, 0, NULL), 0);
	regions_unmap(&t, 90 * PG, 91 * PG);
	top = regions_find(&t, (98 + 2 * n) * PG);
	assert_non_null(top);
	for (int turn = 0; turn < 500; turn++) {
		uint64_t at = (uint64_t)(90 - turn % 50) * PG;

		assert_int_equal(regions_map(&t, at, at + PG, 3, 0, NULL), 0);
		assert_ptr_equal(regions_find(&t, (98 + 2 * n) * PG), top);
		regions_unmap(&t, at, at + PG);
	}
	for (int k = 0; k < 25; k++)
		assert_int_equal(regions_map(&t, (uint64_t)(90 - 2 * k) * PG,
					     (uint64_t)(91 - 2 * k) * PG, 3, 0, NULL), 0);
	assert_int_equal(t.n, n + 25);
	for (size_t i = 0; i < n; i++) {
		const struct region *r = &t.r[25 + i];

		assert_int_equal(r->start, (100 + 2 * i) * PG);
		assert_int_equal(r->owner, (comp_id)(i % 7));
	}
	/* Free slots on both sides: a copy and a resync with gaps use them all. */
	regions_unmap(&t, 0, 100 * PG);
	assert_int_equal(regions_copy(&copy, &t), 0);
	assert_int_equal(copy.n, n);
	assert_int_equal(regions_sync(&t, 0, (100 + 2 * n) * PG, 0, 0, 9, 0), 0);
	assert_int_equal(t.n, 2 * n + 1);
	assert_int_equal(regions_find(&t, 0)->owner, 9);
	assert_int_equal(regions_find(&t, 101 * PG)->owner, 9);
	assert_int_equal(regions_find(&t, 102 * PG)->owner, 1);
	regions_free(&t);
	regions_free(&copy);
}

/* A forked child starts with its parent's table; the two then part ways. */
static void test_copy(void **state)
{
	struct region_table parent, child;

	(void)state;
	regions_init(&parent, 0);
	regions_init(&child, 0);
	assert_int_equal(regions_map(&child, 90 * PG, 91 * PG, 9, 0, NULL), 0);
	assert_int_equal(regions_map(&parent, 0, 4 * PG, 1, REGION_EXEC, NULL), 0);
	assert_int_equal(regions_map(&parent, 8 * PG, 9 * PG, 2, 0, NULL), 0);
	set_rss(&parent, 0, 3 * 4096);
	assert_int_equal(regions_copy(&child, &parent), 0);
	CHECK(&child, { 0, 4 * PG, 1, 3 * 4096 }, { 8 * PG, 9 * PG, 2, 0 });
	assert_true(regions_find(&child, 0)->flags & REGION_EXEC);
	regions_unmap(&child, 8 * PG, 9 * PG);
	assert_non_null(regions_find(&parent, 8 * PG));
	regions_free(&parent);
	regions_free(&child);
}

static void test_bound(void **state)
{
	struct region_table t;
	int64_t dropped = -1;

	(void)state;
	regions_init(&t, 3);
	assert_int_equal(regions_map(&t, 0, PG, 1, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 2 * PG, 3 * PG, 2, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 4 * PG, 5 * PG, 3, REGION_FILE, NULL), 0);
	set_rss(&t, 4 * PG, 50);

	/* A fourth mapping folds into the region it touches, taking its owner. */
	assert_int_equal(regions_map(&t, 5 * PG, 6 * PG, 4, 0, NULL), 0);
	CHECK(&t, { 0, PG, 1, 0 }, { 2 * PG, 3 * PG, 2, 0 }, { 4 * PG, 6 * PG, 3, 50 });
	assert_int_equal(t.r[2].flags, REGION_FILE);
	/* Touching only the one above: folds into that one. */
	assert_int_equal(regions_map(&t, 3 * PG + PG / 2, 4 * PG, 4, 0, NULL), 0);
	CHECK(&t, { 0, PG, 1, 0 }, { 2 * PG, 3 * PG, 2, 0 }, { 3 * PG + PG / 2, 6 * PG, 3, 50 });
	/* Touching nothing: into the one below, across the hole. */
	assert_int_equal(regions_map(&t, 10 * PG, 11 * PG, 4, 0, NULL), 0);
	CHECK(&t, { 0, PG, 1, 0 }, { 2 * PG, 3 * PG, 2, 0 }, { 3 * PG + PG / 2, 11 * PG, 3, 50 });
	assert_int_equal(t.r[2].owner, 3);

	/* Same owner and flags, touching: merged with nothing lost. */
	regions_free(&t);
	regions_init(&t, 2);
	assert_int_equal(regions_map(&t, 0, PG, 1, 0, NULL), 0);
	assert_int_equal(regions_map(&t, PG, 2 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 7);
	set_rss(&t, PG, 8);
	assert_int_equal(regions_map(&t, 8 * PG, 9 * PG, 2, 0, NULL), 0);
	CHECK(&t, { 0, 2 * PG, 1, 15 }, { 8 * PG, 9 * PG, 2, 0 });

	/* A hole cut at the bound is mended: the table only loses precision. */
	assert_int_equal(regions_unmap(&t, PG / 2, PG + PG / 2), 8);
	CHECK(&t, { 0, 2 * PG, 1, 7 }, { 8 * PG, 9 * PG, 2, 0 });

	/* Bound 1: a mapping in the middle drops the prorated rss, keeps the owner. */
	regions_free(&t);
	regions_init(&t, 1);
	assert_int_equal(regions_map(&t, 0, 3 * PG, 1, 0, NULL), 0);
	set_rss(&t, 0, 300);
	assert_int_equal(regions_map(&t, PG, 2 * PG, 2, 0, &dropped), 0);
	assert_int_equal(dropped, 100);
	CHECK(&t, { 0, 3 * PG, 1, 200 });

	/* Syncs and moves stay within the bound too. */
	assert_int_equal(regions_sync(&t, PG, 5 * PG, 1000, 1000, 3, 0), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.r[0].owner, 1);
	assert_int_equal(t.r[0].rss, 67 + 1000);
	assert_int_equal(regions_move(&t, 0, PG, 0x100 * PG, PG), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.r[0].rss, 1067);
	regions_free(&t);
}

static int64_t total_rss(const struct region_table *t)
{
	int64_t sum = 0;

	for (size_t i = 0; i < t->n; i++)
		sum += t->r[i].rss;
	return sum;
}

/* Sorted, non-empty, non-overlapping, never negative, within the bound. */
static void check_invariants(struct region_table *t)
{
	if (t->max)
		assert_true(t->n <= t->max);
	for (size_t i = 0; i < t->n; i++) {
		assert_true(t->r[i].start < t->r[i].end);
		assert_true(t->r[i].rss >= 0);
		if (i)
			assert_true(t->r[i - 1].end <= t->r[i].start);
	}
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

/* Random operations: the invariants hold, rss is conserved where it must be, find agrees with a scan. */
static void test_random_ops(void **state)
{
	struct region_table t;

	(void)state;
	for (size_t max = 0; max <= 24; max += 6) {
		regions_init(&t, max);
		for (int step = 0; step < 20000; step++) {
			uint64_t a = rnd(64) * PG + (rnd(4) ? 0 : rnd(PG));
			uint64_t b = a + 1 + rnd(8 * PG);
			int64_t before = total_rss(&t), ret, d;
			struct region *r;

			switch (rnd(6)) {
			case 0:
				assert_int_equal(regions_map(&t, a, b, (comp_id)rnd(5), 0, &ret), 0);
				assert_int_equal(total_rss(&t), before - ret);
				break;
			case 1:
				ret = regions_unmap(&t, a, b);
				assert_int_equal(total_rss(&t), before - ret);
				break;
			case 2:
				d = (int64_t)rnd(100000) - 60000;
				ret = regions_charge_range(&t, a, b, d);
				assert_int_equal(total_rss(&t), before + d - ret);
				break;
			case 3:
				assert_int_equal(regions_sync(&t, a, b, (int64_t)rnd(50000),
							      (int64_t)rnd(50000), 1, 0), 0);
				break;
			case 4:
				regions_move(&t, a, b - a, rnd(64) * PG, 1 + rnd(8 * PG));
				break;
			default:
				if ((r = regions_find(&t, a)))
					r->rss += (int64_t)rnd(5000);
				break;
			}
			check_invariants(&t);
			for (int k = 0; k < 4; k++) {
				uint64_t x = rnd(80 * PG);
				struct region *want = NULL;

				for (size_t i = 0; i < t.n; i++)
					if (t.r[i].start <= x && x < t.r[i].end)
						want = &t.r[i];
				assert_ptr_equal(regions_find(&t, x), want);
			}
		}
		regions_free(&t);
	}
}

/* Fake pagemap: every page below 0x5000 resident, none above; fails past 0x9000. */
static int64_t fake_resident(void *ctx, uint64_t start, uint64_t end)
{
	int64_t n = 0;

	(void)ctx;
	if (end > 0x9000)
		return -EIO;
	for (uint64_t a = start; a < end; a += 0x1000)
		n += a < 0x5000 ? 0x1000 : 0;
	return n;
}

/*
 * The kernel merged the program's block and a library's into one smaps
 * entry: the split by current rss (lagging events) is replaced by the
 * pages each region really holds; a failed count keeps every estimate.
 */
static void test_sync_exact(void **state)
{
	struct region_table t;

	(void)state;
	regions_init(&t, 64);
	assert_int_equal(regions_map(&t, 0x1000, 0x4000, COMP_APP, 0, NULL), 0);
	assert_int_equal(regions_map(&t, 0x4000, 0x8000, COMP_STACK, 0, NULL), 0);
	assert_false(regions_several(&t, 0x1000, 0x4000));
	assert_true(regions_several(&t, 0x1000, 0x8000));
	assert_true(regions_several(&t, 0x3000, 0x5000));
	assert_false(regions_several(&t, 0x9000, 0xa000));
	/* smaps says 16 KiB resident: by current rss (none) it would go by length. */
	assert_int_equal(regions_sync(&t, 0x1000, 0x8000, 0x4000, 0x2000, COMP_UNATTRIBUTED, 0), 0);
	assert_int_equal(regions_sync_exact(&t, 0x1000, 0x8000, 0x2000, fake_resident, NULL, 42), 0);
	assert_int_equal(regions_find(&t, 0x1000)->rss, 0x3000);
	assert_int_equal(regions_find(&t, 0x4000)->rss, 0x1000);
	assert_int_equal(regions_find(&t, 0x1000)->pss, 0x1800);
	assert_int_equal(regions_find(&t, 0x4000)->pss, 0x800);
	assert_int_equal(regions_find(&t, 0x4000)->rss_at_sync, 0x1000);
	assert_int_equal(regions_find(&t, 0x4000)->counted_ns, 42);
	/* A failing count changes nothing. */
	assert_int_equal(regions_map(&t, 0x8000, 0xa000, COMP_APP, 0, NULL), 0);
	regions_find(&t, 0x8000)->rss = 0x2000;
	assert_int_equal(regions_sync_exact(&t, 0x1000, 0xa000, 0x2000, fake_resident, NULL, 43), -1);
	assert_int_equal(regions_find(&t, 0x1000)->rss, 0x3000);
	assert_int_equal(regions_find(&t, 0x8000)->rss, 0x2000);
	assert_int_equal(regions_find(&t, 0x1000)->counted_ns, 42);
	regions_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_many),
		cmocka_unit_test(test_map_over),
		cmocka_unit_test(test_map_prorates_pss),
		cmocka_unit_test(test_unmap),
		cmocka_unit_test(test_unmap_charged_edges),
		cmocka_unit_test(test_charge),
		cmocka_unit_test(test_charge_clamp),
		cmocka_unit_test(test_move),
		cmocka_unit_test(test_sync),
		cmocka_unit_test(test_sync_begin_end),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_set_owner),
		cmocka_unit_test(test_front_changes_move_few),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_sync_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
