// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sampled attribution's gap rule (core/recount_gap.c): the gap a count of
 * all pages leaves is what the VmRSS readings before and after the count
 * agree on; what the process moved during the count is drift.
 *
 * Mutations checked (each makes the named test fail):
 * - recount_gap_after returns gap_after (main's rule before issue 34's
 *   fix: the gap read after the count is the base):
 *   test_pages_faulted_during_count_are_drift.
 * - recount_gap_after returns base when the readings differ (a moving
 *   count never moves the gap): test_moving_count_moves_gap_to_readings.
 * - recount_gap_after returns base always: test_still_count_sets_gap.
 * - lo = gap_before, hi = gap_after unordered:
 *   test_shrinking_during_count.
 * - recount_drifted without the absolute value: test_drift_both_ways.
 * - recount_moved returning false (main before issue 34's start-up fix:
 *   a count during which the process moved is never counted again):
 *   test_moving_count_counted_again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "recount_gap.h"

#define KiB	1024LL
#define MiB	(1024LL * 1024)

/* VmRSS did not move during the count: its gap is exact, whatever the old one. */
static void test_still_count_sets_gap(void **state)
{
	(void)state;
	assert_int_equal(recount_gap_after(0, 200 * KiB, 200 * KiB), 200 * KiB);
	assert_int_equal(recount_gap_after(300 * KiB, -100 * KiB, -100 * KiB), -100 * KiB);
	assert_int_equal(recount_gap_after(300 * KiB, 0, 0), 0);
}

/*
 * A LAMMPS rank (4 ranks on 2 cores) faulted 0.68 MiB while its mappings
 * were read (248 ms): VmRSS 33767424 before, 34480128 after, regions
 * 34004992. Its pages in mappings already read are in no region; at the
 * next quiet samples VmRSS 36663296 against regions 36154575. Those pages
 * must count as drift (a recount is due), not hide in the gap.
 */
static void test_pages_faulted_during_count_are_drift(void **state)
{
	int64_t regions = 34004992, gap;

	(void)state;
	gap = recount_gap_after(0, 33767424 - regions, 34480128 - regions);
	assert_int_equal(gap, 0);
	assert_true(recount_drifted(36663296, 36663296 - 36154575, gap));
}

/* Shrinking during the count: the readings in the other order. */
static void test_shrinking_during_count(void **state)
{
	(void)state;
	assert_int_equal(recount_gap_after(400 * KiB, 300 * KiB, -500 * KiB), 300 * KiB);
	assert_int_equal(recount_gap_after(-900 * KiB, 300 * KiB, -500 * KiB), -500 * KiB);
	assert_int_equal(recount_gap_after(0, 300 * KiB, -500 * KiB), 0);
}

/*
 * A lasting gap (a kernel's per-CPU counter slack, 1 MiB here) met by
 * counts that never see the process still: the gap still follows the
 * readings, to the nearer one, so a process that moves a little during
 * every count (less than the bound) is not counted again at every sample.
 */
static void test_moving_count_moves_gap_to_readings(void **state)
{
	int64_t total = 36 * MiB, gap;

	(void)state;
	gap = recount_gap_after(0, 1 * MiB, 1 * MiB + 200 * KiB);
	assert_int_equal(gap, 1 * MiB);
	/* The next sample, nothing moved since the count ended. */
	assert_false(recount_drifted(total, 1 * MiB + 200 * KiB, gap));
	gap = recount_gap_after(gap, 1 * MiB - 100 * KiB, 1 * MiB - 50 * KiB);
	assert_int_equal(gap, 1 * MiB - 50 * KiB);
}

/* Past 1% of the total and 64 KiB, in either direction. */
static void test_drift_both_ways(void **state)
{
	(void)state;
	assert_false(recount_drifted(36 * MiB, 300 * KiB, 0));
	assert_true(recount_drifted(36 * MiB, 400 * KiB, 0));
	assert_true(recount_drifted(36 * MiB, -400 * KiB, 0));
	assert_true(recount_drifted(36 * MiB, 0, 400 * KiB));
	assert_false(recount_drifted(36 * MiB, 700 * KiB, 400 * KiB));
	/* Small process: the floor decides. */
	assert_false(recount_drifted(2 * MiB, 60 * KiB, 0));
	assert_true(recount_drifted(2 * MiB, 70 * KiB, 0));
}

/*
 * A count of all pages during which VmRSS moved past the drift bound is
 * counted again page by page (engine/sampled.c). HPCCG's rank at MPI's
 * start-up: 412 KiB faulted meanwhile, VmRSS 8859648 after; a count
 * during which a 36 MiB rank moved 300 KiB (under 1%) is not.
 */
static void test_moving_count_counted_again(void **state)
{
	(void)state;
	assert_true(recount_moved(8859648 - 412 * KiB, 8859648));
	assert_false(recount_moved(36 * MiB, 36 * MiB + 300 * KiB));
	assert_true(recount_moved(36 * MiB, 36 * MiB - 400 * KiB));
	assert_false(recount_moved(2 * MiB, 2 * MiB + 60 * KiB));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_still_count_sets_gap),
		cmocka_unit_test(test_pages_faulted_during_count_are_drift),
		cmocka_unit_test(test_shrinking_during_count),
		cmocka_unit_test(test_moving_count_moves_gap_to_readings),
		cmocka_unit_test(test_drift_both_ways),
		cmocka_unit_test(test_moving_count_counted_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
