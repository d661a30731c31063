/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One traced process: its region table and what its components hold.
 * Everything here is per process, so the same code serves one job or a
 * node-wide service. process.c is the attribution logic alone (events in,
 * figures out: the unit tests drive it with synthetic events);
 * proc_read.c feeds it from /proc.
 */
#ifndef MEMATTR_PROCESS_H
#define MEMATTR_PROCESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "classify.h"
#include "count_window.h"
#include "alloc_stack.h"
#include "components.h"
#include "gone_regions.h"
#include "heap_peak.h"
#include "held.h"
#include "memattr.h"
#include "memcg.h"
#include "mpi_fn.h"
#include "lost_records.h"
#include "regions.h"
#include "requester.h"
#include "trend.h"

#define PROC_MAX_REGIONS	65536	/* the kernel's default vm.max_map_count */
#define PROC_MAX_PENDING	256
#define PROC_MAX_CODE_MAPS	4096	/* executable mappings remembered */
#define PROC_OUT_SLOTS		8	/* per-process state of the outputs (sinks) */
#define PROC_EPOCHS		16	/* fault epochs remembered: reads of /proc since the last flush, and more */

/* Per component of one process: the latest sample and the peaks. */
struct comp_stats {
	int64_t rss, pss;
	int64_t peak_rss, peak_pss;
	double peak_rss_time, peak_pss_time;
	bool seen;		/* has had memory: written in every later sample */
};

/* A mapping of executable code: where probes go and call sites are named. */
struct code_map {
	uint64_t start, end, pgoff;
	comp_id owner;
	char *path;
};

/*
 * A read of the process's /proc figures ended, and the kernel's fault epoch
 * of its slot became epoch (even) at boot time ns: runs of that epoch or a
 * later one came after the read.
 */
struct fault_epoch {
	uint16_t epoch;
	uint64_t ns;
};

/* An anonymous mapping whose caller's library was not known yet. */
struct pending_owner {
	uint64_t start;
	uint64_t caller;
	bool map_stack;
};

#define PROC_TOUCHED_MAX	16	/* ranges kept between counts (sampled attribution) */

/*
 * The kernel's total of a process followed through its events between
 * samples (issue 32). With the exact attribution every change of its RSS
 * counters reaches user space (faults, runs of faults, memory calls, the
 * changes of no known cause), so the highest the total reached is known,
 * not only the highest of the samples. The components are taken at that
 * moment only when it is over: at the first decrease after a new high (or
 * a sample, or the end), one sum over the regions per peak, not per event.
 */
struct live_total {
	bool on;		/* every change comes as an event (not --attribution sampled) */
	bool anchored;		/* a sample's VmRSS read set bytes (false: the next one does) */
	uint64_t anchor_ns;	/* that read's time: what changed before it is in it (0: none) */
	int64_t bytes;		/* the read plus every change applied since, in the records' order */
	int64_t late;		/* of those, after the VmRSS read of the sample in progress */
	bool pending;		/* bytes passed the peak: its components not taken yet */
	double pending_time;	/* time_s when it did */
	uint64_t takes;		/* components taken at a peak (each a sum over the regions) */
};

struct proc {
	pid_t pid;
	uint64_t start_ticks;		/* /proc/PID/stat starttime when first read, 0: not yet:
					 * pid reuse never merges two processes */
	int rank;			/* -1: not an MPI rank, written as pid-<P>.csv */
	bool account;			/* launchers are followed, not accounted */
	bool alive;
	bool under_rank;		/* started by a rank or its commands (TRACED_UNDER_RANK) */
	bool exec_seen;			/* a forked child's identity is final after exec */
	bool unidentified;		/* exec'd, its rank and step not read yet (engine identity.c) */
	uint32_t kernel_flags;		/* TRACED_* as the kernel's traced map has them */
	bool from_scan;			/* found in /proc: its fork event may still be queued */
	double born_time;		/* time_s when tracing saw it first */
	char exe[PATH_MAX];
	char comm[17];
	char step[16];			/* its Slurm step ("0", "batch"), "" when none */

