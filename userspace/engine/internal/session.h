/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One job being traced: its live processes, its component names, its
 * outputs (sinks) and its counters. The engine (tracker.c) holds one BPF
 * object for every session and routes each event to its session by the
 * job slot the kernel side stamps on it (traced_proc.job). A session ends,
 * and frees all it holds, when its last process exits.
 */
#ifndef MEMATTR_SESSION_H
#define MEMATTR_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "classify.h"
#include "components.h"
#include "csv_out.h"
#include "discovery.h"
#include "engine.h"
#include "proc_table.h"
#include "sink.h"

#define SESSION_MAX_PROCS	4096	/* live processes; beyond it new ones are counted, not traced */

struct session {
	uint32_t id;			/* the kernel side's job slot, never 0 */
	char *job;			/* --job ID, NULL when traced by pid or launched */
	enum job_match match;
	uid_t owner;			/* whose job: JOB_ANY_UID until known (discovery.h) */
	bool trusted;			/* the batch system vouches for it (Slurm's cgroup) */
	double t0;			/* the tracker's time when this job's tracing began: its time_s 0 */
	struct comp_table comps;
	struct classifier cls;
	struct proc_table procs;	/* live processes only */
	struct sink *sinks[SINK_MAX];
	size_t nsinks;
	struct output_dir out;
	bool out_open;
	bool ending;			/* its last figures are being written */

	/* Counters of this job's events and processes. */
	uint64_t events, rss_events, syscall_events;
	uint64_t ended_requests, ended_unwind_failures;	/* of processes that ended */
	/* Sampled attribution's counts (sampled.c): of all pages, of touched regions only. */
	uint64_t recounts, recounts_touched, recount_ns;
	uint64_t recount_read_bytes;	/* address space the page counts read */
	uint64_t ended_walks, ended_walk_ns, ended_fallbacks, ended_hooks, ended_unplaced;
	uint64_t procs_traced;		/* ever added */
	uint64_t procs_refused;		/* past SESSION_MAX_PROCS */
	uint64_t oom_kills;		/* its processes the OOM killer chose */
	/* Records of its processes the ring buffer had no room for (job_drops, memattr.bpf.c). */
	uint64_t drops_base;		/* its kernel slot's count when it began */
	/*
	 * Its first process waited this long for the node-wide programs
	 * (tracker_probes_need), 0: they were attached already.
	 */
	double probe_attach_ms;
	uint64_t drops;			/* since, refreshed with the kernel's counters */
	uint64_t drops_followed;	/* drops when its processes' totals were last anchored (sample.c) */
	/* Its samples' spacing: a job another one starves says so (run_info). */
	double last_sample;		/* tracker time of its last sample, < 0: none yet */
	double max_sample_gap;		/* the longest between two of its samples */
	uint64_t late_samples;		/* samples more than twice the interval after the one before */
	uint64_t behind_samples;	/* samples accounted with records older than their reads unread */

	double last_summary, last_scan;
	/*
	 * The opt-in modes' figures of p into its view, for proc_end and
	 * job_summary, and freed after (mode_views.h: naming code needs the
	 * engine's symbol tables). NULL: the views carry none.
	 */
	void (*mode_view)(void *ctx, const struct session *s, struct proc *p, struct sink_proc *v);
	void (*mode_view_free)(struct sink_proc *v);
	void *mode_view_ctx;
	struct session *next;
};

struct session *session_new(uint32_t id, const char *job, const struct spec_set *specs);
/* Frees the session, its processes and its sinks (call session_end first). */
void session_free(struct session *s);

static inline struct proc *session_find(const struct session *s, pid_t pid)
{
	return proc_table_find(&s->procs, pid);
}

/* A new live process; NULL when refused (the cap) or out of memory. */
struct proc *session_add_proc(struct session *s, pid_t pid, double now);

/* The job begins: every sink is told once. 0, or the first sink's error. */
int session_begin(struct session *s, const struct sink_job *j);

/* p's latest sample to the sinks; from now on its identity stays. */
void session_sample(struct session *s, struct proc *p, const struct sink_job *j);

/*
 * The sample p's attach read took (proc.attach_pending), to the sinks at
 * its own time, if no row of p went out yet; else it is dropped.
 */
void session_attach_sample(struct session *s, struct proc *p, const struct sink_job *j);

/* p is gone: its figures to the sinks, then it is freed. */
void session_end_proc(struct session *s, struct proc *p, const struct sink_job *j);

/* The OOM killer chose one of its processes: to the sinks (before the process's end). */
void session_oom(struct session *s, const struct sink_oom *o, const struct sink_job *j);

/* Figures so far (summary.csv, ...). */
void session_summary(struct session *s, const struct sink_job *j);

/* Every process has ended: the sinks finish. */
void session_end(struct session *s, const struct sink_job *j);

#endif
