/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF side as user space sees it: load, attach, the set of traced
 * processes, the event ring buffer and the kernel-side counters.
 */
#ifndef MEMATTR_BPF_LOADER_H
#define MEMATTR_BPF_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memattr.h"
#include "ring_budget.h"
#include "syscall_hooks.h"

struct memattr_bpf;
struct ring_buffer;

/*
 * The memory syscalls followed (memattr.h's NR_*): an entry and an exit
 * program each (fentry/fexit, or tracepoints: syscall_hooks.h).
 */
#define TRACER_SYSCALLS		MEMORY_SYSCALLS

struct bpf_tracer {
	struct memattr_bpf *skel;
	bool syscall_fentry;	/* the memory calls' links are fentry/fexit, not tracepoints */
	struct bpf_link *syscall_links[2 * TRACER_SYSCALLS];
	struct ring_buffer *rb;
	struct ring_budget budget;	/* between the ring and the engine's callback */
	bool watching;		/* epfd holds the ring buffer and watched_fd */
	bool watch_fired;
	int epfd;
	int watched_fd;		/* -1 once it fired */
	bool oom_watched;	/* oom:mark_victim attached: OOM kills are recorded */
	/*
	 * The node-wide programs (tracer_attach_global): attached now, and
	 * which of them this run has (rss_stat and the faults' in exact
	 * attribution only; ma_fault_user only where the fault's frame was
	 * not found).
	 */
	bool global_on;
	bool global_rss, global_fault_user, global_fault_kernel;
};

/* What the programs are asked to follow (the run's options). */
struct tracer_modes {
	bool mpi_calls, heap;	/* the opt-in modes' uprobes */
	bool fault_frame;	/* a user fault's address from its frame, where found */
	bool rss_events;	/* every RSS change of a traced process (exact attribution) */
	bool on_demand;		/* node-wide programs left for tracer_attach_global */
	bool watch_exec;	/* untraced execs may be reported (tracer_watch_exec): ma_exec's exec filter loaded */
};

/*
 * Load and attach every program (the uprobe programs of the opt-in modes
 * are attached per process by tracer_attach_uprobes; the maps of a mode
 * that is off are made as small as they can be). The memory syscalls'
 * tracepoints are found through tracefs (mounted if it is not).
 * fault_frame: user page faults' addresses come from their frames where
 * found (find_fault_frame), else from ma_fault_user. Without rss_events no
 * program runs at page faults or RSS changes, for any process: the
 * sampled attribution (docs/attribution.md) counts pages at samples
 * instead. On failure nothing stays attached and err holds one line.
 */
int tracer_open(struct bpf_tracer *t, size_t ringbuf_bytes, const struct tracer_modes *modes,
		event_fn fn, void *ctx, bool verbose, char *err, size_t errlen);

/*
 * The node-wide programs: ma_sys_enter/ma_sys_exit on the memory syscalls'
 * tracepoints (or their fentry/fexit pairs: syscall_hooks.h) and, with rss_events, ma_rss_stat and the page faults'.
 * While a syscall tracepoint is registered, every syscall of every process
 * on the node takes the kernel's traced path; rss_stat's and the faults'
 * run at every fault of the node. tracer_open attaches them unless
 * modes->on_demand; then the caller attaches them before it adds a
 * process (and reads its maps: what the process asked for before is
 * there) and detaches them when it traces none. The fork, exec, exit and
 * OOM programs stay attached throughout: they follow the traced set.
 * tracer_attach_global: 0, or -1 with err (nothing left attached).
 */
int tracer_attach_global(struct bpf_tracer *t, char *err, size_t errlen);
void tracer_detach_global(struct bpf_tracer *t);

/* Detach and free; safe on a tracer that failed to open. */
void tracer_close(struct bpf_tracer *t);

int tracer_add_process(struct bpf_tracer *t, pid_t tgid, uint32_t job, uint32_t flags);
int tracer_remove_process(struct bpf_tracer *t, pid_t tgid);
/* tgid is in the kernel's traced set (put there by user space, or by ma_fork at its fork). */
bool tracer_has_process(struct bpf_tracer *t, pid_t tgid);
/*
 * tgid's RSS changes are followed from now on (TB_QUIET cleared: a rank's
 * command the kernel left quiet until user space first read it).
 */