	struct region_table regions;
	struct code_reader code;	/* return addresses are checked against its code */
	uint64_t brk_cur;		/* current program break, 0 when unknown */
	uint64_t sync_boot_ns;		/* events older than the last smaps read are in it */
	struct gone_regions gone;	/* regions the latest reads dropped, for older records */
	double last_sync_time;
	double sync_cost;		/* seconds its last smaps read took, 0: none yet (engine) */
	/*
	 * The period between its smaps reads, in units of --pss-interval:
	 * doubled (up to MAPS_STRETCH_MAX) after a read that corrected the
	 * components by no more than 1% of its total (256 KiB at least),
	 * back to 1 after one that did. A rank in its compute loop
	 * (nothing to correct, no sharing changing its PSS) is read 4 times
	 * less often: the reads were a third of the tool's own time there.
	 */
	unsigned int maps_stretch;
#define MAPS_STRETCH_MAX	4
	double reread_time;		/* the last read asked for by a read's doubt (reread_maps) */
#define REREAD_MAPS_S	1.0		/* at most one such read in this many seconds */
	bool needs_sync;
	/*
	 * The read asked for is not put off for the smaps budget of a long
	 * read (exact mode's regions above VmRSS: every component is wrong
	 * until it comes).
	 */
	bool sync_urgent;
	/* Records of it were lost since its last read: the next read checks its regions (lost_records.h). */
	bool records_lost;
	bool image_unread;		/* exec'ed, its mappings not read yet: no region is known */
	struct pending_owner pending[PROC_MAX_PENDING];
	unsigned int npending;

	struct code_map *maps;		/* executable file mappings at the last smaps read */
	size_t nmaps;
	struct mpi_fn_table mpi_fns;	/* --mpi-calls */
	struct heap_site *heap_sites;	/* --heap: copied out of the kernel at exit */
	size_t nheap_sites;
	struct heap_peak heap_peak;	/* --heap: the sites live at the total's peak */
	int *link_fds;			/* uprobe_multi links of the opt-in modes here */
	size_t nlinks;
	char **probed_paths;		/* libraries already probed */
	size_t nprobed;
	bool mpi_probed, heap_probed;	/* a probe of that mode is in place */
	bool heap_deferred;		/* --heap: not probed before PROBES_HEAP_DEFER_S of life */

	/* Attribution quality, reported in the summary. */
	uint64_t unplaced_events;	/* fault addresses in no known region */
	uint64_t requests;		/* memory requests (mmap, brk, mprotect) seen */
	uint64_t unknown_callers;	/* ... whose requester the stack scan did not find */

	bool named;			/* its figures went out: the identity (rank) stays */
	struct held_records held;	/* records waiting for the end of a drain (held.h) */
	void *out_state[PROC_OUT_SLOTS];	/* the outputs' own, opaque here */
	struct proc *hash_next, *prev, *next;	/* the engine's process table */

	struct comp_stats total;
	struct comp_stats *comps;	/* indexed by comp_id */
	size_t ncomps;
	int64_t *peak_comp_rss;		/* every component's rss at the total's peak */
	struct live_total live;		/* the total between samples, for the peak */
	int64_t sample_peak;		/* the largest sampled total: the stacks' and heap sites' peak */
	/*
	 * The kernel's own high-water mark of the image (VmHWM), read when
	 * the process ended (or at the end of tracing), and whether the
	 * image was running before tracing began: then VmHWM may predate
	 * what the tool saw. Set by the engine.
	 */
	int64_t kernel_hwm;		/* bytes, -1: not read */
	bool image_before_attach;
	/* For an OOM post-mortem: samples kept, and its memory cgroup once read (NULL: not yet). */
	struct trend trend;
	struct memcg_ref *memcg;
	unsigned int memcg_reads;	/* samples that read memcg (it is read again while few) */
	bool oom_marked;		/* chosen by the OOM killer: no sample after */
	/*
	 * Allocation stacks of this image's requests (issue 35), and per
	 * stack id (index; 0 unused) its regions' rss at the last sample and
	 * at the total's peak, and their owner: written out at the end.
	 */
	struct alloc_stacks stacks;
	uint32_t req_stack;		/* the stack of the request being applied, 0: none */
	struct stack_fig {
		int64_t rss, rss_at_peak;
		comp_id owner;
	} *stack_figs;
	size_t nstack_figs;
	char **stack_names;		/* each stack's frames named, by id (the engine's writer); NULL: not yet */
	size_t nstack_names;

