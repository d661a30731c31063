// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Who a process is: the real ids of its status, the owner in a Slurm cgroup v1 path. */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <cmocka.h>

#include "proc_owner.h"

static void test_status(void **state)
{
	uid_t u;
	gid_t g;

	(void)state;
	/* The real ids (first column), not the effective ones of a setuid program. */
	assert_int_equal(proc_owner_parse_status("Name:\tsu\nUmask:\t0022\nState:\tS (sleeping)\n"
						 "Uid:\t1001\t0\t0\t0\nGid:\t1002\t0\t0\t0\n", &u, &g), 0);
	assert_int_equal(u, 1001);
	assert_int_equal(g, 1002);
	assert_int_equal(proc_owner_parse_status("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", &u, &g), 0);
	assert_int_equal(u, 0);
	/* A process named "Uid: 5" cannot pose: only a line's start counts, and the name is escaped by the kernel anyway. */
	assert_int_equal(proc_owner_parse_status("Name:\tUid:\t5\nUid:\t7\t7\t7\t7\nGid:\t8\t8\t8\t8\n", &u, &g), 0);
	assert_int_equal(u, 7);
	assert_int_equal(proc_owner_parse_status("Uid:\t7\t7\t7\t7\n", &u, &g), -EINVAL);
	assert_int_equal(proc_owner_parse_status("Uid:\tx\nGid:\t1\n", &u, &g), -EINVAL);
	assert_int_equal(proc_owner_parse_status("Uid:\t4294967295\t0\nGid:\t1\t1\n", &u, &g), -EINVAL);
	assert_int_equal(proc_owner_parse_status("", &u, &g), -EINVAL);
}

static void test_slurm_uid(void **state)
{
	uid_t u = 0;

	(void)state;
	/* v1: every controller's line names slurm_<node>/uid_<U>/job_<J>. */
	assert_int_equal(proc_owner_parse_slurm_uid(
		"12:pids:/user.slice\n"
		"4:freezer:/slurm_node1/uid_1001/job_42/step_0/task_1\n"
		"0::/user.slice/user-0.slice\n", &u), 0);
	assert_int_equal(u, 1001);
	assert_int_equal(proc_owner_parse_slurm_uid("7:memory:/slurm/uid_55/job_9/step_batch\n", &u), 0);
	assert_int_equal(u, 55);
	/* v2: no uid in the path. */
	assert_int_equal(proc_owner_parse_slurm_uid(
		"0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n", &u), -ENOENT);
	/* A uid_ component outside Slurm's tree, or not right above job_: not Slurm's word. */
	assert_int_equal(proc_owner_parse_slurm_uid("4:freezer:/user/uid_1001/job_42/step_0\n", &u), -ENOENT);
	assert_int_equal(proc_owner_parse_slurm_uid("4:freezer:/slurm_n/uid_1001/x/job_42\n", &u), -ENOENT);
	assert_int_equal(proc_owner_parse_slurm_uid("4:freezer:/slurm_n/uid_/job_42\n", &u), -ENOENT);
	assert_int_equal(proc_owner_parse_slurm_uid("4:freezer:/slurm_n/uid_12a/job_42\n", &u), -ENOENT);
	assert_int_equal(proc_owner_parse_slurm_uid("", &u), -ENOENT);
	assert_int_equal(proc_owner_parse_slurm_uid("garbage", &u), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_slurm_uid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
