// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The spool's job directory names: one user's claims never take another's or a Slurm job's. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "spool.h"

static char spool[64];

static int make_spool(void **state)
{
	(void)state;
	snprintf(spool, sizeof(spool), "/tmp/memattr-spool-XXXXXX");
	return mkdtemp(spool) ? 0 : -1;
}

static int remove_spool(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", spool);
	return system(cmd) ? -1 : 0;
}

static void take(const char *path)
{
	assert_int_equal(mkdir(path, 0700), 0);
}

static void test_squat(void **state)
{
	char path[4096], want[4096];

	(void)state;
	/* User 1001 takes every name it can for ID 5002: 1000 directories. */
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(spool_job_dir(spool, "5002", 1001, false, path, sizeof(path)), 0);
		take(path);
	}
	assert_int_equal(spool_job_dir(spool, "5002", 1001, false, path, sizeof(path)), -EEXIST);
	/* A Slurm job 5002 and user 1000's own claim of 5002 still get their first names. */
	assert_int_equal(spool_job_dir(spool, "5002", 1000, true, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/5002", spool);
	assert_string_equal(path, want);
	assert_int_equal(spool_job_dir(spool, "5002", 1000, false, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/5002.u1000", spool);
	assert_string_equal(path, want);
}

static void test_names(void **state)
{
	char path[4096], want[4096];

	(void)state;
	assert_int_equal(spool_job_dir(spool, "77", 1001, false, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/77.u1001", spool);
	assert_string_equal(path, want);
	take(path);
	assert_int_equal(spool_job_dir(spool, "77", 1001, false, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/77.u1001.1", spool);
	assert_string_equal(path, want);
	/* An ID that looks like another user's name ends in its own claimant's uid. */
	assert_int_equal(spool_job_dir(spool, "77.u1000", 1001, false, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/77.u1000.u1001", spool);
	assert_string_equal(path, want);
	take(path);
	assert_int_equal(spool_job_dir(spool, "77", 1000, false, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/77.u1000", spool);
	assert_string_equal(path, want);
	/* Trusted: the ID alone, then .1. */
	take(want);
	assert_int_equal(spool_job_dir(spool, "88", 0, true, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/88", spool);
	assert_string_equal(path, want);
	take(path);
	assert_int_equal(spool_job_dir(spool, "88", 0, true, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/88.1", spool);
	assert_string_equal(path, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_squat, make_spool, remove_spool),
		cmocka_unit_test_setup_teardown(test_names, make_spool, remove_spool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