	/*
	 * A sample in two steps (proc_mark_sample, then proc_account once the
	 * ring buffer is drained): VmRSS read at sample_mark_ns, and the
	 * faults handled since that came after it, per component, which that
	 * VmRSS does not hold. 0: no sample in progress.
	 */
	uint64_t sample_mark_ns;
	int64_t sample_total;
	/*
	 * The VmRSS read right after the attach read of a process found
	 * running (engine fork_exec.c), a sample in progress until a round
	 * takes one: if the process ends, or tracing stops, before a round
	 * wrote any row of it, that sample is its row (session.c). Its
	 * figures: at attach_mark_ns, attach_total, tracker time attach_time.
	 */
	bool attach_pending;
	uint64_t attach_mark_ns;
	int64_t attach_total;
	double attach_time;
	/*
	 * Sampled attribution (engine sampled.c, core recount_gap.c): the gap
	 * between the kernel's total and its regions that the counts of all
	 * its pages agree on (what the process moved during a count is drift).
	 */
	int64_t recount_gap;
	/* The ranges requests mapped, grew or advised since the last count of all pages; full: count all. */
	struct touched_range { uint64_t start, end; } touched[PROC_TOUCHED_MAX];
	unsigned int ntouched;
	bool touched_full;
	/* The large regions still filling: the part of each a count still reads (count_window.h). */
	struct count_windows windows;
	uint64_t count_read_bytes;	/* address space its page counts read, for the cost */
	/*
	 * The fault epochs the sample's VmRSS read and the last smaps read
	 * ended with (the tracker steps the epoch around each read): what a
	 * call moved at one of them or after came after that read
	 * (ev_syscall.by_read). Not known (unit tests), a call is placed
	 * whole by its times.
	 */
	uint16_t sample_mark_epoch, sync_epoch;
	bool mark_epoch_known, sync_epoch_known;
	int64_t *late_rss;		/* indexed by comp_id, ncomps entries */
	/*
	 * A free in progress at the sample that freed before its VmRSS read
	 * (EV_SYSCALL_IN_FLIGHT): taken from the sample's components unless
	 * the call's own record comes before proc_account.
	 */
	struct {
		bool valid;
		uint32_t tid;
		uint64_t start, end;
		int64_t delta;
	} flight;

	/*
	 * Runs of faults (ev_run) carry an epoch, not a time: the last reads'
	 * epochs place them against this process's reads (a ring, the newest
	 * at nepochs - 1).
	 */
	struct fault_epoch epochs[PROC_EPOCHS];
	unsigned int nepochs;
};

struct proc *proc_new(pid_t pid, double now);

/* CLOCK_BOOTTIME in ns: the clock of the kernel's events. */
uint64_t boot_clock_ns(void);
void proc_free(struct proc *p);

/* Forget p's allocation stacks, their figures and names (a new image, or its parent's copy next). */
void proc_forget_stacks(struct proc *p);

/* Forget the address space (after exec) and ask for a fresh read. */
void proc_reset_mm(struct proc *p);

/*
 * child was just forked from parent: its address space is a copy, so the
 * parent's regions (with their owners) describe it until the child's own
 * first smaps read, and with code_maps its code maps too (what --heap's
 * call sites resolve by if it exits before that read; one string each, so
 * not copied when nothing needs them). -ENOMEM or 0.
 */
int proc_copy_mm(struct proc *child, const struct proc *parent, bool code_maps);

/* The process is gone: free what described its address space, keep its figures. */
void proc_release_mm(struct proc *p);

/*
 * Read /proc/PID/smaps: set every region's rss and pss to the kernel's,
 * classify file mappings, resolve pending owners. -errno when the process
 * is gone. (proc_read.c)
 */
int proc_sync(struct proc *p, const struct classifier *cls, double now);

/* An smaps entry over several regions, counted page by page (proc_sync_state). */
struct split_entry {
	uint64_t start, end;
	int64_t pss;
};

/*
 * The same from figures already read: begin (boot_ns: the event clock at
 * the read; older events are in it), one call per mapping in address
 * order, then end (ok false: the read failed, nothing changes).
 */
struct proc_sync_state {
	struct proc *p;
	const struct classifier *cls;
	struct code_map *maps;		/* rebuilt at every read */
	size_t nmaps;
	uint64_t prev_end;
	bool prev_code_writable;
	comp_id prev_owner;
	/*
	 * Resident bytes of [start, end) counted page by page (pagemap), for
	 * anonymous entries the kernel merged from several mappings;
	 * NULL (unit tests) keeps the estimate. Its first argument is
	 * resident_ctx.
	 */
	int64_t (*resident)(void *ctx, uint64_t start, uint64_t end);
	void *resident_ctx;
	/* Optional: the counts that follow lie in [start, end), read at once (page_count_ops.span). */
	int (*span)(void *ctx, uint64_t start, uint64_t end);
	/*
	 * Those entries, counted once the whole file is read: a count takes
	 * milliseconds, and the kernel has already written the next entries
	 * (read ahead), whose figures would then be taken as newer than they
	 * are (faults meanwhile lost until the next read).
	 */
	struct split_entry *split;
	size_t nsplit, split_cap;
	/* Each component's rss, then pss, before the read (2 * ncomps), NULL: none. */
	int64_t *before;
	struct lost_check lost;
	size_t ncomps;
};
struct vma_info;
void proc_sync_begin(struct proc_sync_state *s, struct proc *p,
		     const struct classifier *cls, uint64_t boot_ns);