void tracer_follow_changes(struct bpf_tracer *t, pid_t tgid);

/*
 * Node service: report the exec of every process, traced or not (job slot
 * 0). -EINVAL when the programs were loaded without the exec filter
 * (tracer_modes.watch_exec off): no untraced exec could be reported.
 */
int tracer_watch_exec(struct bpf_tracer *t, bool on);

/* Entries now and capacity of a map with 4-byte keys (traced); -ENOENT: no such map. */
int tracer_map_fill(struct bpf_tracer *t, const char *name, uint64_t *entries, uint64_t *max);

/*
 * Wait up to timeout_ms for records and hand them to fn until budget_ms
 * from the call (<= 0: until the ring is empty); the records handed over,
 * or -errno (-EINTR on a signal).
 */
int tracer_poll(struct bpf_tracer *t, int timeout_ms, int budget_ms);

/*
 * tracer_poll also returns when fd becomes readable (once: it is then no
 * longer watched; tracer_watch_fired says so). The fd stays the caller's.
 */
int tracer_watch_fd(struct bpf_tracer *t, int fd);
bool tracer_watch_fired(struct bpf_tracer *t);

/*
 * Hand over whatever is in the ring buffer now, without waiting, for at
 * most budget_ms (<= 0: until it is empty).
 */
int tracer_drain(struct bpf_tracer *t, int budget_ms);

/* The last poll or drain stopped on its budget: records were left in the ring. */
bool tracer_backlog(const struct bpf_tracer *t);

/*
 * Every thread's run of faults still in the kernel goes into the ring
 * buffer (before a drain for a sample). -errno when the kernel refused.
 */
int tracer_flush_runs(struct bpf_tracer *t);

/*
 * Step tgid's slot of the fault epochs (odd while its /proc figures are
 * read, even after: see fault_epoch in memattr.bpf.c); returns the new value.
 */
uint16_t tracer_step_epoch(struct bpf_tracer *t, pid_t tgid);

/* Kernel-side counters summed over CPUs, indexed by enum stat_idx. */
void tracer_stats(struct bpf_tracer *t, uint64_t out[STAT_NR]);

/*
 * Records lost so far by the processes of job slot job (job_drops: the
 * slot modulo JOB_DROP_SLOTS, so count from what it held at the job's start).
 */
uint64_t tracer_job_drops(struct bpf_tracer *t, uint32_t job);

enum uprobe_prog {
	UPROBE_MPI_ENTER,
	UPROBE_MPI_EXIT,
	UPROBE_HEAP_ENTER,
	UPROBE_HEAP_EXIT,
};

/*
 * Attach one of the opt-in programs at cnt file offsets of binary path, for
 * process pid only, each with its cookie: one uprobe_multi link. Returns
 * the link's descriptor (close it to detach) or -errno.
 */
int tracer_attach_uprobes(struct bpf_tracer *t, enum uprobe_prog which, pid_t pid,
			  const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  size_t cnt);

/* Outermost calls of MPI function fn in process tgid (--mpi-calls). */
uint64_t tracer_mpi_calls(struct bpf_tracer *t, pid_t tgid, uint32_t fn);

/* --heap: call fn for every malloc-family call site of process tgid (0: of every process). */
typedef void (*site_fn)(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *s);
void tracer_heap_sites(struct bpf_tracer *t, pid_t tgid, site_fn fn, void *ctx);

/*
 * The OOM killer chose tgid (oom:mark_victim) at *boot_ns (CLOCK_BOOTTIME):
 * 1, and the kernel's note of it is dropped; 0 when there is none. For a
 * victim found gone before the ring's record of its kill was read.
 */
int tracer_take_oom_mark(struct bpf_tracer *t, pid_t tgid, uint64_t *boot_ns);

/* The process exited: drop its call sites, live blocks and call counts from the kernel. */
void tracer_forget_process(struct bpf_tracer *t, pid_t tgid);

/* Bytes of kernel memory the maps may hold (for the tool's footprint). */
uint64_t tracer_map_bytes(struct bpf_tracer *t);

#endif
