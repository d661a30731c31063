/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tracing engine: the set of traced processes, the BPF event stream
 * applied to them, and the sampling loop that writes the timelines.
 */
#ifndef MEMATTR_TRACKER_H
#define MEMATTR_TRACKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf_loader.h"
#include "classify.h"
#include "cli.h"
#include "csv_out.h"
#include "job.h"
#include "probes.h"
#include "process.h"
#include "spec.h"
#include "status_line.h"

#define TRACKER_MAX_PROCS	4096	/* bounded: beyond it new processes are counted, not traced */

struct tracker {
	const struct options *opt;
	struct bpf_tracer bpf;
	struct probes probes;		/* --mpi-calls, --heap */
	struct status_line status;	/* on a terminal only */
	bool probing;
	struct classifier cls;
	const struct spec_set *specs;
	struct output_dir out;
	bool out_open;

	struct proc **procs;		/* every process seen, exited ones included */
	size_t nprocs;
	uint64_t procs_refused;		/* past TRACKER_MAX_PROCS */

	enum job_match match;
	pid_t self;
	double start_mono;		/* CLOCK_MONOTONIC at attach */
	uint64_t start_boot_ns;		/* CLOCK_BOOTTIME then: the kernel's event clock */
	double last_scan, last_summary;
	double pss_period;		/* seconds between smaps reads of one process */
	double smaps_cost;		/* running mean of one smaps read, seconds */

	uint64_t events, rss_events, syscall_events;
	uint64_t unknown_pid_events;
	uint64_t kstats[STAT_NR];	/* kernel-side counters at the end */
};

int tracker_init(struct tracker *t, const struct options *opt,
		 const struct spec_set *specs, char *err, size_t errlen);

/*
 * Start tracing pid. follow_only: its children are traced, it is not
 * accounted (a launcher).
 */
int tracker_add_pid(struct tracker *t, pid_t pid, bool follow_only);

/* Open the output directory and write as processes are sampled. */
int tracker_open_output(struct tracker *t, const char *dir, char *err, size_t errlen);

/* Run until every traced process exited, --duration, or *stop becomes true. */
int tracker_run(struct tracker *t, volatile int *stop);

/* Final sample, summary.csv and the terminal summary; detaches BPF. */
void tracker_finish(struct tracker *t);

/* Monotonic seconds since attach. */
double tracker_now(const struct tracker *t);

#endif
