// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Files planted where root reads: sys/safe_open.c, and the two readers
 * that use it on paths a user may control, spec files (--spec) and a run's
 * CSVs (`report`). Each case runs under an alarm: before the fix a FIFO
 * made the spec reader block forever, and a test must fail, not hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "report.h"
#include "safe_open.h"
#include "spec.h"

#define HDR	"time_s,rank,pid,component,rss_bytes,pss_bytes\n"

static char dir[64];
static char err[RP_ERRLEN];

static void path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void put(const char *name, const char *text)
{
	char p[128];
	FILE *f;

	path(p, sizeof(p), name);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	char p[128], q[128];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/memattr-hf-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	put("plain", "component mpi\nlibrary libfoo.so\n");
	put("secret", "key,value\nshadow,root:$6$hash:19000\n");
	path(p, sizeof(p), "secret");
	path(q, sizeof(q), "hardlink");
	if (link(p, q))
		return -1;
	path(q, sizeof(q), "symlink");
	if (symlink(p, q))
		return -1;
	path(q, sizeof(q), "fifo");
	if (mkfifo(q, 0600))
		return -1;
	path(q, sizeof(q), "subdir");
	if (mkdir(q, 0700))
		return -1;
	/* A test that blocks is a failed test: SIGALRM ends the process. */
	alarm(20);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	alarm(0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* safe_openat on name in dir: the descriptor, or -errno. */
static int try_open(const char *name, unsigned int flags, uint64_t max)
{
	char p[128];
	int fd;

	path(p, sizeof(p), name);
	fd = safe_openat(AT_FDCWD, p, flags, max, NULL);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static void test_safe_open(void **state)
{
	int dfd, fd;

	(void)state;
	assert_int_equal(try_open("plain", 0, 1 << 20), 0);
	assert_int_equal(try_open("symlink", 0, 1 << 20), -ELOOP);
	assert_int_equal(try_open("fifo", 0, 1 << 20), -EINVAL);
	assert_int_equal(try_open("subdir", 0, 1 << 20), -EISDIR);
	assert_int_equal(try_open("secret", 0, 1 << 20), -EMLINK);
	assert_int_equal(try_open("hardlink", 0, 1 << 20), -EMLINK);
	assert_int_equal(try_open("plain", 0, 10), -EFBIG);
	assert_int_equal(try_open("missing", 0, 1 << 20), -ENOENT);
	/* The relaxations ELF symbol reading needs (/proc/PID/exe is a link). */
	assert_int_equal(try_open("symlink", SAFE_FOLLOW, 1 << 20), -EMLINK);
	assert_int_equal(try_open("symlink", SAFE_FOLLOW | SAFE_ANY_NLINK, 1 << 20), 0);
	assert_true(safe_openat(AT_FDCWD, "/dev/zero", 0, 1 << 20, NULL) < 0 && errno == EINVAL);
	/* Relative to a directory descriptor, and the result is blocking again. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fd = safe_openat(dfd, "plain", 0, 1 << 20, NULL);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	close(dfd);
	assert_string_equal(safe_open_strerror(EMLINK), "has other hard links");
}

/* A spec at path must be refused with a message containing want. */
static void spec_refused(const char *p, const char *want)
{
	struct spec_set s;

	spec_init(&s);
	err[0] = '\0';
	assert_int_equal(spec_load_file(&s, p, err, sizeof(err)), -1);
	if (!strstr(err, want) || !strstr(err, p))
		fail_msg("spec %s: '%s', expected '%s'", p, err, want);
	assert_int_equal(s.n, 0);
	spec_free(&s);
}

/* Finding 5: --spec on a FIFO blocked forever, /dev/zero grew without bound. */
static void test_spec_files(void **state)
{
	struct spec_set s;
	char p[128];

	(void)state;
	path(p, sizeof(p), "fifo");
	spec_refused(p, "not a regular file");
	spec_refused("/dev/zero", "not a regular file");
	path(p, sizeof(p), "symlink");
	spec_refused(p, "is a symlink");
	path(p, sizeof(p), "hardlink");
	spec_refused(p, "has other hard links");
	path(p, sizeof(p), "subdir");
	spec_refused(p, "Is a directory");
	path(p, sizeof(p), "plain");
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, p, err, sizeof(err)), 0);
	assert_int_equal(s.n, 1);
	spec_free(&s);
}

/* A run directory of dir/NAME with one good rank file. */
static int run_dir(const char *name)
{
	char p[128];
	int dfd;

	path(p, sizeof(p), name);
	assert_int_equal(mkdir(p, 0700), 0);
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	snprintf(p, sizeof(p), "%s/rank-0.csv", name);
	put(p, HDR "0.100,0,100,total,10,5\n0.100,0,100,app,10,5\n");
	return dfd;
}

static void report_refused(int dfd, const char *want)
{
	struct rp_run run;

	memset(&run, 0, sizeof(run));
	err[0] = '\0';
	assert_int_equal(rp_load_dir(&run, dfd, "RUN", err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("report: '%s', expected '%s'", err, want);
	rp_run_free(&run);
}

/*
 * Finding 4: a hard link named run_info.csv to a file the user may not
 * read, refused when the report runs as root (make unit-test runs as root
 * in CI; as a user the link is read).
 */
static void test_report_files(void **state)
{
	char p[128], q[128];
	struct rp_run run;
	int dfd;

	(void)state;
	dfd = run_dir("hl");
	path(p, sizeof(p), "secret");
	path(q, sizeof(q), "hl/run_info.csv");
	assert_int_equal(link(p, q), 0);
	if (geteuid() == 0) {
		report_refused(dfd, "RUN/run_info.csv: cannot open: has other hard links");
	} else {
		/* Not root: the link gives nothing the user cannot read anyway. */
		memset(&run, 0, sizeof(run));
		assert_int_equal(rp_load_dir(&run, dfd, "RUN", err, sizeof(err)), 0);
		rp_run_free(&run);
	}
	close(dfd);

	dfd = run_dir("fiforun");
	path(q, sizeof(q), "fiforun/summary.csv");
	assert_int_equal(mkfifo(q, 0600), 0);
	report_refused(dfd, "RUN/summary.csv: cannot open: not a regular file");
	close(dfd);

	dfd = run_dir("ok");
	memset(&run, 0, sizeof(run));
	assert_int_equal(rp_load_dir(&run, dfd, "RUN", err, sizeof(err)), 0);
	assert_int_equal(run.nprocs, 1);
	rp_run_free(&run);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_open),
		cmocka_unit_test(test_spec_files),
		cmocka_unit_test(test_report_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
