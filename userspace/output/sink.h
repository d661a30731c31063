/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where figures go: the engine hands every output (CSV files, the terminal
 * summary, the live status line; later compressed CSV or metrics) the same
 * five moments of a job through this interface, with plain views of the
 * figures. A sink sees no engine structure, so a new output is one new
 * file, and the engine never formats a row.
 *
 * Order: job_begin once; then, any number of times, proc_sample (each live
 * process, each sample round), proc_end (a process retires: its last
 * figures; the engine frees it after) and job_summary (figures so far, with
 * the live processes); job_end once, after every process has ended.
 * An op a sink does not need is NULL. A view lives for the call only; its
 * component names live as long as the session, the names of its MPI
 * functions, stacks and heap sites for the call only. In job_summary,
 * views carry no state.
 */
#ifndef MEMATTR_SINK_H
#define MEMATTR_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One component's figures: latest sample and peaks. */
struct sink_comp {
	const char *name;
	int64_t rss, pss;
	int64_t peak_rss, peak_pss;
	double peak_rss_time, peak_pss_time;
	int64_t rss_at_total_peak;	/* its rss when the process's total peaked */
};

#define SINK_MAX	8	/* sinks one session may have */

/*
 * A malloc-family call site of a process (--heap), as the kernel counted
 * its calls. The engine names it ("libfoo.so.1:function+0x1a", else the
 * file and offset, else the bare address) and the component whose code
 * it is ("unattributed": none).
 */
struct sink_heap_site {
	const char *library;
	const char *site;
	uint64_t calls, frees;
	int64_t live_bytes, peak_bytes;
	uint64_t total_bytes;
};

/*
 * An MPI function of a process: the memory requests made inside it (every
 * mode: the outermost MPI function on the request's stack) and, with
 * --mpi-calls, how often it was called.
 */
struct sink_mpi_fn {
	const char *name;
	bool calls_counted;		/* --mpi-calls: calls is a count; else unknown */
	uint64_t calls;
	int64_t gained, released, peak;	/* bytes */
	double first_growth, last_growth;	/* time_s of growth, when gained > 0 */
};

/*
 * What the regions one allocation stack of a process made hold, now and
 * when the process's total peaked. The engine names its frames
 * ("file:function+0xOFF", outermost first, joined by ';', as heap sites
 * are named) and their files' GNU build IDs, joined the same way.
 */
struct sink_stack {
	const char *component;		/* the component the requests were charged to */
	const char *frames;		/* NULL: could not be named (out of memory) */
	const char *build_ids;
	int64_t rss, rss_at_peak;
};

/* A process as outputs see it. */
struct sink_proc {
	int rank;			/* -1: not an MPI rank */
	pid_t pid;
	const char *step;		/* Slurm step, "" when none */
	double time;			/* time_s of the latest sample */
	struct sink_comp total;
	const struct sink_comp *comps;	/* components that have had memory, by id */
	size_t ncomps;
	/*
	 * How total's peak was found: from every RSS change (the exact
	 * attribution's events), or the largest sample (sampled). The
	 * kernel's own peak (VmHWM) when the process ended, -1: not read;
	 * hwm_before_attach: its image ran before tracing began, so VmHWM
	 * may hold more than the tool saw.
	 */
	bool peak_from_events;
	int64_t kernel_hwm;
	bool hwm_before_attach;
	/*
	 * What the views carry in proc_end and job_summary only (none in
	 * proc_sample): its MPI functions with figures, its allocation stacks
	 * holding memory (now or at the peak), and with --heap its heap call
	 * sites.
	 */
	const struct sink_mpi_fn *mpi_fns;
	size_t nmpi_fns;
	const struct sink_stack *stacks;
	size_t nstacks;
	const struct sink_heap_site *heap_sites;
	size_t nheap_sites;
	/* --heap: the sites live when the total peaked (none: no peak read), counts as then. */
	const struct sink_heap_site *heap_peak_sites;
	size_t nheap_peak_sites;
	void **state;			/* this sink's slot in the process (NULL at first) */
};

/*
 * What was inferred at attach for memory held before it (issue 31): told
 * apart from what was observed. Summed over the job's processes.
 */
#define SINK_INFERRED_COMPS	16
struct sink_inferred {
	uint64_t processes;		/* processes whose memory was inferred */
	double seconds;			/* the tool's CPU time for it */
	double wall_seconds;
	uint64_t bytes_read;		/* of the processes' memory */
	uint64_t allocations;		/* allocations told apart (chunks, blocks) */
	uint64_t unattributed;		/* resident bytes no owner was found for */
	uint64_t budget_hits;		/* processes whose budget ended the reading */
	unsigned int n;
	struct {
		char name[64];
		uint64_t bytes;		/* resident bytes given to the component */
	} by[SINK_INFERRED_COMPS];
};

/*
 * The OOM killer chose one of the job's processes (an OOM post-mortem):
 * when, under which limit, its figures at its last sample and how they
 * grew before it, and the job's (its live processes') at that sample.
 * Components past the largest SINK_OOM_COMPS fold into "other". A plain
 * value: a sink may keep a copy.
 */
#define SINK_OOM_COMPS		16
#define SINK_OOM_NAME_LEN	64
struct sink_oom_comp {
	char name[SINK_OOM_NAME_LEN];
	int64_t rss;			/* bytes at the last sample */
	int64_t growth;			/* bytes gained over window_s before it (the job's: 0) */
};

