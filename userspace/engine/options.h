/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the engine is asked to do: the options of one run, filled by the
 * command line (cmd/cli.c) -- or, later, by a daemon's configuration.
 */
#ifndef MEMATTR_OPTIONS_H
#define MEMATTR_OPTIONS_H

#define MEMATTR_VERSION "0.1.0"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#define CLI_MAX_SPECS	32

enum target_kind {
	TARGET_JOB,
	TARGET_PIDS,
	TARGET_LAUNCH,
};

struct options {
	enum target_kind target;
	const char *job;		/* --job */
	uid_t job_uid;			/* --job-user: whose claim of the ID, (uid_t)-1: not named */
	pid_t *pids;			/* --pid, malloc'ed */
	size_t npids;
	char **cmd;			/* -- CMD ARGS (points into argv) */
	const char *output;		/* --output (%n, %j expanded), NULL: ./memattr-<job or pid> */
	char *output_expanded;		/* what output points to when it was expanded */
	unsigned int interval_ms;	/* --interval */
	unsigned int pss_interval_ms;	/* --pss-interval */
	double duration_s;		/* --duration, 0: until the job ends */
	const char *specs[CLI_MAX_SPECS];
	size_t nspecs;
	const char *spec_dir;		/* --spec-dir: replaces the built-in specs */
	const char *socket;		/* --socket: the daemon's user socket, NULL: the default */
	size_t ringbuf_mb;
	int ready_fd;			/* --ready-fd: told once tracing started, 0: none */
	bool wait;			/* --wait: job may not exist yet */
	bool mpi_calls;			/* --mpi-calls: probe the spec's MPI entry points */
	bool heap;			/* --heap: probe the malloc family */
	bool compress;			/* --compress: rank timelines as rank-<R>.csv.gz */
	bool no_fault_frame;		/* --no-fault-frame: ma_fault_user gives faults' addresses */
	bool no_infer;			/* --no-infer: memory held before attach stays unattributed */
	bool sampled;			/* --attribution sampled: pages counted at samples, no program at faults */
	/*
	 * The node service: the node-wide programs only while a process is
	 * traced, and probe_hold_s after the last one ends (< 0: for ever;
	 * core/probe_hold.h). The per-job command keeps them from start to end.
	 */
	bool probes_on_demand;
	double probe_hold_s;
	/*
	 * The node service: execs of processes not traced yet are reported
	 * (tracker_watch_exec). Without it the kernel's exec filter is not
	 * even loaded: its verification was most of the per-job command's start.
	 */
	bool watch_exec;
	unsigned int infer_budget_mib;	/* --infer-budget: MiB read per process, 0: the default */
	double problem_size;		/* --problem-size: the run's N for `model`, 0: not given */
	bool verbose, quiet;
};

/* --attribution's names (the command line's and the node service's settings): 0, or -1. */
static inline int attribution_parse(const char *name, bool *sampled)
{
	if (!strcmp(name, "exact") || !strcmp(name, "sampled")) {
		*sampled = name[0] == 's';
		return 0;
	}
	return -1;
}

#endif
