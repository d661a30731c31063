// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The heap sites kept at a process's peak (core/heap_peak.c): only sites
 * holding memory then are kept, with their counts as they were; a later
 * peak replaces the copy whole (a site freed since is gone from it); the
 * copy never holds more than HEAP_PEAK_MAX_SITES, the rest counted as
 * dropped; an exec's reset leaves none.
 *
 * Mutations caught: keeping a fully freed site (test_only_live), appending
 * to the previous peak's copy instead of replacing it (test_new_peak_replaces),
 * no bound or dropped not counted (test_bounded).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "heap_peak.h"

static struct site_stats stats(uint64_t calls, uint64_t frees, int64_t live)
{
	return (struct site_stats){ .calls = calls, .frees = frees, .total_bytes = (uint64_t)live,
				    .live_bytes = live, .peak_bytes = live };
}

static void test_only_live(void **state)
{
	struct heap_peak hp = { 0 };
	struct site_stats held = stats(4, 1, 3 << 20), freed = stats(2, 2, 0);

	(void)state;
	heap_peak_begin(&hp);
	assert_int_equal(heap_peak_add(&hp, 0x1000, &held), 1);
	assert_int_equal(heap_peak_add(&hp, 0x2000, &freed), 0);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.sites[0].addr, 0x1000);
	assert_int_equal(hp.sites[0].stats.live_bytes, 3 << 20);
	assert_int_equal(heap_site_live_blocks(&hp.sites[0].stats), 3);
	assert_int_equal(hp.dropped, 0);
	heap_peak_free(&hp);
	assert_null(hp.sites);
}

static void test_new_peak_replaces(void **state)
{
	struct heap_peak hp = { 0 };
	struct site_stats a = stats(1, 0, 8 << 20), b = stats(1, 0, 2 << 20);

	(void)state;
	heap_peak_begin(&hp);
	heap_peak_add(&hp, 0x1000, &a);
	heap_peak_add(&hp, 0x2000, &b);
	assert_int_equal(hp.n, 2);

	/* A higher peak later: 0x1000 grew, 0x2000 was freed meanwhile. */
	a = stats(2, 0, 16 << 20);
	b = stats(1, 1, 0);
	heap_peak_begin(&hp);
	heap_peak_add(&hp, 0x1000, &a);
	heap_peak_add(&hp, 0x2000, &b);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.sites[0].stats.live_bytes, 16 << 20);
	assert_int_equal(hp.sites[0].stats.calls, 2);

	heap_peak_reset(&hp);
	assert_int_equal(hp.n, 0);
	assert_false(hp.due);
	heap_peak_free(&hp);
}

static void test_bounded(void **state)
{
	struct heap_peak hp = { 0 };
	struct site_stats one = stats(1, 0, 64);
	size_t kept = 0;

	(void)state;
	heap_peak_begin(&hp);
	for (uint64_t i = 0; i < HEAP_PEAK_MAX_SITES + 10; i++)
		kept += (size_t)heap_peak_add(&hp, 0x1000 + 16 * i, &one);
	assert_int_equal(kept, HEAP_PEAK_MAX_SITES);
	assert_int_equal(hp.n, HEAP_PEAK_MAX_SITES);
	assert_true(hp.cap <= HEAP_PEAK_MAX_SITES);
	assert_int_equal(hp.dropped, 10);
	/* The next peak starts from none, dropped counted anew. */
	heap_peak_begin(&hp);
	assert_int_equal(hp.dropped, 0);
	assert_int_equal(heap_peak_add(&hp, 0x10, &one), 1);
	heap_peak_free(&hp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_live),
		cmocka_unit_test(test_new_peak_replaces),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