struct sink_oom {
	int rank;			/* -1: not an MPI rank */
	pid_t pid;
	double time;			/* time_s when the kernel chose it */
	double sample_time;		/* time_s of its last sample, < 0: it had none */
	double window_s;		/* what growth spans, 0: no earlier sample */
	uint64_t limit_bytes;		/* the cgroup's limit, or the node's memory (global) */
	bool cgroup;			/* a cgroup's limit was reached, not the node's memory */
	char cgroup_dir[256];		/* that cgroup, in its hierarchy; "" when global */
	struct sink_oom_comp total;	/* the victim's, growth included */
	unsigned int n;
	struct sink_oom_comp by[SINK_OOM_COMPS];	/* the victim's components, largest first */
	struct sink_oom_comp job_total;
	unsigned int njob;
	struct sink_oom_comp job[SINK_OOM_COMPS];	/* the job's, largest first */
};

/* How the job's tracing went: what run_info.csv and the summaries report. */
struct sink_counters {
	uint64_t events, rss_events, syscall_events;
	uint64_t dropped, stack_read_failures, rss_without_cause, heap_untracked;
	uint64_t job_dropped;		/* of dropped (node-wide), this job's processes' records */
	double sample_gap_max_s;	/* the longest time between two of its samples */
	uint64_t samples_late;		/* samples more than twice the interval after the one before */
	/* samples whose rows went out with records older than their reads still unread (held_records_catch_up) */
	uint64_t samples_behind;
	uint64_t requests, unwind_failures;	/* over every process, ended ones too */
	uint64_t unwind_walks, unwind_walk_ns;	/* CFI walks of the requests, and their time */
	uint64_t unwind_fallbacks;		/* walks the word scan had to finish */
	uint64_t interposer_hooks;		/* libc calls found patched, summed over processes */
	uint64_t procs_traced;		/* every process the job had while traced */
	/* Sampled attribution: the reads that counted a process's pages again, and their time. */
	uint64_t recounts, recounts_touched, recount_ns;
	uint64_t recount_read_bytes;	/* address space the counts of pages read (page tables) */
	uint64_t procs_refused;
	/* Lost precision: events whose process or place was not known. */
	uint64_t unknown_pid_events;	/* no traced process had the pid (node-wide) */
	uint64_t unplaced_events;	/* fault addresses in no known region, until the maps reread */
	uint64_t traced_map_full;	/* processes the kernel's traced map had no room for (node-wide) */
	/* Not lost: records that could change no figure (node-wide). */
	uint64_t ended_events;		/* of processes (or images) gone before any row showed them,
					 * or come after a process's last row */
	bool probing;
	uint64_t probes_attached, probe_failures;
	uint64_t output_errors;		/* files of the run that could not be written whole */
	bool oom_watched;		/* the kernel reports OOM kills (oom:mark_victim attached) */
	/*
	 * The node service attaches its node-wide programs for its first job
	 * (options.h probes_on_demand): how long the job's first process ran
	 * on before they were (0: attached already; its requests of that time
	 * are found in its maps, like those of a process traced late).
	 */
	bool node_programs_on_demand;
	double node_programs_wait_ms;
	struct sink_inferred inferred;	/* at attach (processes == 0: none) */
};

/* The job as outputs see it. */
struct sink_job {
	const char *id;			/* --job ID, or NULL */
	const char *job;		/* the job for merging: id, else the tool's own Slurm job, or "" */
	const char *node;		/* this node's name (node_name.h) */
	bool finished;			/* these are the run's last figures */
	const char *dir;		/* output directory, NULL when there is none */
	double now;			/* time_s */
	double start_realtime;		/* CLOCK_REALTIME seconds when tracing began */
	unsigned int interval_ms;
	double problem_size;		/* --problem-size, 0: not given */
	const char *modes;		/* "mpi-calls heap", "" */
	bool sampled;			/* --attribution sampled */
	bool memory_calls_fentry;	/* the memory calls through fentry, not the syscall tracepoints */
	const char *version;
	const char *cmdline;
	struct sink_counters c;
};

struct sink;

struct sink_ops {
	int (*job_begin)(struct sink *s, const struct sink_job *j);
	void (*proc_sample)(struct sink *s, const struct sink_job *j, const struct sink_proc *p);
	void (*proc_end)(struct sink *s, const struct sink_job *j, const struct sink_proc *p);
	void (*job_summary)(struct sink *s, const struct sink_job *j,
			    const struct sink_proc *const *live, size_t nlive);
	void (*job_end)(struct sink *s, const struct sink_job *j);
	/* The OOM killer chose a process of the job (before its proc_end). */
	void (*job_oom)(struct sink *s, const struct sink_job *j, const struct sink_oom *o);
	void (*destroy)(struct sink *s);	/* frees s */
};

struct sink {
	const struct sink_ops *ops;
};

/* The sinks of this tree. */
struct output_dir;
/* rank files (rank-<R>.csv, or .csv.gz when compress), summary.csv, run_info.csv */
struct sink *csv_sink_new(struct output_dir *dir, bool compress);
/* run_info.csv's OOM rows (the CSV sink's; for its tests): the first 8 kills in full (ooms NULL: none kept). */
void csv_write_oom_info(FILE *f, bool watched, const struct sink_oom *ooms, unsigned int nooms);
struct metrics;
/* The job's live processes into the node's metrics (user: uid's name); its series vanish when it ends. */
struct sink *metrics_sink_new(struct metrics *m, const char *job, const char *user, uid_t uid);
struct sink *term_sink_new(void);			/* the summary printed at the end */
struct sink *heap_sites_sink_new(struct output_dir *dir);	/* heap_sites.csv (--heap) */
struct sink *heap_peak_sink_new(struct output_dir *dir);	/* heap_sites_peak.csv (--heap) */
struct sink *mpi_calls_sink_new(struct output_dir *dir);	/* mpi_calls.csv */
struct sink *alloc_stacks_sink_new(struct output_dir *dir);	/* alloc_stacks.csv */
struct sink *status_sink_new(void);			/* NULL when stdout is not a terminal */

#endif
