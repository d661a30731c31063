// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Output directory and CSV text: the directory is created 0750 and refused
 * when it is a symlink, a file or not writable; files are 0640 and never
 * written through a symlink or a hard link; summary.csv is replaced
 * atomically; the CSV text is exact. Each test works in its own mkdtemp
 * directory under /tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "csv_out.h"

#define NOBODY	65534

struct fixture {
	char base[64];
	char path[200];
};

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->base, "/tmp/test_csv_out.XXXXXX");
	if (!mkdtemp(fx->base))
		return -1;
	umask(022);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	chmod(fx->base, 0700);
	nftw(fx->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* base/name, in a buffer of the fixture's. */
static const char *at(struct fixture *fx, const char *name)
{
	int n = snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->base, name);

	assert_true(n > 0 && (size_t)n < sizeof(fx->path));
	return fx->path;
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static int entries(const char *dir)
{
	char cmd[256];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_file_name(void **state)
{
	char name[32];

	(void)state;
	csv_file_name(0, 1234, name, sizeof(name));
	assert_string_equal(name, "rank-0.csv");
	csv_file_name(17, 1234, name, sizeof(name));
	assert_string_equal(name, "rank-17.csv");
	csv_file_name(-1, 1234, name, sizeof(name));
	assert_string_equal(name, "pid-1234.csv");
	csv_file_name(-1, 1234, name, 6);
	assert_string_equal(name, "pid-1");
}

static void test_open_creates(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[256] = "";

	/* A umask that would strip group access does not change the mode. */
	umask(077);
	assert_int_equal(outdir_open(&od, at(fx, "out"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);
	umask(022);
	assert_string_equal(err, "");
	assert_true(od.dirfd >= 0);
	assert_string_equal(od.path, at(fx, "out"));
	assert_int_equal(mode_of(at(fx, "out")), 0750);
	/* The writability probe leaves nothing behind. */
	assert_int_equal(entries(at(fx, "out")), 0);
	outdir_close(&od);
	assert_int_equal(od.dirfd, -1);

	/* An existing directory is used as it is, mode untouched; trailing slashes are fine. */
	assert_int_equal(chmod(at(fx, "out"), 0755), 0);
	assert_int_equal(outdir_open(&od, at(fx, "out//"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);
	assert_string_equal(od.path, at(fx, "out"));
	assert_int_equal(mode_of(at(fx, "out")), 0755);
	outdir_close(&od);
}

static void test_open_missing_parent(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[512] = "", want[512];

	assert_int_equal(outdir_open(&od, at(fx, "no/such"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "output directory %s: cannot create it: No such file or directory",
		 at(fx, "no/such"));
	assert_string_equal(err, want);
	assert_int_equal(od.dirfd, -1);
	assert_int_equal(access(at(fx, "no"), F_OK), -1);
}

static void test_open_symlink(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[512] = "", want[512], target[128];

	snprintf(target, sizeof(target), "%s/target", fx->base);
	assert_int_equal(mkdir(target, 0777), 0);
	assert_int_equal(symlink(target, at(fx, "link")), 0);
	assert_int_equal(outdir_open(&od, at(fx, "link"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "output directory %s: is a symlink, refusing to follow it",
		 at(fx, "link"));
	assert_string_equal(err, want);
	/* A trailing slash would resolve through the link: refused the same way. */
	err[0] = '\0';
	assert_int_equal(outdir_open(&od, at(fx, "link/"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	/* Nothing was written into the target, not even the probe file. */
	assert_int_equal(entries(target), 0);
	assert_int_equal(mode_of(target), 0777 & ~022);

	/* A dangling link is not created through either. */
	snprintf(target, sizeof(target), "%s/nowhere", fx->base);
	assert_int_equal(symlink(target, at(fx, "dangling")), 0);
	assert_int_equal(outdir_open(&od, at(fx, "dangling"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is a symlink"));
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_open_file(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[512] = "", want[512];

	spit(at(fx, "file"), "keep");
	assert_int_equal(outdir_open(&od, at(fx, "file"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "output directory %s: exists and is not a directory",
		 at(fx, "file"));
	assert_string_equal(err, want);
	assert_string_equal(slurp(at(fx, "file")), "keep");
	assert_int_equal(outdir_open(&od, "", (uid_t)-1, (gid_t)-1, err, sizeof(err)), -1);
	assert_string_equal(err, "output directory \"\": empty path");
}

static void test_open_not_writable(void **state)
{
	struct fixture *fx = *state;
	char dir[128];
	bool root = geteuid() == 0;
	pid_t pid;
	int status;

	snprintf(dir, sizeof(dir), "%s/ro", fx->base);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(fx->base, 0755), 0);	/* nobody may reach it */
	/* Root may write anywhere: check as nobody, in a child. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct output_dir od;
		char err[512] = "", want[512];

		if (root && (setgid(NOBODY) || setuid(NOBODY)))
			_exit(2);
		if (!root && chmod(dir, 0555))
			_exit(3);
		if (outdir_open(&od, dir, (uid_t)-1, (gid_t)-1, err, sizeof(err)) != -1)
			_exit(4);
		snprintf(want, sizeof(want), "output directory %s: not writable: Permission denied", dir);
		_exit(strcmp(err, want) ? 5 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(entries(dir), 0);
}

static void test_rows(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[256];
	FILE *f;

	assert_int_equal(outdir_open(&od, fx->base, (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);
	f = outdir_create(&od, "rank-0.csv");
	assert_non_null(f);
	assert_int_equal(csv_write_header(f), 0);
	assert_int_equal(csv_write_row(f, 0.0, 0, 4242, "total", 1048576, 524288), 0);
	assert_int_equal(csv_write_row(f, 1.5, 3, 4242, "lib:libz.so", 4096, 0), 0);
	assert_int_equal(csv_write_row(f, 12.3456, -1, 77, "mpi", INT64_MAX, -1), 0);
	assert_int_equal(csv_write_row(f, 0.0004, -1, 77, "a,b", 1, 2), 0);
	assert_int_equal(csv_write_row(f, 2.0006, 0, 1, "say \"hi\"", 3, 4), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(slurp(at(fx, "rank-0.csv")),
			    "time_s,rank,pid,component,rss_bytes,pss_bytes\n"
			    "0.000,0,4242,total,1048576,524288\n"
			    "1.500,3,4242,lib:libz.so,4096,0\n"
			    "12.346,,77,mpi,9223372036854775807,-1\n"
			    "0.000,,77,\"a,b\",1,2\n"
			    "2.001,0,1,\"say \"\"hi\"\"\",3,4\n");
	assert_int_equal(mode_of(at(fx, "rank-0.csv")), 0640);

	/* Recreating truncates, and resets a loose mode. */
	assert_int_equal(chmod(at(fx, "rank-0.csv"), 0666), 0);
	f = outdir_create(&od, "rank-0.csv");
	assert_non_null(f);
	assert_int_equal(csv_write_header(f), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(slurp(at(fx, "rank-0.csv")), CSV_HEADER "\n");
	assert_int_equal(mode_of(at(fx, "rank-0.csv")), 0640);

	/* Names that leave the directory are refused. */
	errno = 0;
	assert_null(outdir_create(&od, "../x.csv"));
	assert_int_equal(errno, EINVAL);
	assert_null(outdir_create(&od, ".."));
	assert_null(outdir_create(&od, ""));
	outdir_close(&od);
}

static void test_summary_text(void **state)
{
	struct summary_row row = {
		.rank = 2, .pid = 99, .component = "mpi",
		.peak_rss = 8192, .peak_rss_time = 1.25,
		.peak_pss = 4096, .peak_pss_time = 0.1,
		.final_rss = 100, .final_pss = 50,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(summary_write_header(f), 0);
	assert_int_equal(summary_write_row(f, &row), 0);
	row.rank = -1;
	row.component = "x\"y";
	assert_int_equal(summary_write_row(f, &row), 0);
	/* A process the OOM killer chose: when, and the component's growth before it. */
	row.oom = true;
	row.oom_time = 3.5;
	row.oom_growth = -4096;
	assert_int_equal(summary_write_row(f, &row), 0);
	/* A total row: how its peak was found, and the kernel's VmHWM (or none read). */
	row.oom = false;
	row.component = "total";
	row.peak_source = "events";
	row.kernel_hwm = 12288;
	assert_int_equal(summary_write_row(f, &row), 0);
	row.peak_source = "samples";
	row.kernel_hwm = -1;
	row.hwm_before_attach = true;
	assert_int_equal(summary_write_row(f, &row), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
			    "rank,pid,component,peak_rss_bytes,peak_rss_time_s,peak_pss_bytes,"
			    "peak_pss_time_s,final_rss_bytes,final_pss_bytes,oom_kill_time_s,oom_growth_bytes,"
			    "peak_source,kernel_hwm_bytes,hwm_before_attach\n"
			    "2,99,mpi,8192,1.250,4096,0.100,100,50,,,,,\n"
			    ",99,\"x\"\"y\",8192,1.250,4096,0.100,100,50,,,,,\n"
			    ",99,\"x\"\"y\",8192,1.250,4096,0.100,100,50,3.500,-4096,,,\n"
			    ",99,total,8192,1.250,4096,0.100,100,50,,,events,12288,0\n"
			    ",99,total,8192,1.250,4096,0.100,100,50,,,samples,,\n");
	free(buf);
}

/* Writes that do not land are reported, not lost silently. */
static void test_short_write(void **state)
{
	struct summary_row row = { .rank = 0, .pid = 1, .component = "app" };
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(csv_write_header(f), -1);
	assert_int_equal(csv_write_row(f, 1.0, 0, 1, "app", 1, 1), -1);
	assert_int_equal(csv_write_row(f, 1.0, 0, 1, "a,b", 1, 1), -1);
	assert_int_equal(summary_write_header(f), -1);
	assert_int_equal(summary_write_row(f, &row), -1);
	fclose(f);
}

static void test_file_symlink_refused(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[256], precious[128];

	snprintf(precious, sizeof(precious), "%s/precious", fx->base);
	assert_int_equal(mkdir(at(fx, "out"), 0750), 0);
	spit(precious, "do not touch\n");
	assert_int_equal(chmod(precious, 0600), 0);
	assert_int_equal(symlink(precious, at(fx, "out/rank-0.csv")), 0);
	assert_int_equal(outdir_open(&od, at(fx, "out"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);

	errno = 0;
	assert_null(outdir_create(&od, "rank-0.csv"));
	assert_int_equal(errno, ELOOP);
	assert_string_equal(slurp(precious), "do not touch\n");
	assert_int_equal(mode_of(precious), 0600);

	/* A hard link to it is neither truncated nor written. */
	assert_int_equal(link(precious, at(fx, "out/rank-1.csv")), 0);
	errno = 0;
	assert_null(outdir_create(&od, "rank-1.csv"));
	assert_int_equal(errno, EPERM);
	assert_string_equal(slurp(precious), "do not touch\n");
	assert_int_equal(mode_of(precious), 0600);

	/* A FIFO neither blocks the open nor is written. */
	assert_int_equal(mkfifo(at(fx, "out/rank-2.csv"), 0600), 0);
	assert_null(outdir_create(&od, "rank-2.csv"));
	outdir_close(&od);
}

/* Planted on a rank file's name: written beside it, never through it, never lost. */
static void test_create_beside(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[256], precious[128], used[80];
	const char *why;
	FILE *f;

	snprintf(precious, sizeof(precious), "%s/precious", fx->base);
	assert_int_equal(mkdir(at(fx, "out"), 0750), 0);
	spit(precious, "do not touch\n");
	assert_int_equal(chmod(precious, 0600), 0);
	assert_int_equal(symlink(precious, at(fx, "out/rank-0.csv")), 0);
	assert_int_equal(link(precious, at(fx, "out/rank-1.csv")), 0);
	assert_int_equal(mkfifo(at(fx, "out/rank-2.csv"), 0600), 0);
	assert_int_equal(symlink(precious, at(fx, "out/rank-3.1.csv")), 0);	/* the first spare too */
	assert_int_equal(outdir_open(&od, at(fx, "out"), (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);

	f = outdir_create_beside(&od, "rank-0.csv", used, sizeof(used), &why);
	assert_non_null(f);
	assert_string_equal(used, "rank-0.1.csv");
	assert_string_equal(why, "a symlink");
	assert_int_equal(fputs("row\n", f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(slurp(at(fx, "out/rank-0.1.csv")), "row\n");

	f = outdir_create_beside(&od, "rank-1.csv", used, sizeof(used), &why);
	assert_non_null(f);
	assert_string_equal(used, "rank-1.1.csv");
	assert_string_equal(why, "a hard link");
	fclose(f);

	f = outdir_create_beside(&od, "rank-2.csv", used, sizeof(used), &why);
	assert_non_null(f);
	assert_string_equal(used, "rank-2.1.csv");
	assert_string_equal(why, "a FIFO");
	fclose(f);

	assert_int_equal(mkfifo(at(fx, "out/rank-3.csv"), 0600), 0);
	f = outdir_create_beside(&od, "rank-3.csv", used, sizeof(used), &why);
	assert_non_null(f);
	assert_string_equal(used, "rank-3.2.csv");	/* never through the planted spare */
	fclose(f);

	/* A name with nothing planted on it is used as it is. */
	f = outdir_create_beside(&od, "rank-4.csv", used, sizeof(used), &why);
	assert_non_null(f);
	assert_string_equal(used, "rank-4.csv");
	assert_null(why);
	fclose(f);

	/* Nothing was written through a planted name, nor truncated. */
	assert_string_equal(slurp(precious), "do not touch\n");
	assert_int_equal(mode_of(precious), 0600);
	outdir_close(&od);
}

static void test_owner(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	struct stat st;
	char err[256];
	FILE *f;

	if (geteuid() != 0)
		skip();
	assert_int_equal(outdir_open(&od, at(fx, "out"), NOBODY, NOBODY, err, sizeof(err)), 0);
	assert_int_equal(stat(at(fx, "out"), &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_gid, NOBODY);
	f = outdir_create(&od, "rank-0.csv");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(stat(at(fx, "out/rank-0.csv"), &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_gid, NOBODY);
	assert_int_equal(st.st_mode & 07777, 0640);
	outdir_close(&od);

	/* A directory that was there keeps its owner. */
	assert_int_equal(outdir_open(&od, fx->base, NOBODY, NOBODY, err, sizeof(err)), 0);
	assert_int_equal(stat(fx->base, &st), 0);
	assert_int_equal(st.st_uid, 0);

	/* Someone else's file in the directory is not taken over. */
	spit(at(fx, "theirs.csv"), "theirs\n");
	assert_int_equal(chown(at(fx, "theirs.csv"), 12345, 12345), 0);
	errno = 0;
	assert_null(outdir_create(&od, "theirs.csv"));
	assert_int_equal(errno, EPERM);
	assert_string_equal(slurp(at(fx, "theirs.csv")), "theirs\n");
	/* ...but the invoking user's own is. */
	assert_int_equal(chown(at(fx, "theirs.csv"), NOBODY, NOBODY), 0);
	f = outdir_create(&od, "theirs.csv");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(slurp(at(fx, "theirs.csv")), "");
	outdir_close(&od);
}

static void test_summary_replace(void **state)
{
	struct fixture *fx = *state;
	struct output_dir od;
	char err[256], tmp[256], want[64], precious[128];
	FILE *f;

	assert_int_equal(outdir_open(&od, fx->base, (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);
	spit(at(fx, "summary.csv"), "old\n");

	f = outdir_begin_replace(&od, "summary.csv", tmp, sizeof(tmp));
	assert_non_null(f);
	snprintf(want, sizeof(want), ".summary.csv.tmp.%d", (int)getpid());
	assert_string_equal(tmp, want);
	assert_int_equal(mode_of(at(fx, tmp)), 0640);
	assert_int_equal(summary_write_header(f), 0);
	fflush(f);
	/* Readers see the old file until the commit. */
	assert_string_equal(slurp(at(fx, "summary.csv")), "old\n");
	assert_int_equal(outdir_commit(&od, f, tmp, "summary.csv"), 0);
	assert_string_equal(slurp(at(fx, "summary.csv")), SUMMARY_HEADER "\n");
	assert_int_equal(mode_of(at(fx, "summary.csv")), 0640);
	assert_int_equal(access(at(fx, tmp), F_OK), -1);

	/*
	 * A symlink planted on the temporary name and one on summary.csv:
	 * both are replaced as names, their target stays as it was.
	 */
	snprintf(precious, sizeof(precious), "%s/precious", fx->base);
	spit(precious, "do not touch\n");
	assert_int_equal(unlink(at(fx, "summary.csv")), 0);
	assert_int_equal(symlink(precious, at(fx, "summary.csv")), 0);
	assert_int_equal(symlink(precious, at(fx, want)), 0);
	f = outdir_begin_replace(&od, "summary.csv", tmp, sizeof(tmp));
	assert_non_null(f);
	assert_int_equal(fputs("new\n", f) >= 0, 1);
	assert_int_equal(outdir_commit(&od, f, tmp, "summary.csv"), 0);
	assert_string_equal(slurp(precious), "do not touch\n");
	assert_string_equal(slurp(at(fx, "summary.csv")), "new\n");
	assert_int_equal(mode_of(at(fx, "summary.csv")), 0640);	/* a file now, not the link */

	/* A temporary name that does not fit is refused. */
	errno = 0;
	assert_null(outdir_begin_replace(&od, "summary.csv", tmp, 10));
	assert_int_equal(errno, ENAMETOOLONG);
	/* A failed commit leaves the old file and no temporary. */
	f = outdir_begin_replace(&od, "summary.csv", tmp, sizeof(tmp));
	assert_non_null(f);
	assert_int_equal(outdir_commit(&od, f, tmp, "no/such"), -1);
	assert_string_equal(slurp(at(fx, "summary.csv")), "new\n");
	assert_int_equal(access(at(fx, tmp), F_OK), -1);
	assert_int_equal(outdir_commit(&od, NULL, tmp, "summary.csv"), -1);
	outdir_close(&od);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_name),
		cmocka_unit_test_setup_teardown(test_open_creates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_not_writable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows, setup, teardown),
		cmocka_unit_test(test_summary_text),
		cmocka_unit_test(test_short_write),
		cmocka_unit_test_setup_teardown(test_file_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_beside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_replace, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
