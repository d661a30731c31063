// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-MPI-function growth: gained, released, peak of the net, growth times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "mpi_fn.h"

static void test_charges(void **state)
{
	struct mpi_fn_table t = { 0 };
	struct mpi_fn_stats *s;

	(void)state;
	assert_null(mpi_fn_get(&t, 3, false));
	assert_int_equal(mpi_fn_charge(&t, 3, 4096, 1.5), 0);
	assert_int_equal(mpi_fn_charge(&t, 3, 8192, 2.0), 0);
	assert_int_equal(mpi_fn_charge(&t, 3, -4096, 2.5), 0);
	assert_int_equal(mpi_fn_charge(&t, 3, 4096, 3.0), 0);
	s = mpi_fn_get(&t, 3, false);
	assert_non_null(s);
	assert_int_equal(s->gained, 16384);
	assert_int_equal(s->released, 4096);
	assert_int_equal(s->peak, 12288);
	assert_true(s->first_growth == 1.5);
	assert_true(s->last_growth == 3.0);
	/* A release alone (MPI_Free_mem) has no growth time and no peak. */
	assert_int_equal(mpi_fn_charge(&t, 1, -8192, 4.0), 0);
	s = mpi_fn_get(&t, 1, false);
	assert_int_equal(s->released, 8192);
	assert_int_equal(s->gained, 0);
	assert_int_equal(s->peak, 0);
	/* Far indexes grow the table; others stay as they were. */
	assert_int_equal(mpi_fn_charge(&t, 200, 1, 5.0), 0);
	assert_true(t.n >= 200);
	assert_int_equal(mpi_fn_get(&t, 3, false)->gained, 16384);
	mpi_fn_free(&t);
}

static void test_bad_index(void **state)
{
	struct mpi_fn_table t = { 0 };

	(void)state;
	assert_int_equal(mpi_fn_charge(&t, 0, 4096, 1.0), -22);
	assert_int_equal(mpi_fn_charge(&t, MPI_FN_MAX + 1, 4096, 1.0), -22);
	assert_null(mpi_fn_get(&t, 0, true));
	assert_int_equal(t.n, 0);
	/* Zero changes nothing and allocates nothing. */
	assert_int_equal(mpi_fn_charge(&t, 5, 0, 1.0), 0);
	assert_int_equal(t.n, 0);
	mpi_fn_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_charges),
		cmocka_unit_test(test_bad_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
