// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live-process table: found by pid after growth and removals, walked
 * in order of addition (removal inside the walk included), and empty again
 * once every process is removed -- the table follows what is alive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "proc_table.h"

#define N	5000

static struct proc *procs[N];

static struct proc *mk(pid_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->pid = pid;
	return p;
}

static void test_find_after_growth(void **state)
{
	struct proc_table t;

	(void)state;
	proc_table_init(&t);
	assert_null(proc_table_find(&t, 1));
	for (int i = 0; i < N; i++) {
		/* Pids as the kernel hands them out, with gaps. */
		procs[i] = mk(1000 + 3 * i);
		assert_int_equal(proc_table_add(&t, procs[i]), 0);
	}
	assert_int_equal(t.n, N);
	for (int i = 0; i < N; i++)
		assert_ptr_equal(proc_table_find(&t, 1000 + 3 * i), procs[i]);
	assert_null(proc_table_find(&t, 1001));
	for (int i = 0; i < N; i++)
		free(procs[i]);
	proc_table_free(&t);
}

static void test_order_and_removal_in_walk(void **state)
{
	struct proc_table t;
	struct proc *p, *tmp;
	pid_t expect = 10;
	size_t seen = 0;

	(void)state;
	proc_table_init(&t);
	for (int i = 0; i < 100; i++)
		assert_int_equal(proc_table_add(&t, procs[i] = mk(10 + i)), 0);
	/* Remove every odd pid while walking: the walk goes on in order. */
	proc_table_for_each(&t, p, tmp) {
		assert_int_equal(p->pid, expect++);
		if (p->pid % 2) {
			proc_table_remove(&t, p);
			free(p);
		}
	}
	assert_int_equal(t.n, 50);
	expect = 10;
	for (p = t.first; p; p = p->next, seen++) {
		assert_int_equal(p->pid, expect);
		expect += 2;
	}
	assert_int_equal(seen, 50);
	assert_null(proc_table_find(&t, 11));
	assert_non_null(proc_table_find(&t, 12));
	proc_table_for_each(&t, p, tmp) {
		proc_table_remove(&t, p);
		free(p);
	}
	assert_int_equal(t.n, 0);
	assert_null(t.first);
	assert_null(t.last);
	assert_null(proc_table_find(&t, 12));
	proc_table_free(&t);
}

/* A pid that comes back (reused) after removal is found as the new process. */
static void test_reused_pid(void **state)
{
	struct proc_table t;
	struct proc *a = mk(77), *b = mk(77);

	(void)state;
	proc_table_init(&t);
	assert_int_equal(proc_table_add(&t, a), 0);
	proc_table_remove(&t, a);
	assert_int_equal(proc_table_add(&t, b), 0);
	assert_ptr_equal(proc_table_find(&t, 77), b);
	assert_ptr_equal(t.first, b);
	free(a);
	free(b);
	proc_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_after_growth),
		cmocka_unit_test(test_order_and_removal_in_walk),
		cmocka_unit_test(test_reused_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
