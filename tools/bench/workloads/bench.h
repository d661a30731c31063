/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers of the benchmark workloads (tools/bench/workloads).
 *
 * Start protocol, so a tracer can attach to a running job before the timed
 * part begins (and untraced runs go through exactly the same steps):
 *   --ready-dir D  each process writes D/ready.<rank> (its pid) once set up;
 *   --go-file F    then waits until F exists; everyone meets at a barrier.
 * Results go to stdout as "RESULT <metric> <value> <unit>" lines (rank 0).
 *
 * Time-boxed measurements run batches whose size doubles until the box is
 * full, so a run lasts about as long traced at 1000x cost as untraced, and
 * per-operation figures stay comparable.
 */
#ifndef BENCH_H
#define BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)
#define KIB 1024UL

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * CPU time of the whole process (all its threads), in seconds: what a
 * tracer adds to the process's own path (its faults and syscalls), without
 * the time other tasks took the CPU from it (the tracer's user space among
 * them, and on a shared machine everyone else).
 */
static inline double process_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void bench_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

struct bench_opts {
	const char *ready_dir;
	const char *go_file;
	const char *stop_file;
	double seconds;		/* time box of each measurement */
	long n;			/* workload-specific count */
	long mib;		/* workload-specific size */
	long rate;		/* workload-specific rate */
	long threads;		/* workload-specific thread count */
};

static inline long bench_long(const char *flag, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		bench_fail("%s needs a non-negative integer, got '%s'", flag, s);
	return v;
}

/* Common flags; unknown ones are fatal. */
static inline void bench_parse(int argc, char **argv, struct bench_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			bench_fail("%s needs a value", a);
		if (!strcmp(a, "--ready-dir"))
			o->ready_dir = v;
		else if (!strcmp(a, "--go-file"))
			o->go_file = v;
		else if (!strcmp(a, "--stop-file"))
			o->stop_file = v;
		else if (!strcmp(a, "--seconds"))
			o->seconds = atof(v);
		else if (!strcmp(a, "--n"))
			o->n = bench_long(a, v);
		else if (!strcmp(a, "--mib"))
			o->mib = bench_long(a, v);
		else if (!strcmp(a, "--rate"))
			o->rate = bench_long(a, v);
		else if (!strcmp(a, "--threads"))
			o->threads = bench_long(a, v);
		else
			bench_fail("unknown option %s", a);
		i++;
	}
	if (o->seconds <= 0)
		o->seconds = 1.0;
}

/* ready.<rank> holds the pid: the harness attaches per-process tracers by it. */
static inline void bench_ready(const struct bench_opts *o, int rank)
{
	char path[4096], tmp[4200];
	FILE *f;

	if (!o->ready_dir)
		return;
	snprintf(path, sizeof(path), "%s/ready.%d", o->ready_dir, rank);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		bench_fail("cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	if (rename(tmp, path))
		bench_fail("cannot rename %s: %s", tmp, strerror(errno));
}

/* Poll for a file (1 ms steps); give up after timeout_s. */
static inline void bench_wait_file(const char *file, int timeout_s)
{
	double deadline = now_s() + timeout_s;

	if (!file)
		return;
	while (access(file, F_OK) != 0) {
		if (now_s() > deadline)
			bench_fail("%s did not appear within %d s", file, timeout_s);
		sleep_ms(1);
	}
}

/*
 * Time box: batches of operations, the first ones (until a tenth of the box
 * is spent) a warm-up that is not counted, then counted batches until the box
 * is full. A batch doubles the last one, but never plans past the end of the
 * box by more than a few percent, so a run takes about 1.1 x the box however
 * slow each operation is (as long as one operation fits in it).
 */
struct box {
	double len;		/* seconds to count */
	double warm_spent, spent;
	unsigned long batch, counted;
	int warm;
};

static inline void box_init(struct box *b, double len)
{
	memset(b, 0, sizeof(*b));
	b->len = len;
	b->batch = 1;
	b->warm = 1;
}

/* Book a batch of b->batch operations that took el seconds; next batch size, 0 = done. */
static inline unsigned long box_next(struct box *b, double el)
{
	double per = el / (double)b->batch, left;
	unsigned long plan;

	if (b->warm) {
		b->warm_spent += el;
		if (b->warm_spent >= b->len / 10)
			b->warm = 0;
	} else {
		b->spent += el;
		b->counted += b->batch;
		if (b->spent >= b->len)
			return 0;
	}
	left = b->warm ? b->len / 10 - b->warm_spent : b->len - b->spent;
	plan = per > 0 ? (unsigned long)(left / per * 1.02) + 1 : b->batch * 2;
	b->batch = plan < b->batch * 2 ? plan : b->batch * 2;
	if (b->batch < 1)
		b->batch = 1;
	return b->batch;
}

/* Defeat dead-store elimination of buffers we only write. */
static volatile unsigned long bench_sink;

#endif
