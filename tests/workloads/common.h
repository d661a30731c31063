/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers of the ground-truth workloads: a CLOCK_MONOTONIC event log
 * the tests can line up with memattr-bpf's CSV samples, page touching that
 * makes every page resident, and a "go" file so a test can attach the tool
 * before the interesting part starts.
 */
#ifndef WORKLOAD_COMMON_H
#define WORKLOAD_COMMON_H

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

static inline double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static inline void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	MPI_Abort(MPI_COMM_WORLD, 3);
	exit(3);
}

/* One CSV log per rank: event,mono_s,rank,pid,bytes. NULL dir: no log. */
static FILE *event_log;
static int log_rank;

static inline void log_open(const char *dir, const char *prog, int rank)
{
	char path[4096];

	log_rank = rank;
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s-rank-%d.csv", dir, prog, rank);
	event_log = fopen(path, "w");
	if (!event_log)
		die("%s: cannot write %s: %s", prog, path, strerror(errno));
	fprintf(event_log, "event,mono_s,rank,pid,bytes\n");
	fflush(event_log);
}

/* Flushed at once: a test may read the log while the rank still runs. */
static inline void log_event(const char *event, size_t bytes)
{
	if (!event_log)
		return;
	fprintf(event_log, "%s,%.6f,%d,%d,%zu\n", event, mono_now(), log_rank,
		(int)getpid(), bytes);
	fflush(event_log);
}

static inline void log_close(void)
{
	if (event_log)
		fclose(event_log);
	event_log = NULL;
}

/*
 * The held workloads' absolute truth (check_truth.py --absolute):
 * DIR/expect-rank-R.csv, one line per plateau and component, the program's
 * (app) and libtruth.so's bytes. expect_open: 0, or -1 with errno.
 */
static FILE *held_expect_log;

static inline int held_expect_open(const char *dir, int rank)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/expect-rank-%d.csv", dir, rank);
	held_expect_log = fopen(path, "w");
	if (!held_expect_log)
		return -1;
	fprintf(held_expect_log, "plateau,first_event,last_event,component,bytes\n");
	return 0;
}

static inline void held_expect(const char *plateau, const char *first, const char *last, int64_t app,
			  int64_t lib)
{
	fprintf(held_expect_log, "%s,%s,%s,app,%lld\n", plateau, first, last, (long long)app);
	fprintf(held_expect_log, "%s,%s,%s,lib:libtruth.so,%lld\n", plateau, first, last, (long long)lib);
	fflush(held_expect_log);
}

/*
 * Write one byte per page so every page becomes resident. The pattern depends
 * on the page index and a seed, so a later check can tell corruption.
 */
/* Write the pattern check_pages expects into the pages of p in [from, to). */
static inline void touch_range(volatile unsigned char *p, size_t from, size_t to, unsigned seed)
{
	long pg = sysconf(_SC_PAGESIZE);

	for (size_t off = from - from % (size_t)pg; off < to; off += (size_t)pg)
		p[off] = (unsigned char)((off / (size_t)pg) * 31u + seed + 1u);
}

static inline void touch_pages(volatile unsigned char *p, size_t len, unsigned seed)
{
	touch_range(p, 0, len, seed);
}

/* Returns the number of pages whose pattern byte is wrong. */
static inline size_t check_pages(const volatile unsigned char *p, size_t len, unsigned seed)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t bad = 0;

	for (size_t off = 0; off < len; off += (size_t)pg)
		if (p[off] != (unsigned char)((off / (size_t)pg) * 31u + seed + 1u))
			bad++;
	return bad;
}

/* Rank 0 polls for the go file (if any); everyone then meets at a barrier. */
static inline void wait_for_go(int rank, const char *go_file, int timeout_s)
{
	if (rank == 0 && go_file) {
		double deadline = mono_now() + timeout_s;

		while (access(go_file, F_OK) != 0) {
			if (mono_now() > deadline)
				die("go file %s did not appear within %d s", go_file, timeout_s);
			sleep_ms(10);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static inline long parse_long(const char *prog, const char *flag, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		die("%s: %s needs a non-negative integer, got '%s'", prog, flag, s);
	return v;
}

#endif
