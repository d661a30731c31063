// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process's /proc files through one directory descriptor: this process's
 * own as its path gives them, and nothing at all once the process is gone
 * (a reused PID cannot answer through the old descriptor).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc_at.h"
#include "procfs.h"

static void test_parse_start(void **state)
{
	unsigned long long t;

	(void)state;
	assert_int_equal(proc_at_parse_start("42 (a) b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
					     "987654 1000 10 18446744073709551615\n", &t), 0);
	assert_int_equal(t, 987654);
	/* A comm of ") 1 2 3": the fields start after its last ')'. */
	assert_int_equal(proc_at_parse_start("7 () 1 2 3) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0\n", &t), 0);
	assert_int_equal(t, 55);
	assert_int_equal(proc_at_parse_start("7 (x) R 1 7\n", &t), -EINVAL);
	assert_int_equal(proc_at_parse_start("no paren", &t), -EINVAL);
}

static void test_self(void **state)
{
	struct environ_buf env = {0}, by_path = {0};
	struct proc_who who;
	char buf[4096], stat[1024];
	unsigned long long start;
	int pfd = proc_at_open(getpid()), fd;
	ssize_t n;

	(void)state;
	assert_true(pfd >= 0);
	assert_int_equal(proc_at_who(pfd, &who), 0);
	assert_int_equal(who.uid, getuid());
	assert_int_equal(who.gid, getgid());
	fd = open("/proc/self/stat", O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	assert_true(n > 0);
	stat[n] = '\0';
	assert_int_equal(proc_at_parse_start(stat, &start), 0);
	assert_int_equal(who.start, start);
	assert_true(proc_at_still(pfd, &who));
	who.start++;
	assert_false(proc_at_still(pfd, &who));
	/* The same environment as its path gives. */
	assert_int_equal(proc_at_environ(pfd, &env, 1 << 20), 0);
	assert_int_equal(procfs_read_environ(getpid(), &by_path, 1 << 20), 0);
	assert_int_equal(env.len, by_path.len);
	assert_memory_equal(env.data, by_path.data, env.len);
	environ_free(&env);
	environ_free(&by_path);
	assert_int_equal(proc_at_read(pfd, "status", buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "Uid:"));
	/* No link followed out of the directory. */
	assert_true(proc_at_read(pfd, "exe", buf, sizeof(buf)) < 0);
	close(pfd);
}

static void test_gone(void **state)
{
	struct environ_buf env = {0};
	struct slurm_cgroup sc;
	struct proc_who who;
	char buf[256];
	uid_t owner;
	pid_t child = fork();
	int pfd;

	(void)state;
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	pfd = proc_at_open(child);
	assert_true(pfd >= 0);
	assert_int_equal(proc_at_who(pfd, &who), 0);
	assert_true(proc_at_still(pfd, &who));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* Reaped: whatever later takes its PID, nothing answers through pfd. */
	assert_true(proc_at_read(pfd, "status", buf, sizeof(buf)) < 0);
	assert_true(proc_at_who(pfd, &who) < 0);
	assert_false(proc_at_still(pfd, &who));
	assert_true(proc_at_environ(pfd, &env, 1 << 20) < 0);
	assert_null(env.data);
	assert_true(proc_at_slurm_cgroup(pfd, &sc, &owner) < 0);
	close(pfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_start),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