int proc_sync_vma(const struct vma_info *v, void *state);
void proc_sync_end(struct proc_sync_state *s, bool ok, double now);

/* A read of p's figures ended: its slot's fault epoch is now epoch, at boot time ns. */
void proc_note_epoch(struct proc *p, uint16_t epoch, uint64_t ns);

/*
 * Apply one event; when is its time_s (for the per-MPI-function growth
 * times). A run of faults: each page of it to the region that holds it.
 */
void proc_apply_run(struct proc *p, const struct classifier *cls, const struct ev_run *e,
		    double when);
void proc_apply_rss(struct proc *p, const struct classifier *cls, const struct ev_rss *e,
		    double when);
void proc_apply_syscall(struct proc *p, const struct classifier *cls,
			const struct ev_syscall *e, double when);

/*
 * The end of p's figures (it exited, or tracing ends): the components at
 * a peak its events reached since the last sample are taken now.
 */
void proc_finish_peak(struct proc *p);

/* The code mapping holding addr, or NULL. */
const struct code_map *proc_code_map(const struct proc *p, uint64_t addr);

/*
 * Take a sample: total from the kernel (VmRSS), components from the region
 * table, the remainder in `unattributed`. Updates peaks. -errno when the
 * process is gone. (proc_read.c)
 */
int proc_sample(struct proc *p, const struct classifier *cls, double now);

/*
 * Sampled attribution: count, page by page (pagemap), the regions the
 * requests since the last count of all pages touched (mapped, grown,
 * advised): they keep filling as the program reaches their pages, long
 * after the request. 0, -E2BIG (more ranges than kept: count everything,
 * proc_sync), or -errno (gone, unreadable).
 */
int proc_count_touched(struct proc *p);

/* [start, end) may hold pages no count has seen: kept for the next count of the touched ranges. */
void proc_touch(struct proc *p, uint64_t start, uint64_t end);

/*
 * How a count reads pages (unit tests give their own): resident(), the
 * bytes of [start, end) in memory; span(), optional, that the ranges asked
 * next, in ascending order, lie in [start, end) (read at once). Each
 * returns -errno on failure.
 */
struct page_count_ops {
	int64_t (*resident)(void *ctx, uint64_t start, uint64_t end);
	int (*span)(void *ctx, uint64_t start, uint64_t end);
	/*
	 * Optional, right after resident() of the same [start, end): its first
	 * page not in memory (*first) and the end of its last one; false when
	 * all are in. Without it every region is read whole at every count.
	 */
	bool (*absent)(void *ctx, uint64_t start, uint64_t end, uint64_t *first, uint64_t *last_end);
};

/* The same with ops counting the pages (touched_count.c). */
int proc_count_touched_by(struct proc *p, const struct page_count_ops *ops, void *ctx,
			  uint64_t now_ns);

/*
 * Every region of p counted page by page, span by span: after a count of
 * all pages during which the process moved, the pages it faulted in
 * mappings already read. The kept ranges are then the regions that grew
 * since their last count (as many as are kept): the process was filling
 * them, and may have outrun this count too (proc_count_touched counts
 * them again). 0 or -errno. proc_count_all (proc_read.c) reads the
 * process's pagemap.
 */
int proc_count_all_by(struct proc *p, const struct page_count_ops *ops, void *ctx, uint64_t now_ns);
int proc_count_all(struct proc *p);

/*
 * The first step of a sample taken in two: read VmRSS now and mark the
 * time, so the events still in the ring buffer can be handled before the
 * components are summed: the faults before the mark are in that VmRSS, and
 * those after it are set apart. proc_account with p->sample_total then
 * completes it. -errno when the process is gone. (proc_read.c)
 */
int proc_mark_sample(struct proc *p);

/*
 * The same with the total given: split total_rss over the components
 * (scaled down when what the regions hold exceeds it), update the figures
 * and peaks. 0 or -ENOMEM.
 */
int proc_account(struct proc *p, const struct classifier *cls, int64_t total_rss, double now);

/*
 * Sampled attribution: the pages of the regions p's latest read of its
 * mappings found gone while the record of the call that unmapped them
 * has not come (by owner into rss, NULL or p->ncomps entries). The kernel
 * takes a mapping out of the process's tree before it zaps its pages and
 * lowers VmRSS: a rank preempted inside munmap (8 ranks on 2 cores) has
 * them in VmRSS, and in no mapping the read sees. Returns their sum.
 */
int64_t proc_gone_in_flight(const struct proc *p, int64_t *rss);

/*
 * A new VmRSS read (proc_mark_sample) replaced the one of a sample that
 * is not to be accounted: what was set apart from that one goes (the new
 * read holds it).
 */
void proc_drop_late(struct proc *p);

#endif
