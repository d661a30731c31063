/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engine as the commands see it: one tracker (one BPF object), the
 * sessions (one per job) it feeds, and what may be asked of them. Both are
 * opaque: their structures are the engine's (internal/tracker.h,
 * internal/session.h, on engine/'s include path only).
 *
 * Life of a tracker: tracker_new, sessions and their processes and outputs,
 * tracker_run until done, tracker_finish (final figures, BPF detached; the
 * counters stay readable), tracker_free.
 *
 * A session is freed by the engine when its last process ended (inside
 * tracker_run, after hooks->session_ended) or in tracker_finish: a pointer
 * to one is good until then, and never across a return into tracker_run.
 */
#ifndef MEMATTR_ENGINE_H
#define MEMATTR_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discovery.h"
#include "options.h"
#include "sink.h"

struct spec_set;
struct tracker;
struct session;

/*
 * The node service's say in the engine (none for the per-job command):
 * execs of untraced processes, a call each sample round, and a run that
 * goes on when no job is left.
 */
struct tracker_hooks {
	void *ctx;
	/* An untraced process exec'd (the kernel reports it with slot 0). */
	void (*untraced_exec)(void *ctx, struct tracker *t, pid_t pid);
	/* Each sample round, after the sessions were sampled and ended ones freed. */
	void (*tick)(void *ctx, struct tracker *t, double now);
	/* A session's last process ended: called before the session is freed. */
	void (*session_ended)(void *ctx, struct tracker *t, struct session *s);
};

/*
 * Load the BPF object and attach: a tracker with no session yet. opt, specs
 * and cmdline (for run_info.csv) must outlive it. NULL on failure, with err
 * saying why.
 */
struct tracker *tracker_new(const struct options *opt, const struct spec_set *specs,
			    const char *cmdline, char *err, size_t errlen);

/*
 * Hooks for the run to come (NULL: none, the run ends with its sessions).
 * *hooks must outlive the tracker's run.
 */
void tracker_set_hooks(struct tracker *t, const struct tracker_hooks *hooks);

/*
 * The kernel reports the exec of every process that may belong to a job
 * (hooks->untraced_exec): one whose environment holds a job variable or
 * whose cgroup names a Slurm job (bpf/exec_filter.h). Or it stops.
 */
int tracker_watch_exec(struct tracker *t, bool on);

/*
 * Untraced execs the kernel did not report (no job evidence), and those it
 * could not judge and reported (an environment past its bound, a failed
 * read), as of the last refresh of the kernel's counters (each sample).
 */
void tracker_exec_filter_counts(const struct tracker *t, uint64_t *skipped, uint64_t *undecided);

/* A new session for job (NULL: processes given by pid), with no process yet. */
struct session *tracker_new_session(struct tracker *t, const char *job, enum job_match match);

/*
 * Start tracing pid in session s. follow_only: its children are traced, it
 * is not accounted (a launcher). 0 (also when pid was gone: nothing
 * traced), or -errno.
 */
int tracker_add_pid(struct tracker *t, struct session *s, pid_t pid, bool follow_only);

/*
 * After s's first processes were added (tracker_add_pid): adds the live
 * descendants of s's processes that no session holds and the kernel does
 * not follow (forked after the scan that found their parent, before the
 * parent was traced), again until one reading of /proc finds none. How many
 * were added, or -errno. *queued (may be NULL): the descendants the kernel
 * follows whose fork record is still queued (not in s yet).
 */
int tracker_adopt_descendants(struct tracker *t, struct session *s, size_t *queued);

/* Open s's output directory and its sinks; figures are written as processes are sampled. */
int tracker_open_output(struct tracker *t, struct session *s, const char *dir,
			char *err, size_t errlen);
/* The same with the files' owner and group given ((uid_t)-1 / (gid_t)-1: keep). */
int tracker_open_output_as(struct tracker *t, struct session *s, const char *dir,
			   uid_t uid, gid_t gid, char *err, size_t errlen);

/* Run until every session ended, --duration, or *stop becomes true. 0, or -1 (said why). */
int tracker_run(struct tracker *t, volatile sig_atomic_t *stop);

/*
 * Sample at once when fd becomes readable (the launched command's pidfd:
 * its exit ends the job, and the tool need not wait for the next sample).
 */
int tracker_sample_on(struct tracker *t, int fd);

/*
 * End every session (final samples, summary.csv, the terminal summary);
 * detach BPF. The counters stay readable until tracker_free.
 */
void tracker_finish(struct tracker *t);

/* Frees t (after tracker_finish; NULL is fine). */
void tracker_free(struct tracker *t);

/* Monotonic seconds since attach. */
double tracker_now(const struct tracker *t);

/* How the tracing went so far, node-wide (every session). */
struct tracker_counters {
	uint64_t events;		/* every record, routed or not */
	uint64_t unknown_pid_events;	/* records of no traced process */
	uint64_t ended_events;		/* records that could change no figure (sink.h) */
	uint64_t dropped;		/* records the kernel could not queue (refreshed each sample) */
	uint64_t traced_map_full;	/* processes the kernel's traced map had no room for */
	uint64_t output_errors;		/* files of ended sessions not written whole */
	/* The node-wide programs (options.h probes_on_demand): attached now, and how often they were. */
	bool global_probes;
	uint64_t global_probe_attaches;
};

void tracker_counters(const struct tracker *t, struct tracker_counters *c);

/* With probes_on_demand: how long the node-wide programs stay after the last traced process (< 0: never detached). */
void tracker_set_probe_hold(struct tracker *t, double hold_s);

/* A BPF map's fill (its entries now, its size). 0, or -errno. */
int tracker_map_fill(struct tracker *t, const char *map, uint64_t *entries, uint64_t *max);

/* Is pid a live process of any session? */
bool tracker_traces(const struct tracker *t, pid_t pid);

/* The sessions, oldest first: for (s = tracker_first_session(t); s; s = session_next(s)). */
struct session *tracker_first_session(const struct tracker *t);
struct session *session_next(const struct session *s);

/* The job ID the session traces, NULL when traced by pid or launched. */
const char *session_job(const struct session *s);

/*
 * Whose job (JOB_ANY_UID until known, discovery.h), and whether the batch
 * system vouches for it (Slurm's cgroup). Later processes join it only as
 * its owner's.
 */
uid_t session_owner(const struct session *s);
bool session_trusted(const struct session *s);
void session_set_owner(struct session *s, uid_t owner, bool trusted);

/*
 * When the job's tracing began, on the tracker's clock (tracker_now): its
 * time_s 0. The default, 0, is the tracker's start.
 */
void session_set_t0(struct session *s, double t0);

/* Its live processes. */
size_t session_nprocs(const struct session *s);

/* Its output directory (tracker_open_output) and a descriptor of it; NULL / -1: none. */
const char *session_output_dir(const struct session *s);
int session_output_fd(const struct session *s);

/*
 * One more output; the session owns k (destroyed on failure). 0 (also for
 * k NULL: nothing added), or -ENOSPC past SINK_MAX.
 */
int session_add_sink(struct session *s, struct sink *k);

/* Requests and unwind failures of every process so far, ended ones included. */
void session_counters(const struct session *s, struct sink_counters *c);

#endif
