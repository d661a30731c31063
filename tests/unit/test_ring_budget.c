// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bound on one read of the ring buffer (sys/ring_budget.c): past its
 * deadline the callback stops libbpf's loop, the record in hand taken; no
 * budget never stops; the engine's own non-zero result passes through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ring_budget.h"

static int handed;

static int count_fn(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	handed++;
	return 0;
}

static int stop_fn(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return -5;
}

/* Records until the callback says stop, at most n. */
static int feed(struct ring_budget *b, int n)
{
	for (int i = 0; i < n; i++) {
		int ret = ring_budget_event(b, NULL, 0);

		if (ret)
			return ret;
	}
	return 0;
}

static void test_deadline_passed_stops(void **state)
{
	struct ring_budget b = { .fn = count_fn };

	(void)state;
	handed = 0;
	ring_budget_start(&b, 1);
	b.deadline_ns = 1;		/* long past */
	assert_int_equal(feed(&b, 1000), RING_BUDGET_CUT);
	assert_true(b.cut);
	/* Progress first: the clock is read after a batch, every record handed over. */
	assert_true(handed > 1 && handed < 1000);
	assert_int_equal(handed, (int)b.taken);
	assert_int_equal(ring_budget_result(&b, RING_BUDGET_CUT), handed);
}

static void test_no_budget_never_stops(void **state)
{
	struct ring_budget b = { .fn = count_fn };

	(void)state;
	handed = 0;
	ring_budget_start(&b, 0);
	assert_int_equal(feed(&b, 10000), 0);
	assert_false(b.cut);
	assert_int_equal(handed, 10000);
	assert_int_equal(ring_budget_result(&b, 10000), 10000);
}

static void test_budget_ahead_does_not_stop(void **state)
{
	struct ring_budget b = { .fn = count_fn };

	(void)state;
	handed = 0;
	ring_budget_start(&b, 60000);
	assert_int_equal(feed(&b, 1000), 0);
	assert_false(b.cut);
}

static void test_engine_result_passes(void **state)
{
	struct ring_budget b = { .fn = stop_fn };

	(void)state;
	ring_budget_start(&b, 1);
	b.deadline_ns = 1;
	assert_int_equal(ring_budget_event(&b, NULL, 0), -5);
	assert_false(b.cut);
	/* libbpf's errors are not records taken. */
	assert_int_equal(ring_budget_result(&b, -5), -5);
	assert_int_equal(ring_budget_result(&b, RING_BUDGET_CUT), RING_BUDGET_CUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_passed_stops),
		cmocka_unit_test(test_no_budget_never_stops),
		cmocka_unit_test(test_budget_ahead_does_not_stop),
		cmocka_unit_test(test_engine_result_passes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
