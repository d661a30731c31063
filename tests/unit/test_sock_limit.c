// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The user socket's per-user shares (cmd/sock_limit.c): a user's idle
 * connections cost only that user's own, a user with its share of whole
 * requests waiting is refused, and a free thread goes to the request
 * waiting longest among users under their share of answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sock_limit.h"

/* Under its share a user's connection is admitted, whoever else fills the table. */
static void test_admit_under_share(void **state)
{
	const struct sl_conn c[] = {
		{ 1000, false, 1.0 }, { 1000, true, 2.0 }, { 1001, false, 3.0 },
	};
	size_t victim = 99;

	(void)state;
	assert_int_equal(sl_admit(c, 3, 1000, 3, &victim), SL_ADMIT);
	assert_int_equal(sl_admit(c, 3, 1001, 3, &victim), SL_ADMIT);
	assert_int_equal(sl_admit(c, 3, 1002, 1, &victim), SL_ADMIT);
	assert_int_equal(sl_admit(c, 0, 1002, 1, &victim), SL_ADMIT);
	assert_int_equal(victim, 99);
}

/*
 * At its share, a user's new connection replaces that user's oldest one
 * still saying nothing: never another user's, never a whole request.
 */
static void test_evict_own_oldest_idle(void **state)
{
	const struct sl_conn c[] = {
		{ 1001, false, 0.5 },	/* another user's, older still */
		{ 1000, true, 1.0 },	/* whole: not evicted */
		{ 1000, false, 3.0 },
		{ 1000, false, 2.0 },	/* the oldest idle of user 1000 */
		{ 1000, false, 4.0 },
	};
	size_t victim = 99;

	(void)state;
	assert_int_equal(sl_admit(c, 5, 1000, 4, &victim), SL_EVICT);
	assert_int_equal(victim, 3);
	/* Over the share too (a share lowered while full): still one of its own. */
	assert_int_equal(sl_admit(c, 5, 1000, 2, &victim), SL_EVICT);
	assert_int_equal(victim, 3);
}

/* A user whose share is all whole requests waiting: refused, nothing evicted. */
static void test_refuse_when_all_waiting(void **state)
{
	const struct sl_conn c[] = {
		{ 1000, true, 1.0 }, { 1001, false, 0.1 }, { 1000, true, 2.0 },
	};
	size_t victim = 99;

	(void)state;
	assert_int_equal(sl_admit(c, 3, 1000, 2, &victim), SL_REFUSE);
	assert_int_equal(victim, 99);
	/* The other user is not affected. */
	assert_int_equal(sl_admit(c, 3, 1001, 2, &victim), SL_ADMIT);
}

/*
 * One user floods the table with silent connections: however many it
 * opens, it holds its share and the other user always gets in.
 */
static void test_flood_holds_share(void **state)
{
	struct sl_conn c[32];
	size_t n = 0, victim, mine = 0;

	(void)state;
	for (int k = 0; k < 1000; k++) {
		switch (sl_admit(c, n, 1000, 4, &victim)) {
		case SL_ADMIT:
			c[n++] = (struct sl_conn){ 1000, false, (double)k };
			break;
		case SL_EVICT:
			c[victim] = (struct sl_conn){ 1000, false, (double)k };
			break;
		case SL_REFUSE:
			fail_msg("silent connections are evicted, not refused");
		}
	}
	for (size_t i = 0; i < n; i++)
		mine += c[i].uid == 1000;
	assert_int_equal(mine, 4);
	assert_int_equal(n, 4);
	assert_int_equal(sl_admit(c, n, 2000, 4, &victim), SL_ADMIT);
}

static void test_serving_counts(void **state)
{
	struct sl_serving s = { 0 };

	(void)state;
	assert_int_equal(sl_serving_of(&s, 1000), 0);
	assert_int_equal(sl_serving_add(&s, 1000), 0);
	assert_int_equal(sl_serving_add(&s, 1000), 0);
	assert_int_equal(sl_serving_add(&s, 0), 0);
	assert_int_equal(sl_serving_of(&s, 1000), 2);
	assert_int_equal(sl_serving_of(&s, 0), 1);
	sl_serving_done(&s, 1000);
	assert_int_equal(sl_serving_of(&s, 1000), 1);
	sl_serving_done(&s, 1000);
	assert_int_equal(sl_serving_of(&s, 1000), 0);
	assert_int_equal(s.n, 1);	/* a user without answers leaves the table */
	sl_serving_done(&s, 4242);	/* unknown: nothing happens */
	assert_int_equal(s.n, 1);
	for (uid_t u = 1; u < SL_MAX_USERS; u++)
		assert_int_equal(sl_serving_add(&s, u), 0);
	assert_int_equal(sl_serving_add(&s, 99999), -1);
	assert_int_equal(sl_serving_add(&s, 5), 0);	/* a user already there still counts */
	assert_int_equal(sl_serving_of(&s, 5), 2);
}

/*
 * A free thread: the request waiting longest among users under their
 * share of answers. A user with its share under way waits, however long
 * its requests have been waiting; idle connections are never picked.
 */
static void test_pick_fair(void **state)
{
	const struct sl_conn c[] = {
		{ 1000, true, 1.0 },	/* user 1000 waits longest... */
		{ 1000, true, 2.0 },
		{ 2000, false, 0.5 },	/* idle: not a request yet */
		{ 2000, true, 5.0 },
		{ 3000, true, 4.0 },
	};
	struct sl_serving s = { 0 };

	(void)state;
	assert_int_equal(sl_pick(c, 5, &s, 2), 0);
	sl_serving_add(&s, 1000);
	sl_serving_add(&s, 1000);
	/* ...but has 2 answers under way: the next longest of the others. */
	assert_int_equal(sl_pick(c, 5, &s, 2), 4);
	sl_serving_add(&s, 3000);
	sl_serving_add(&s, 3000);
	assert_int_equal(sl_pick(c, 5, &s, 2), 3);
	sl_serving_add(&s, 2000);
	sl_serving_add(&s, 2000);
	assert_int_equal(sl_pick(c, 5, &s, 2), -1);
	sl_serving_done(&s, 1000);
	assert_int_equal(sl_pick(c, 5, &s, 2), 0);
	assert_int_equal(sl_pick(c, 0, &s, 2), -1);
}

/*
 * finding 7's situation with 8 threads and a share of 2: one user's slow
 * readers keep 2 threads busy, and its further requests leave 6 for
 * everyone else.
 */
static void test_slow_reader_keeps_share(void **state)
{
	struct sl_conn c[6];
	struct sl_serving s = { 0 };
	unsigned int busy = 0;
	long i;

	(void)state;
	for (int k = 0; k < 5; k++)
		c[k] = (struct sl_conn){ 1000, true, (double)k };
	c[5] = (struct sl_conn){ 2000, true, 10.0 };
	while (busy < 8 && (i = sl_pick(c, 6, &s, 2)) >= 0) {
		sl_serving_add(&s, c[i].uid);
		c[i].ready = false;	/* handed to a thread */
		c[i].since = 1e9;
		busy++;
	}
	assert_int_equal(busy, 3);
	assert_int_equal(sl_serving_of(&s, 1000), 2);
	assert_int_equal(sl_serving_of(&s, 2000), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admit_under_share),
		cmocka_unit_test(test_evict_own_oldest_idle),
		cmocka_unit_test(test_refuse_when_all_waiting),
		cmocka_unit_test(test_flood_holds_share),
		cmocka_unit_test(test_serving_counts),
		cmocka_unit_test(test_pick_fair),
		cmocka_unit_test(test_slow_reader_keeps_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
