// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When the node service attaches and detaches its node-wide programs
 * (core/probe_hold.c): attached for the first traced process, once; kept
 * while any is traced; detached only after hold_s with none, counted from
 * the first step that found none; a process met during the hold cancels
 * it; a failed attach is asked again; hold_s < 0 never detaches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe_hold.h"

/* One step, its act done (attach succeeding unless told). */
static enum probe_act step(struct probe_hold *h, size_t n, double now, bool ok)
{
	enum probe_act a = probe_hold_step(h, n, now);

	if (a != PROBE_KEEP)
		probe_hold_done(h, a, ok);
	return a;
}

static void test_idle_never_attaches(void **state)
{
	struct probe_hold h;

	(void)state;
	probe_hold_init(&h, 10);
	for (double now = 0; now < 100; now += 1)
		assert_int_equal(step(&h, 0, now, true), PROBE_KEEP);
	assert_false(h.attached);
	assert_int_equal(h.attaches, 0);
}

static void test_attach_once_then_keep(void **state)
{
	struct probe_hold h;

	(void)state;
	probe_hold_init(&h, 10);
	assert_int_equal(step(&h, 1, 0, true), PROBE_ATTACH);
	assert_true(h.attached);
	for (double now = 1; now < 50; now += 1)
		assert_int_equal(step(&h, 3, now, true), PROBE_KEEP);
	assert_int_equal(h.attaches, 1);
}

/* Mutation: `now - h->idle_since < h->hold_s` dropped: detaches at 100. */
static void test_detach_after_hold(void **state)
{
	struct probe_hold h;

	(void)state;
	probe_hold_init(&h, 10);
	step(&h, 1, 0, true);
	assert_int_equal(step(&h, 0, 100, true), PROBE_KEEP);	/* the hold starts */
	assert_int_equal(step(&h, 0, 105, true), PROBE_KEEP);
	assert_int_equal(step(&h, 0, 109.9, true), PROBE_KEEP);
	assert_int_equal(step(&h, 0, 110, true), PROBE_DETACH);
	assert_false(h.attached);
	assert_int_equal(step(&h, 0, 200, true), PROBE_KEEP);
}

/* Mutation: idle_since not reset when a process is traced: detaches at 110 with one traced. */
static void test_process_in_hold_cancels_it(void **state)
{
	struct probe_hold h;

	(void)state;
	probe_hold_init(&h, 10);
	step(&h, 1, 0, true);
	step(&h, 0, 100, true);
	assert_int_equal(step(&h, 1, 105, true), PROBE_KEEP);	/* the next job step: no attach */
	assert_int_equal(step(&h, 0, 108, true), PROBE_KEEP);	/* a new hold from 108 */
	assert_int_equal(step(&h, 0, 115, true), PROBE_KEEP);
	assert_int_equal(step(&h, 0, 118, true), PROBE_DETACH);
	assert_int_equal(h.attaches, 1);
	/* A job after the detach: attached again, counted. */
	assert_int_equal(step(&h, 2, 300, true), PROBE_ATTACH);
	assert_int_equal(h.attaches, 2);
}

static void test_failed_attach_asks_again(void **state)
{
	struct probe_hold h;

	(void)state;
	probe_hold_init(&h, 10);
	assert_int_equal(step(&h, 1, 0, false), PROBE_ATTACH);
	assert_false(h.attached);
	assert_int_equal(h.attaches, 0);
	assert_int_equal(step(&h, 1, 1, true), PROBE_ATTACH);
	assert_true(h.attached);
	assert_int_equal(h.attaches, 1);
}

static void test_zero_hold_and_never(void **state)
{
	struct probe_hold h;

	(void)state;
	probe_hold_init(&h, 0);
	step(&h, 1, 0, true);
	assert_int_equal(step(&h, 0, 5, true), PROBE_DETACH);
	probe_hold_init(&h, -1);
	step(&h, 1, 0, true);
	for (double now = 1; now < 1e6; now *= 10)
		assert_int_equal(step(&h, 0, now, true), PROBE_KEEP);
	assert_true(h.attached);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_never_attaches),
		cmocka_unit_test(test_attach_once_then_keep),
		cmocka_unit_test(test_detach_after_hold),
		cmocka_unit_test(test_process_in_hold_cancels_it),
		cmocka_unit_test(test_failed_attach_asks_again),
		cmocka_unit_test(test_zero_hold_and_never),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
