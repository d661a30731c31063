/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node's figures as Prometheus sees them: the live processes of every
 * job (fed by the metrics sink), the service's own counters, and their
 * exposition in the Prometheus text format 0.0.4 or OpenMetrics 1.0.
 *
 * A job's series are labelled job and uid: a job ID known from the
 * environment only is any user's to claim, so the ID alone does not tell
 * two users' jobs apart, and the uid is one value per job (no series
 * more). The user's name is on one series per job, memattr_job_info.
 * By default (MX_DETAIL_JOB) only per-job series are served; with
 * MX_DETAIL_RANK also per-rank ones, labelled step (Slurm's, "" when none:
 * an absent label to Prometheus) and rank: ranks of two steps running at
 * once are apart. Cardinality is bounded here, not by the scraper:
 * processes that are not ranks are summed under rank="other" (per step),
 * and so are a job's ranks past its max_ranks largest (by resident bytes);
 * a job's components past its largest METRICS_TOP_COMPONENTS fold into
 * component="other"; a job's series vanish with it (metrics_job_remove).
 */
#ifndef MEMATTR_METRICS_H
#define MEMATTR_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define METRICS_TOP_COMPONENTS	16
#define METRICS_DEFAULT_MAX_RANKS	32

enum mx_detail {
	MX_DETAIL_JOB,		/* per-job series only */
	MX_DETAIL_RANK,		/* and per-rank series, max_ranks of them per job */
};

/* One component of one live process; name lives as long as the job's session. */
struct mx_comp {
	const char *name;
	int64_t rss, pss, peak_rss;
};

#define MX_STEP_LEN	16

struct mx_proc {
	int rank;			/* < 0: not a rank (rank="other") */
	char step[MX_STEP_LEN];		/* Slurm step ("0", "batch"), "" when none */
	struct mx_comp total;
	struct mx_comp *comps;
	size_t ncomps, cap;
	struct mx_proc *next, **pprev;
};

struct mx_job {
	char *id, *user;
	uid_t uid;
	struct mx_proc *procs;
	uint64_t dropped;		/* its processes' records the ring buffer had no room for */
	struct mx_job *next;
};

/*
 * OOM kills by job and rank. Kept after their job ends (a killed job
 * often ends at once, before any scrape), the oldest replaced past
 * METRICS_OOM_KEEP: a counter restarting from 1 is one Prometheus reads.
 */
#define METRICS_OOM_KEEP	64
struct mx_oom {
	char job[128];
	uid_t uid;
	int rank;			/* < 0: rank="other" */
	uint64_t kills;
};

struct metrics {
	enum mx_detail detail;
	unsigned int max_ranks;		/* MX_DETAIL_RANK: rank series per job; 0: the default */
	struct mx_job *jobs;
	struct mx_oom oom[METRICS_OOM_KEEP];
	unsigned int noom, oom_next;	/* entries used; the one replaced next when full */
};

enum mx_refusal {
	MX_REFUSED_MAX_JOBS,
	MX_REFUSED_MAX_PROCS,
	MX_REFUSED_MAP_FULL,
	MX_REFUSED_MAX_USER_JOBS,	/* the job's user has --max-jobs-per-user traced already */
	MX_REFUSED_SPOOL_DIRS,		/* traced, but no spool directory: --max-spool-dirs-per-user */
	MX_REFUSED_NR,
};

#define MX_MAPS	4

/* The service's own figures, filled by the daemon before each render. */
struct mx_self {
	uint64_t events, dropped, unwind_failures;
	uint64_t jobs, processes;
	uint64_t execs_examined;	/* untraced execs whose environment was read */
	/* The node-wide programs (the memory syscalls' tracepoints ...): attached now, times attached. */
	bool node_programs;
	uint64_t node_program_attaches;
	uint64_t execs_skipped;		/* untraced execs the kernel showed no job evidence in */
	uint64_t execs_undecided;	/* ... and those it could not judge (reported) */
	uint64_t refused[MX_REFUSED_NR];
	struct { const char *name; uint64_t entries, max; } maps[MX_MAPS];
	size_t nmaps;
	const char *version;
	const char *attribution;	/* "sampled" or "exact": what the figures mean (NULL: no series) */
	const char *memory_calls;	/* "fentry" or "tracepoints" (syscall_hooks.h; NULL: no series) */
	int64_t rss_bytes;		/* the daemon's own VmRSS */
	double cpu_seconds;		/* its user + system time */
};

/* A job's entry, owned by m until metrics_job_remove; NULL when out of memory. */
struct mx_job *metrics_job_add(struct metrics *m, const char *id, const char *user, uid_t uid);
void metrics_job_remove(struct metrics *m, struct mx_job *j);

/* A process's latest figures (*slot NULL at first: a new entry). 0 or -ENOMEM. */
int metrics_proc_update(struct mx_job *j, struct mx_proc **slot, int rank, const char *step,
			const struct mx_comp *total, const struct mx_comp *comps, size_t n);
void metrics_proc_remove(struct mx_proc **slot);

/* The OOM killer chose a process of job j (its rank, < 0: none): memattr_oom_kills_total. */
void metrics_oom_count(struct metrics *m, const struct mx_job *j, int rank);

/* "job" or "rank" into *out: 0, or -1 when it is neither. */
int metrics_detail_parse(const char *s, enum mx_detail *out);

/* The exposition: Prometheus text 0.0.4, or OpenMetrics 1.0 (ends in "# EOF"). */
int metrics_render(FILE *f, const struct metrics *m, const struct mx_self *self, bool openmetrics);

/* A label value as the formats want it: \\, \" and \n escaped. */
void metrics_put_label(FILE *f, const char *v);

#define METRICS_CT_TEXT	"text/plain; version=0.0.4; charset=utf-8"
#define METRICS_CT_OM	"application/openmetrics-text; version=1.0.0; charset=utf-8"

#endif
