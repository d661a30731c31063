// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf report DIR`: the run's CSVs in, DIR/report.html out.
 *
 * Needs no privilege and touches no BPF: it reads files the tracer handed
 * to the user. The page is written to a temporary file in DIR and renamed
 * over report.html only once it is complete, so a failed run (bad input,
 * full disk) leaves no half page, and nothing is written through a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

#define REPORT_NAME	"report.html"
#define EXIT_USAGE	2

void report_usage(FILE *f)
{
	fputs("usage: memattr-bpf report DIR [RUN[:SIZE]...]\n"
	      "  Reads the CSVs a run wrote in DIR (rank-<R>.csv, pid-<P>.csv, summary.csv,\n"
	      "  mpi_calls.csv, run_info.csv) and writes DIR/" REPORT_NAME ": one self-contained\n"
	      "  page with per-rank timelines, the job total, heat maps and peak tables.\n"
	      "  Given other runs of the same program at other rank counts, the page also\n"
	      "  shows the memory model of DIR and them (as memattr-bpf model fits it).\n"
	      "  Memory is bounded: a timeline of more than 8192 samples is thinned as read\n"
	      "  (its peaks kept), and the page says so.\n", f);
}

static int fail(const char *msg)
{
	fprintf(stderr, "memattr-bpf report: %s\n", msg);
	return EXIT_FAILURE;
}

/* The page into a fresh temporary file in DIR, then renamed over report.html. */
static int write_report(int dirfd, const char *dir, struct rp_run *run, char *err, size_t errlen)
{
	char tmp[64];
	struct stat dst;
	FILE *f;
	int fd, bad, saved;

	snprintf(tmp, sizeof(tmp), ".%s.tmp.%d", REPORT_NAME, (int)getpid());
	/* A stale temp of ours, or a planted link: the name goes, never its target. */
	if (unlinkat(dirfd, tmp, 0) && errno != ENOENT)
		goto sys;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		goto sys;
	/* 0640 whatever the umask; under sudo, the run's owner keeps its report. */
	if (fchmod(fd, 0640) ||
	    (geteuid() == 0 && !fstat(dirfd, &dst) && fchown(fd, dst.st_uid, dst.st_gid))) {
		saved = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		errno = saved;
		goto sys;
	}
	f = fdopen(fd, "w");
	if (!f) {
		saved = errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		errno = saved;
		goto sys;
	}
	bad = rp_html_write(f, run) || fflush(f) || ferror(f) || fsync(fileno(f));
	saved = errno;
	if (fclose(f) && !bad) {
		bad = 1;
		saved = errno;
	}
	if (!bad && renameat(dirfd, tmp, dirfd, REPORT_NAME)) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		unlinkat(dirfd, tmp, 0);
		snprintf(err, errlen, "%s/%s: cannot write: %s", dir, REPORT_NAME,
			 saved ? strerror(saved) : "out of memory");
		return -1;
	}
	return 0;
sys:
	snprintf(err, errlen, "%s/%s: cannot write: %s", dir, REPORT_NAME, strerror(errno));
	return -1;
}

int report_dir(const char *dir, const char *model_html)
{
	struct rp_run *run;
	char err[RP_ERRLEN];
	size_t len = strlen(dir);
	int dirfd, ret = EXIT_FAILURE;

	if (len >= sizeof(run->dir))
		return fail("directory path too long");
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		snprintf(err, sizeof(err), "%s: %s", dir,
			 errno == ENOTDIR ? "not a directory" : strerror(errno));
		return fail(err);
	}
	run = calloc(1, sizeof(*run));
	if (!run) {
		close(dirfd);
		return fail("out of memory");
	}
	/* Bounded memory: a timeline longer than the charts can draw is thinned as read. */
	run->max_samples = RP_PROC_SAMPLES;
	run->bounded = true;
	if (rp_load_dir(run, dirfd, dir, err, sizeof(err))) {
		fail(err);
		goto out;
	}
	run->model_html = model_html;
	if (write_report(dirfd, dir, run, err, sizeof(err))) {
		fail(err);
		goto out;
	}
	printf("memattr-bpf report: wrote %s%s%s%s\n", dir, dir[len - 1] == '/' ? "" : "/", REPORT_NAME,
	       model_html ? " (with the memory model)" : "");
	ret = 0;
out:
	rp_run_free(run);
	free(run);
	close(dirfd);
	return ret;
}

int report_main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		report_usage(stdout);
		return 0;
	}
	if (argc != 2 || !argv[1][0] || argv[1][0] == '-') {
		report_usage(stderr);
		return EXIT_USAGE;
	}
	return report_dir(argv[1], NULL);
}
