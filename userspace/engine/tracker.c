// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine: one BPF object for every session. An event goes to the
 * session its process belongs to (the job slot the kernel side stamps on
 * it, else a lookup by pid), then to its process there (process.c); each
 * sample round reads what events cannot give (/proc) and hands the figures
 * to the session's sinks. A process that exits is retired at once: its
 * figures go to the sinks and its memory is freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "close_many.h"
#include "infer_attach.h"
#include "procfs.h"
#include "modes_out.h"
#include "oom.h"
#include "tracker.h"

#define RESCAN_PERIOD_S		1.0	/* env-matched jobs: look for new processes */
#define SUMMARY_PERIOD_S	5.0	/* rewrite summary.csv while running */
#define ENDED_RECORDS_S		5.0	/* an ended process's last records come within this */
#define FORK_SETTLE_S		0.5	/* a forked child usually execs within this */
#define SMAPS_BUDGET		0.02	/* at most 2% of a core reading smaps */
#define KSTATS_PERIOD_S		0.5	/* kernel counters for the live outputs */

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mono_now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

double tracker_now(const struct tracker *t)
{
	return mono_now() - t->start_mono;
}

/* time_s of a kernel event (its clock is CLOCK_BOOTTIME). */
static double event_time(const struct tracker *t, const struct ev_header *h)
{
	return ((double)h->ts_ns - (double)t->start_boot_ns) / 1e9;
}

static struct proc *find_any(struct tracker *t, pid_t pid, struct session **in)
{
	for (struct session *s = t->sessions; s; s = s->next) {
		struct proc *p = session_find(s, pid);

		if (p) {
			if (in)
				*in = s;
			return p;
		}
	}
	return NULL;
}

/* run_info's modes: the opt-in probes, and the attribution when it is not exact. */
static const char *modes_name(const struct options *o)
{
	if (o->sampled)
		return o->heap ? "heap sampled" : "sampled";	/* --mpi-calls needs exact (cli.c) */
	return o->mpi_calls && o->heap ? "mpi-calls heap" :
	       o->mpi_calls ? "mpi-calls" : o->heap ? "heap" : "";
}

/* The job as the sinks see it now. */
static void job_view(struct tracker *t, const struct session *s, struct sink_job *j)
{
	const struct options *o = t->opt;

	memset(j, 0, sizeof(*j));
	j->id = s->job;
	j->job = s->job ? s->job : t->own_job;
	j->node = t->node;
	j->finished = s->ending;
	j->dir = s->out_open ? s->out.path : NULL;
	/* The job's own clock: the node service's jobs start after the tracker (session.h t0). */
	j->now = tracker_now(t) - s->t0;
	j->start_realtime = t->start_realtime + s->t0;
	j->interval_ms = o->interval_ms;
	j->problem_size = o->problem_size;
	j->modes = modes_name(o);
	j->sampled = o->sampled;
	j->version = MEMATTR_VERSION;
	j->cmdline = t->cmdline;
	session_counters(s, &j->c);
	/* The kernel side's counters are node-wide: one BPF object serves every job. */
	j->c.dropped = t->kstats[STAT_RINGBUF_DROPS];
	j->c.stack_read_failures = t->kstats[STAT_STACK_READ_FAIL];
	j->c.rss_without_cause = t->kstats[STAT_NO_CTX_RSS];
	j->c.heap_untracked = t->kstats[STAT_HEAP_FULL];
	j->c.unknown_pid_events = t->unknown_pid_events;
	j->c.ended_events = t->ended_events;
	/* At fork in the kernel, or when user space adds a process found in /proc. */
	j->c.traced_map_full = t->kstats[STAT_TRACED_FULL] + t->map_full;
	j->c.output_errors = s->out_open ? s->out.nfailed : 0;
	j->c.probing = o->mpi_calls || o->heap;
	j->c.probes_attached = t->probes.attached;
	j->c.probe_failures = t->probes.failed;
	j->c.oom_watched = t->bpf.oom_watched;
	infer_attach_counters(t, s, &j->c.inferred);
}

static void add_site(struct proc *p, uint64_t site, const struct site_stats *st)
{
	struct heap_site *v;

	v = realloc(p->heap_sites, (p->nheap_sites + 1) * sizeof(*v));
	if (!v)
		return;
	p->heap_sites = v;
	v[p->nheap_sites++] = (struct heap_site){ site, *st };
}

static void collect_site(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *st)
{
	(void)tgid;
	add_site(ctx, site, st);
}

/* One walk of the kernel's site table for every live process (it may hold 64 Ki sites). */
static void collect_site_any(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *st)
{
	struct proc *p = find_any(ctx, tgid, NULL);

	if (p && p->account)
		add_site(p, site, st);
}

static void collect_mpi_calls(struct tracker *t, struct proc *p)
{
	for (size_t i = 0; i < t->probes.ntargets; i++) {
		const struct probe_target *tg = &t->probes.targets[i];
		uint64_t calls;
		struct mpi_fn_stats *s;

		if (!tg->mpi)
			continue;
		calls = tracer_mpi_calls(&t->bpf, p->pid, tg->cookie);
		s = mpi_fn_get(&p->mpi_fns, tg->cookie, calls > 0);
		if (s)
			s->calls = calls;
	}
}

/*
 * Copy what the kernel counted for p in the opt-in modes (MPI call counts,
 * heap call sites) into p, so it goes out with p's other figures.
 */
static void collect_modes(struct tracker *t, struct proc *p)
{
	if (!t->probing || !p->account || !(p->mpi_probed || p->heap_probed))
		return;
	collect_mpi_calls(t, p);
	if (!t->opt->heap)
		return;
	p->nheap_sites = 0;
	tracer_heap_sites(&t->bpf, p->pid, collect_site, p);
}

/* p is gone (or tracing ends): keep its figures, remove its probes and kernel state. */
static void release_probes(struct tracker *t, struct proc *p)
{
	if (!t->probing)
		return;
	collect_modes(t, p);
	probes_detach(p);
	/*
	 * Only a probed process has counts in the kernel. Looking for the
	 * others' would walk the maps of every process for each of a job's
	 * short-lived commands (a fork/exec-heavy job: seconds of the tool's
	 * time, and its ranks' CPU on a full node).
	 */
	if (p->mpi_probed || p->heap_probed)
		tracer_forget_process(&t->bpf, p->pid);
}

/*
 * A --spec file the user wrote for this job that names a library no traced
 * process mapped is probably a typo: each process's libraries are checked
 * before it is freed, the warning comes at the end.
 */
static bool user_rule(const struct tracker *t, const struct spec_rule *r)
{
	for (size_t k = 0; k < t->opt->nspecs; k++)
		if (!strcmp(r->file, t->opt->specs[k]))
			return r->kind == SPEC_LIBRARY || r->kind == SPEC_PATH;
	return false;
}

static void note_mapped_specs(struct tracker *t, const struct proc *p)
{
	if (!t->spec_mapped)
		return;
	for (size_t i = 0; i < t->specs->n; i++) {
		const struct spec_rule *r = &t->specs->rules[i];

		if (t->spec_mapped[i] || !user_rule(t, r))
			continue;
		for (size_t k = 0; k < p->nmaps && !t->spec_mapped[i]; k++)
			t->spec_mapped[i] = spec_rule_matches(r, p->maps[k].path);
	}
}

static void warn_unused_user_specs(const struct tracker *t)
{
	if (!t->spec_mapped)
		return;
	for (size_t i = 0; i < t->specs->n; i++) {
		const struct spec_rule *r = &t->specs->rules[i];

		if (user_rule(t, r) && !t->spec_mapped[i])
			fprintf(stderr, "memattr-bpf: warning: %s:%d: no traced process mapped a file matching '%s'\n",
				r->file, r->line, r->pattern);
	}
}

/* Held records of an image that ended before any output showed it: never read. */
static void drop_held(struct tracker *t, struct proc *p)
{
	t->held_bytes -= p->held.len;
	t->ended_events += held_drop(&p->held);
}

/*
 * p ended: its figures go to the sinks and it is freed. The kernel dropped
 * it from the traced set at its exit (ma_exit): deleting here could untrace
 * a new process that already reuses the pid.
 */
static void retire(struct tracker *t, struct session *s, struct proc *p)
{
	struct sink_job j;

	drop_held(t, p);
	t->ended[t->nended++ % TRACKER_ENDED_RING] = (struct ended_proc){
		.pid = p->pid, .start_ticks = p->start_ticks, .when = tracker_now(t),
		.fork_pending = p->from_scan,
	};
	release_probes(t, p);
	note_mapped_specs(t, p);
	modes_proc_end(t, s, p);
	job_view(t, s, &j);
	session_end_proc(s, p, &j);
}

static bool rank_taken(const struct session *s, const struct proc *self, int rank)
{
	for (const struct proc *p = s->procs.first; p; p = p->next)
		if (p != self && p->rank == rank)
			return true;
	return false;
}

/*
 * Who the process is: its rank (unless another live process of the job
 * already holds that rank: a rank's own children inherit its environment)
 * and whether it is a launcher.
 */
static void identify(struct session *s, struct proc *p)
{
	struct proc_stat st;
	int rank;

	p->unidentified = false;
	if (procfs_read_stat(p->pid, &st) == 0)
		memcpy(p->comm, st.comm, sizeof(p->comm));
	p->account = !job_is_launcher(s->cls.specs, p->comm);
	/*
	 * Once its figures went out, the identity stays. A rank's command is
	 * never a rank (its step is its rank's, from on_fork).
	 */
	if (p->named || p->under_rank)
		return;
	job_step_of(p->pid, p->step, sizeof(p->step));
	/*
	 * A batch script is its step's one task (SLURM_PROCID 0), no MPI rank:
	 * taken for rank 0 it would hold that rank from the ranks its mpirun
	 * starts, once sampled before it exec'd mpirun, as every script that
	 * does anything first is.
	 */
	if (job_rank_of(s->cls.specs, p->pid, strcmp(p->step, "batch") != 0, &rank))
		return;
	p->rank = rank >= 0 && !rank_taken(s, p, rank) ? rank : -1;
}

/*
 * Still the process we started tracing? Its exit event can be lost (a full
 * ring buffer) and its pid reused: then it must end here, never be sampled
 * or probed as someone else's process.
 */
static bool still_same(struct proc *p)
{
	struct proc_stat st;

	if (procfs_read_stat(p->pid, &st))
		return false;
	if (!p->start_ticks)
		p->start_ticks = st.starttime;
	return st.starttime == p->start_ticks;
}

/*
 * A read of p's /proc figures lies between two steps of its fault epoch, so
 * that no run of faults straddles it (fault_epoch in memattr.bpf.c): faults
 * made during the read come one by one, with their time.
 */
static void read_begins(struct tracker *t, struct proc *p)
{
	tracer_step_epoch(&t->bpf, p->pid);
}

/* The epoch the read ended with: what moved at it, or after, came after the read. */
static uint16_t read_ends(struct tracker *t, struct proc *p)
{
	uint16_t epoch = tracer_step_epoch(&t->bpf, p->pid);

	proc_note_epoch(p, epoch, boot_clock_ns());
	return epoch;
}

/* Read p's mappings; false when p is gone (and retired). */
static bool timed_sync(struct tracker *t, struct session *s, struct proc *p)
{
	double t0 = mono_now(), cost;
	int ret;

	if (!still_same(p)) {
		retire(t, s, p);
		return false;
	}
	/* A quiet command's changes are followed before the read that counts those before. */
	tracer_follow_changes(&t->bpf, p->pid);
	read_begins(t, p);
	ret = proc_sync(p, &s->cls, tracker_now(t));
	p->sync_epoch = read_ends(t, p);
	p->sync_epoch_known = true;
	if (ret == -ESRCH || ret == -ENOENT) {
		retire(t, s, p);	/* gone; its exit event, if any, finds nothing */
		return false;
	}
	cost = mono_now() - t0;
	t->smaps_cost = t->smaps_cost ? 0.9 * t->smaps_cost + 0.1 * cost : cost;
	/* Libraries loaded since the last read get their probes now. */
	if (t->probing)
		probes_update(&t->probes, &t->bpf, p, tracker_now(t));
	return true;
}

/*
 * Still our own image: the command we launch, waiting at its gate to exec.
 * Its identity (a launcher such as mpirun.mpich, or a rank) comes with its
 * exec; named before that, a launcher got a pid-P.csv of one sample.
 */
static bool is_own_image(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return !stat(path, &a) && !stat("/proc/self/exe", &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A launcher is no rank to the kernel, whatever rank it held before its exec: its children are not a rank's commands. */
static uint32_t traced_flags(const struct proc *p)
{
	return TRACED_FOLLOW | (p->account ? TRACED_ACCOUNT : 0) |
	       (p->rank >= 0 && p->account ? TRACED_RANK : 0) | (p->under_rank ? TRACED_UNDER_RANK : 0);
}

/* The kernel's flags for p, where its identity changed them. */
static void update_kernel_flags(struct tracker *t, struct session *s, struct proc *p)
{
	uint32_t flags = traced_flags(p);

	if (flags == p->kernel_flags)
		return;
	if (!tracer_add_process(&t->bpf, p->pid, s->id, flags))
		p->kernel_flags = flags;
}

/* An exec'd process that outlived the drain of its exec: who it is now. */
static void identify_late(struct tracker *t, struct session *s, struct proc *p)
{
	if (!p->unidentified)
		return;
	/* A rank's command: its name came with the exec record, and it is no rank. */
	if (p->under_rank)
		p->unidentified = false;
	else
		identify(s, p);
	update_kernel_flags(t, s, p);
}

int tracker_add_pid(struct tracker *t, struct session *s, pid_t pid, bool follow_only)
{
	struct proc *p = session_find(s, pid);
	int ret;

	if (p)
		return 0;
	p = session_add_proc(s, pid, tracker_now(t));
	if (!p)
		return -ENOMEM;
	/* Running before we came: its identity is final, unless it has yet to exec. */
	p->exec_seen = !is_own_image(pid);
	p->from_scan = true;
	identify(s, p);
	if (follow_only)
		p->account = false;
	p->kernel_flags = traced_flags(p);
	ret = tracer_add_process(&t->bpf, pid, s->id, p->kernel_flags);
	if (ret == -E2BIG) {
		/* The kernel's traced map is full: not traced, but counted, never silent. */
		t->map_full++;
		retire(t, s, p);
		return 0;
	}
	if (ret)
		return ret;
	/*
	 * Gone before it was in the kernel's traced set: no exit event will
	 * come for it, and a launcher (followed, never read) would keep the
	 * run going for ever.
	 */
	if (!still_same(p)) {
		tracer_remove_process(&t->bpf, pid);
		retire(t, s, p);
		return 0;
	}
	/* Running before we came: who holds what it has (infer_attach.h). */
	if (p->account && timed_sync(t, s, p) && p->exec_seen && !t->opt->no_infer)
		infer_attach(t, s, p);
	return 0;
}

/*
 * The loader mapped a library's code. A process waiting for its probes gets
 * them now rather than at the next sample: MPI_Init may be only
 * milliseconds away.
 */
static bool maps_new_code(const struct ev_syscall *e)
{
	return e->nr == NR_MMAP && e->ret > 0 && (e->args[2] & PROT_EXEC) && !(e->args[3] & MAP_ANONYMOUS);
}

/* A record of process p, as it came or held until the end of the drain. */
static void apply_record(struct tracker *t, struct session *s, struct proc *p,
			 const void *data, size_t size)
{
	const struct ev_header *h = data;

	if (!p->account)
		return;
	switch (h->type) {
	case EV_RSS:
		if (size >= sizeof(struct ev_rss))
			proc_apply_rss(p, &s->cls, data, event_time(t, h));
		break;
	case EV_RUN:
		if (size >= sizeof(struct ev_run))
			proc_apply_run(p, &s->cls, data, event_time(t, h));
		break;
	case EV_SYSCALL:
		if (size < EV_SYSCALL_NOSTACK_SIZE)
			break;
		proc_apply_syscall(p, &s->cls, data, event_time(t, h));
		if (!maps_new_code(data) || !t->probing)
			break;
		/* Its probes come with a read: now if it waits for them, else at the next sample. */
		if (probes_waiting(&t->probes, p))
			timed_sync(t, s, p);
		else
			p->needs_sync = true;
		break;
	}
}

struct replay_ctx {
	struct tracker *t;
	struct session *s;
	struct proc *p;
};

static void apply_held(void *ctx, const void *record, size_t size)
{
	struct replay_ctx *c = ctx;

	apply_record(c->t, c->s, c->p, record, size);
}

static void release_held(struct tracker *t, struct session *s, struct proc *p)
{
	struct replay_ctx c = { t, s, p };

	t->held_bytes -= p->held.len;
	held_replay(&p->held, apply_held, &c);
}

/* What a held copy keeps of a record: a request's stack copy as far as it is valid. */
static size_t meaningful_size(const void *data, size_t size)
{
	const struct ev_syscall *e = data;
	size_t stack_end;

	if (e->h.type != EV_SYSCALL || size <= EV_SYSCALL_NOSTACK_SIZE)
		return size;
	stack_end = offsetof(struct ev_syscall, stack) +
		    (e->stack_len < sizeof(e->stack) ? e->stack_len : sizeof(e->stack));
	return stack_end < size ? stack_end : size;
}

/*
 * Hold p's records until the end of the drain while no output has shown
 * it: gone by then, it takes them along unread (held.h). Not while probes
 * wait on a process's mappings: MPI_Init may be milliseconds away.
 */
static bool hold(struct tracker *t, struct session *s, struct proc *p, const void *data,
		 size_t size)
{
	size_t before = p->held.len;

	if (p->named || p->held.refused || t->probing || !p->account)
		return false;
	size = meaningful_size(data, size);
	if (t->held_bytes + size <= TRACKER_HELD_BYTES && !held_push(&p->held, data, size)) {
		t->held_bytes += p->held.len - before;
		return true;
	}
	/* A long-lived or busy process: what it has comes first, then it goes as it comes. */
	release_held(t, s, p);
	p->held.refused = true;
	return false;
}

static bool is_request(const void *record, size_t size)
{
	const struct ev_header *h = record;

	return size >= sizeof(*h) && h->type == EV_SYSCALL;
}

/*
 * A forked child's copy of its parent's address space lacks what the
 * parent's held requests will make: the child holds them too, ahead of its
 * own records. Not the faults: the child's first smaps read counts its
 * pages (proc_copy_mm).
 */
static void inherit_held(struct tracker *t, struct session *s, struct proc *child,
			 struct proc *parent)
{
	if (!parent->held.count)
		return;
	if (t->held_bytes + parent->held.len <= TRACKER_HELD_BYTES &&
	    !held_copy(&child->held, &parent->held, is_request)) {
		t->held_bytes += child->held.len;
		return;
	}
	/* No room: the parent's records now, and the copy taken again. */
	held_drop(&child->held);
	release_held(t, s, parent);
	proc_copy_mm(child, parent, t->probing);
}

/*
 * A command a rank runs is first read, and gets its file, once it has
 * lived a sample interval since the tool learnt of it: most (a shell
 * system() starts, the command it runs) are gone within milliseconds, and
 * their smaps reads and files were most of what the tool spent on them.
 * Until then its records stay held (held.h), to go unread with its exit.
 * One that lives on is read then: that read counts every page it has.
 */
static bool settling(const struct tracker *t, const struct proc *p, double now)
{
	return p->under_rank && !p->named && now - p->born_time < t->opt->interval_ms / 1e3;
}

/*
 * The end of a drain: who the processes still here are, then their
 * records, in their order.
 */
static void release_all_held(struct tracker *t)
{
	double now = tracker_now(t);

	for (struct session *s = t->sessions; s; s = s->next)
		for (struct proc *p = s->procs.first; p; p = p->next) {
			identify_late(t, s, p);
			if (p->held.count && !settling(t, p, now))
				release_held(t, s, p);
		}
}

static void drain(struct tracker *t)
{
	tracer_drain(&t->bpf);
	release_all_held(t);
}

void tracker_end_drain(struct tracker *t)
{
	release_all_held(t);
}

/* pid was retired lately (its records may still be on their way); no /proc read. */
static bool ended_lately(const struct tracker *t, pid_t pid)
{
	for (unsigned int i = 0; i < TRACKER_ENDED_RING && i < t->nended; i++)
		if (t->ended[i].pid == pid && tracker_now(t) - t->ended[i].when < ENDED_RECORDS_S)
			return true;
	return false;
}

#define FORK_PENDING_S	5.0	/* a queued fork event comes within this */

/* pid was found in /proc and retired before its fork event came: this is that event. */
static bool fork_of_ended(struct tracker *t, pid_t pid)
{
	for (unsigned int i = 0; i < TRACKER_ENDED_RING && i < t->nended; i++) {
		struct ended_proc *e = &t->ended[i];

		if (e->pid == pid && e->fork_pending &&
		    tracker_now(t) - e->when < FORK_PENDING_S) {
			e->fork_pending = false;
			return true;
		}
	}
	return false;
}

static void on_fork(struct tracker *t, struct session *s, const struct ev_task *e)
{
	struct session *olds;
	struct proc *old = find_any(t, e->child_tgid, &olds), *p, *parent;

	/*
	 * Known already: found in /proc while this event waited in the ring
	 * buffer (the same process, kept: it may even be gone by now), or its
	 * pid is reused after an exit event was lost (a new process).
	 */
	if (old && old->from_scan) {
		old->from_scan = false;
		return;
	}
	if (old)
		retire(t, olds, old);
	else if (fork_of_ended(t, e->child_tgid))
		return;		/* found in /proc, and already gone */
	p = session_add_proc(s, e->child_tgid, tracker_now(t));
	if (!p) {
		tracer_remove_process(&t->bpf, e->child_tgid);
		return;
	}
	memcpy(p->comm, e->comm, sizeof(e->comm));
	p->account = !job_is_launcher(t->specs, p->comm);
	/* A copy of the parent's address space: its requests resolve from the first one. */
	parent = session_find(s, e->parent_tgid);
	if (parent)
		identify_late(t, s, parent);
	/* As ma_fork marked it: the kernel side's flags stay when it execs. */
	/*
	 * A launcher's children are nobody's commands, even when the launcher
	 * held a rank before it exec'd: a batch script, task 0 of its step
	 * (SLURM_PROCID), that execs mpirun after its first sample keeps its
	 * rank label, and the ranks mpirun starts are ranks of their own.
	 */
	p->under_rank = parent && parent->account && (parent->rank >= 0 || parent->under_rank);
	if (p->under_rank)
		memcpy(p->step, parent->step, sizeof(p->step));
	p->kernel_flags = TRACED_FOLLOW | TRACED_ACCOUNT;
	if (parent && (parent->kernel_flags & (TRACED_RANK | TRACED_UNDER_RANK)))
		p->kernel_flags |= TRACED_UNDER_RANK;
	/* The kernel forked it before it heard its parent is a launcher now. */
	if (!p->under_rank && (p->kernel_flags & TRACED_UNDER_RANK))
		update_kernel_flags(t, s, p);
	if (t->probing)
		probes_at_fork(&t->probes, &t->bpf, p, parent);
	if (p->account && parent && parent->account) {
		proc_copy_mm(p, parent, t->probing);
		inherit_held(t, s, p, parent);
		/*
		 * A rank's child (or its command's) is never a rank itself: its
		 * pid file can open now. Any other accounted parent's child (a
		 * shell, a wrapper such as setpriv or env that execs in place)
		 * may exec into a rank, its rank variable in the new image's
		 * environment only: its identity waits for that exec, or for
		 * FORK_SETTLE_S as a launcher's child does (ready()). Named
		 * before, it kept a pid file for good.
		 */
		if (p->under_rank)
			p->exec_seen = true;
	}
}

static void on_exec(struct tracker *t, struct session *s, const struct ev_task *e)
{
	struct proc *p = session_find(s, e->h.tgid);

	if (!p)
		return;
	drop_held(t, p);
	proc_reset_mm(p);
	/* The kernel dropped the old image's heap sites and call counts (ma_exec). */
	p->nheap_sites = 0;
	mpi_fn_free(&p->mpi_fns);
	p->exec_seen = true;
	/*
	 * Its name comes with the event. Rank and step wait for the end of
	 * the drain (identify_late; a rank's command needs neither): most
	 * commands are gone by then, and reading their /proc files was most
	 * of what they cost.
	 */
	memcpy(p->comm, e->comm, sizeof(e->comm));
	p->account = !job_is_launcher(t->specs, p->comm);
	p->unidentified = true;
	if (t->probing) {
		identify(s, p);
		if (p->account)
			probes_at_exec(&t->probes, &t->bpf, p, &s->cls);
	}
	/*
	 * The opt-in modes place the new image's probes from its mappings,
	 * and are woken for this record at once: read now. Otherwise this
	 * record is handled with the rest at the next sample, and so is the
	 * read: after the records of the new image's first requests, which
	 * then are still applied as they came (read before them, they would
	 * be older than the read, and what the MPI calls among them added
	 * would be lost from mpi_calls.csv); most commands a job runs are
	 * gone by then.
	 */
	if (p->account && t->probing && !timed_sync(t, s, p))
		return;
	update_kernel_flags(t, s, p);
}

/* The spec MPI function at offset off of file path in p (its catalogue number), 0: none. */
static uint32_t mpi_fn_at(void *ctx, const struct proc *p, const char *path, uint64_t off)
{
	struct tracker *t = ctx;
	const struct elfsym_table *syms;
	char root_path[PATH_MAX + 32];
	const char *name;
	uint64_t delta;

	/* The file as the process sees it: its root may be a container's. */
	snprintf(root_path, sizeof(root_path), "/proc/%d/root%s", p->pid, path);
	syms = probes_symbols(&t->probes, root_path);
	name = syms ? elfsym_name_at(syms, off, &delta) : NULL;
	return name ? mpi_catalog_id(&t->mpi_names, name) : 0;
}

/*
 * The OOM killer chose p: recorded now, before its exit retires it. Its
 * figures are those of its last sample, and stay so (no sample of it is
 * taken after: it is being torn down); the records still held for it
 * (faults since) change no figure before a sample.
 */
static void on_oom(struct tracker *t, struct session *s, struct proc *p, const struct ev_header *h)
{
	struct sink_oom o;
	struct sink_job j;

	job_view(t, s, &j);
	oom_fill(s, p, event_time(t, h) - s->t0, "", &o);
	p->oom_marked = true;
	session_oom(s, &o, &j);
}

/* The session an event belongs to: its job slot, else its process. */
static struct session *route(struct tracker *t, const struct ev_header *h)
{
	struct session *s;

	if (h->job)
		for (s = t->sessions; s; s = s->next)
			if (s->id == h->job)
				return s;
	for (s = t->sessions; s; s = s->next)
		if (session_find(s, h->tgid))
			return s;
	return NULL;
}

/*
 * A record no session has a process for. Retired at a sample's VmRSS read
 * (gone between two drains), a process still has records on their way:
 * they come after its last row and could change none. Otherwise the
 * process was never known, or not yet: lost precision, reported as such.
 */
static void count_orphan(struct tracker *t, pid_t tgid)
{
	if (ended_lately(t, tgid))
		t->ended_events++;
	else
		t->unknown_pid_events++;
}

int tracker_on_event(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	const struct ev_header *h = data;
	struct session *s;
	struct proc *p;

	if (size < sizeof(*h))
		return 0;
	t->events++;
	s = route(t, h);
	if (!s && h->type == EV_EXEC && t->hooks && t->hooks->untraced_exec) {
		t->hooks->untraced_exec(t->hooks->ctx, t, h->tgid);
		return 0;
	}
	if (!s) {
		count_orphan(t, h->tgid);
		return 0;
	}
	s->events++;
	switch (h->type) {
	case EV_FORK:
		if (size >= sizeof(struct ev_task))
			on_fork(t, s, data);
		return 0;
	case EV_EXEC:
		if (size >= sizeof(struct ev_task))
			on_exec(t, s, data);
		return 0;
	}
	p = session_find(s, h->tgid);
	if (!p) {
		count_orphan(t, h->tgid);
		return 0;
	}
	if (h->type == EV_EXIT) {
		retire(t, s, p);
		return 0;
	}
	if (h->type == EV_OOM) {
		on_oom(t, s, p, h);
		return 0;
	}
	switch (h->type) {
	case EV_SYSCALL:
		s->syscall_events++;
		break;
	case EV_RSS:
	case EV_RUN:
		s->rss_events++;
		break;
	default:
		return 0;
	}
	if (!hold(t, s, p, data, size))
		apply_record(t, s, p, data, size);
	return 0;
}

static int tracker_init(struct tracker *t, const struct options *opt,
			const struct spec_set *specs, const char *cmdline, char *err, size_t errlen)
{
	struct tracer_modes modes;

	t->opt = opt;
	t->specs = specs;
	t->cmdline = cmdline;
	t->self = getpid();
	t->next_id = 1;
	t->pss_period = opt->pss_interval_ms / 1000.0;
	t->probing = opt->mpi_calls || opt->heap;
	if (opt->nspecs)
		t->spec_mapped = calloc(specs->n ? specs->n : 1, sizeof(*t->spec_mapped));
	mpi_catalog_init(&t->mpi_names, specs);
	if (t->probing && probes_init(&t->probes, specs, &t->mpi_names, opt->mpi_calls, opt->heap,
				      opt->verbose, err, errlen)) {
		t->probing = false;
		return -1;
	}
	t->start_mono = mono_now();
	t->start_realtime = clock_s(CLOCK_REALTIME);
	node_name(t->node, sizeof(t->node));
	t->own_job = getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "";
	t->start_boot_ns = boot_clock_ns();
	modes.mpi_calls = opt->mpi_calls;
	modes.heap = opt->heap;
	modes.fault_frame = !opt->no_fault_frame;
	modes.rss_events = !opt->sampled;
	if (tracer_open(&t->bpf, opt->ringbuf_mb << 20, &modes, tracker_on_event, t,
			opt->verbose, err, errlen)) {
		if (t->probing)
			probes_free(&t->probes);
		t->probing = false;
		return -1;
	}
	if (t->probing)
		probes_prewarm(&t->probes, &t->bpf, specs);
	return 0;
}

struct tracker *tracker_new(const struct options *opt, const struct spec_set *specs,
			    const char *cmdline, char *err, size_t errlen)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (tracker_init(t, opt, specs, cmdline, err, errlen)) {
		free(t->spec_mapped);
		free(t);
		return NULL;
	}
	return t;
}

void tracker_free(struct tracker *t)
{
	free(t);
}

void tracker_set_hooks(struct tracker *t, const struct tracker_hooks *hooks)
{
	t->hooks = hooks;
}

void tracker_watch_exec(struct tracker *t, bool on)
{
	tracer_watch_exec(&t->bpf, on);
}

void tracker_counters(const struct tracker *t, struct tracker_counters *c)
{
	*c = (struct tracker_counters){
		.events = t->events,
		.unknown_pid_events = t->unknown_pid_events,
		.ended_events = t->ended_events,
		.dropped = t->kstats[STAT_RINGBUF_DROPS],
		/* At fork in the kernel, or when user space adds a process found in /proc. */
		.traced_map_full = t->kstats[STAT_TRACED_FULL] + t->map_full,
		.output_errors = t->output_errors,
	};
}

int tracker_map_fill(struct tracker *t, const char *map, uint64_t *entries, uint64_t *max)
{
	return tracer_map_fill(&t->bpf, map, entries, max);
}

bool tracker_traces(const struct tracker *t, pid_t pid)
{
	for (const struct session *s = t->sessions; s; s = s->next)
		if (session_find(s, pid))
			return true;
	return false;
}

struct session *tracker_first_session(const struct tracker *t)
{
	return t->sessions;
}

struct session *tracker_new_session(struct tracker *t, const char *job, enum job_match match)
{
	struct session *s = session_new(t->next_id, job, t->specs), **tail;

	if (!s)
		return NULL;
	t->next_id++;
	s->match = match;
	/*
	 * Every mode: a memory request made inside the MPI library is tagged
	 * with the outermost MPI function on its stack, so mpi_calls.csv has
	 * each function's growth without a probe (--mpi-calls adds the calls).
	 */
	s->cls.mpi_fn_at = mpi_fn_at;
	s->cls.mpi_fn_ctx = t;
	/* The status line first: it must be erased before the summary prints. */
	if (!t->opt->quiet) {
		session_add_sink(s, status_sink_new());
		session_add_sink(s, term_sink_new());
	}
	for (tail = &t->sessions; *tail; tail = &(*tail)->next)
		;
	*tail = s;
	return s;
}

int tracker_open_output(struct tracker *t, struct session *s, const char *dir,
			char *err, size_t errlen)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	uid_t u = uid ? (uid_t)strtoul(uid, NULL, 10) : (uid_t)-1;
	gid_t g = gid ? (gid_t)strtoul(gid, NULL, 10) : (gid_t)-1;

	return tracker_open_output_as(t, s, dir, u, g, err, errlen);
}

int tracker_open_output_as(struct tracker *t, struct session *s, const char *dir,
			   uid_t u, gid_t g, char *err, size_t errlen)
{
	struct sink_job j;

	if (outdir_open(&s->out, dir, u, g, err, errlen))
		return -1;
	s->out_open = true;
	if (session_add_sink(s, csv_sink_new(&s->out, t->opt->compress))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	job_view(t, s, &j);
	if (session_begin(s, &j)) {
		snprintf(err, errlen, "output %s: cannot begin writing", dir);
		return -1;
	}
	return 0;
}

/* A forked child is named once it has exec'd or lived long enough not to. */
static bool ready(const struct proc *p, double now)
{
	return p->named || p->exec_seen || now - p->born_time >= FORK_SETTLE_S;
}

/*
 * Keep smaps reading within budget: with many processes the period between
 * reads of each one stretches (documented in docs/attribution.md, "PSS").
 */
static double effective_pss_period(struct tracker *t, size_t nalive)
{
	double need = t->smaps_cost * nalive / SMAPS_BUDGET;

	return need > t->pss_period ? need : t->pss_period;
}

/* Runs of faults still in the kernel: into the ring buffer, before a drain for samples. */
static void flush_runs(struct tracker *t)
{
	int ret = tracer_flush_runs(&t->bpf);

	if (ret && !t->flush_warned) {
		fprintf(stderr, "memattr-bpf: cannot collect the faults pending in the kernel: %s "
			"(samples may show them late, as unattributed)\n", strerror(-ret));
		t->flush_warned = true;
	}
}

static bool sync_due(const struct tracker *t, const struct proc *p, double now, double period)
{
	return p->account && !settling(t, p, now) &&
	       (p->needs_sync || now - p->last_sync_time >= period * p->maps_stretch);
}

/*
 * The reads of the mappings due, each right after a drain: a read that
 * overtakes a request sees its mapping merged with its neighbours, and the
 * request's region, made after the read, would split that one figure by
 * length (an unmap then takes a wrong figure with it; LULESH: 1.3-2.5 MiB
 * a rank until the next read, seconds later). Applied before the read, the
 * region is there, and the read counts the merged entry page by page. A
 * drain can end processes: the ones due are taken by pid.
 */
static void sync_mappings(struct tracker *t, struct session *s, double now, double period)
{
	size_t n = 0, i = 0;
	struct proc *p;
	pid_t *due;

	for (p = s->procs.first; p; p = p->next)
		n += sync_due(t, p, now, period);
	due = n ? malloc(n * sizeof(*due)) : NULL;
	if (!due)
		return;		/* none, or read in mark_session without the drain */
	for (p = s->procs.first; p; p = p->next)
		if (sync_due(t, p, now, period))
			due[i++] = p->pid;
	for (i = 0; i < n; i++) {
		drain(t);
		p = session_find(s, due[i]);
		if (p && sync_due(t, p, now, period)) {
			/* Records older than its first read come before it. */
			if (p->held.count)
				release_held(t, s, p);
			timed_sync(t, s, p);
		}
	}
	free(due);
}

/*
 * Sampled attribution (--attribution sampled): no program follows the
 * faults, so the regions hold what the last count of the process's pages
 * found, moved since only by its requests and releases. The regions the
 * requests touched are counted at each sample (proc_count_touched); once
 * the rest drifts from the kernel's total by more than a share of it
 * (beyond the gap the last count of all pages left: pages in no mapping,
 * the per-CPU slack of the kernel's counter), all pages are counted again
 * (proc_sync). The share is half the bound the components keep against
 * exact attribution (docs/attribution.md, "Sampled attribution").
 */
#define DRIFT_SHARE	100		/* 1% of the total */
#define DRIFT_FLOOR	(64 << 10)	/* bytes: below it, never counted again */

static int64_t drift(const struct proc *p)
{
	return p->sample_total - regions_rss_total(&p->regions);
}

/* Beyond the gap of the last count of all pages, by more than the bound? */
static bool drifted(const struct proc *p)
{
	int64_t d = drift(p) - p->recount_gap;

	if (d < 0)
		d = -d;
	return d > DRIFT_FLOOR && d > p->sample_total / DRIFT_SHARE;
}

/* Read p's VmRSS for this sample (again, beside a count of its pages): 0, -ESRCH when gone (retired), or -errno. */
static int mark(struct tracker *t, struct session *s, struct proc *p)
{
	int ret;

	read_begins(t, p);
	ret = proc_mark_sample(p);
	p->sample_mark_epoch = read_ends(t, p);
	p->mark_epoch_known = true;
	if (ret == -ESRCH || ret == -ENOENT) {
		retire(t, s, p);	/* gone, its exit event lost */
		return -ESRCH;
	}
	return ret;
}

/*
 * A count of all of p's pages just ended, with VmRSS read right after it:
 * its gap is the new base. (Not after the other reads of the mappings: one
 * made while the ring buffer drained, long before this sample's VmRSS,
 * would take the pages faulted since for the gap.)
 */
static void counted_all(struct proc *p)
{
	p->recount_gap = drift(p);
	p->ntouched = 0;
	p->touched_full = false;
}

/*
 * Sampled attribution's step at each sample of p, after its VmRSS read.
 * The regions its requests touched are counted every time (a request that
 * gives pages back can hide pages taken elsewhere from the drift); all of
 * its pages only past the drift bound, or when the touched ranges
 * overflowed.
 */
static void sampled_count(struct tracker *t, struct session *s, struct proc *p)
{
	double t0 = mono_now();
	int ret;

	if (p->ntouched && !p->touched_full) {
		ret = proc_count_touched(p);
		if (ret == -ESRCH || ret == -ENOENT)
			goto done;	/* gone: the next sample retires it */
		if (ret)
			p->touched_full = true;		/* not countable by range: count it all */
		else if (mark(t, s, p) == -ESRCH)
			goto done;
		else
			s->recounts_touched++;
	}
	if (p->touched_full || drifted(p)) {
		s->recounts++;
		if (timed_sync(t, s, p) && mark(t, s, p) != -ESRCH)
			counted_all(p);
	}
done:
	s->recount_ns += (uint64_t)((mono_now() - t0) * 1e9);
}

/* A sample's first step: mappings read where due, then every VmRSS. */
static void mark_session(struct tracker *t, struct session *s, double now)
{
	struct proc *p, *tmp;
	size_t nalive = 0;
	double period;

	for (p = s->procs.first; p; p = p->next)
		nalive += p->account;
	period = effective_pss_period(t, nalive);
	sync_mappings(t, s, now, period);
	proc_table_for_each(&s->procs, p, tmp) {
		if (!p->account || settling(t, p, now))
			continue;
		/* Records older than its first read come before it. */
		if (p->held.count)
			release_held(t, s, p);
		if (sync_due(t, p, now, period) && !timed_sync(t, s, p))
			continue;
		/* Not yet named (a launcher's child may exec into a rank): no peaks before rows. */
		if (!ready(p, now))
			continue;
		if (!mark(t, s, p) && t->opt->sampled)
			sampled_count(t, s, p);
	}
}

/* The second step, once the ring buffer is drained: the components, the rows. */
static void account_session(struct tracker *t, struct session *s, double now)
{
	struct sink_job j;

	job_view(t, s, &j);
	j.now = now - s->t0;	/* the job's clock (session.h) */
	for (struct proc *p = s->procs.first; p; p = p->next) {
		if (!p->sample_mark_ns)
			continue;
		/* Chosen by the OOM killer: what is read now is its teardown, not the program. */
		if (p->oom_marked) {
			p->sample_mark_ns = 0;
			continue;
		}
		if (!proc_account(p, &s->cls, p->sample_total, now))
			session_sample(s, p, &j);
	}
}

/*
 * Every session's sample. The faults made while the figures were read (a
 * rank allocating at full speed: ~3 MiB a millisecond) are in its VmRSS
 * and still in the kernel (runs in progress) or the ring buffer: handled
 * between the two steps, so they are not left to `unattributed`; those
 * after each read are set apart from its sample. One collection of the
 * runs for all sessions: it walks every task on the node.
 */
static void sample_sessions(struct tracker *t)
{
	double now = tracker_now(t);
	struct session *s;

	for (s = t->sessions; s; s = s->next)
		mark_session(t, s, now);
	flush_runs(t);
	drain(t);
	for (s = t->sessions; s; s = s->next)
		account_session(t, s, now);
}

/* The opt-in modes' files, with the kernel's counters of the live processes. */
static void write_modes(struct tracker *t, struct session *s)
{
	if (t->probing) {
		for (struct proc *p = s->procs.first; p; p = p->next) {
			if (!p->account)
				continue;
			collect_mpi_calls(t, p);
			p->nheap_sites = 0;
		}
		if (t->opt->heap)
			tracer_heap_sites(&t->bpf, 0, collect_site_any, t);
	}
	modes_write_csv(t, s);
}

static void summarize(struct tracker *t, struct session *s)
{
	struct sink_job j;

	job_view(t, s, &j);
	session_summary(s, &j);
	write_modes(t, s);
}

static bool known_pid(void *ctx, pid_t pid)
{
	return find_any(ctx, pid, NULL) != NULL;
}

/* pid is a process retired lately that is still on its way out. */
static bool just_ended(const struct tracker *t, pid_t pid)
{
	struct proc_stat st;

	for (unsigned int i = 0; i < TRACKER_ENDED_RING && i < t->nended; i++) {
		const struct ended_proc *e = &t->ended[i];

		if (e->pid != pid)
			continue;
		return !e->start_ticks || procfs_read_stat(pid, &st) ||
		       st.starttime == e->start_ticks;
	}
	return false;
}

/* Processes of the job that started without a traced ancestor. */
static void rescan_job(struct tracker *t, struct session *s)
{
	struct pid_list found = {0};

	/* Only the job owner's processes: another user's environment claims nothing. */
	if (job_scan_env(s->job, s->owner, t->self, known_pid, t, &found, NULL) == 0)
		for (size_t i = 0; i < found.n; i++)
			if (!just_ended(t, found.pids[i]))
				tracker_add_pid(t, s, found.pids[i], false);
	pid_list_free(&found);
}

/* Every process of s has ended (or tracing stops): its outputs finish, it is freed. */
static void end_session(struct tracker *t, struct session *s)
{
	struct session **pp;
	struct proc *p, *tmp;
	struct sink_job j;

	proc_table_for_each(&s->procs, p, tmp)
		retire(t, s, p);
	s->ending = true;
	summarize(t, s);
	job_view(t, s, &j);
	session_end(s, &j);
	if (s->out_open)
		t->output_errors += s->out.nfailed;
	if (t->hooks && t->hooks->session_ended)
		t->hooks->session_ended(t->hooks->ctx, t, s);
	for (pp = &t->sessions; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	infer_attach_forget(t, s);
	session_free(s);
}

int tracker_run(struct tracker *t, volatile sig_atomic_t *stop)
{
	double interval = t->opt->interval_ms / 1000.0, next = 0, last_kstats = -1;
	/* --duration is the user's time of tracing: reading what was held before (inference) is not part of it. */
	double started = tracker_now(t);

	while (!*stop) {
		double now = tracker_now(t);
		struct session *s, *sn;
		double wait_ms;
		int ret;

		if (now >= next) {
			drain(t);
			if (now - last_kstats >= KSTATS_PERIOD_S) {
				tracer_stats(&t->bpf, t->kstats);
				last_kstats = now;
			}
			sample_sessions(t);
			for (s = t->sessions; s; s = sn) {
				sn = s->next;
				if (s->match == JOB_MATCH_ENV && now - s->last_scan >= RESCAN_PERIOD_S) {
					rescan_job(t, s);
					s->last_scan = now;
				}
				if (now - s->last_summary >= SUMMARY_PERIOD_S) {
					summarize(t, s);
					s->last_summary = now;
				}
				/*
				 * Its last process exited: the job is over (for the
				 * per-job command the last one ends in finish).
				 */
				if (!s->procs.n && (t->hooks || s != t->sessions || sn))
					end_session(t, s);
			}
			if (t->hooks) {
				/* The node service goes on without jobs. */
				if (t->hooks->tick)
					t->hooks->tick(t->hooks->ctx, t, now);
			} else if (!t->sessions || (!t->sessions->next && !t->sessions->procs.n)) {
				break;
			}
			if (t->opt->duration_s && now - started >= t->opt->duration_s)
				break;
			/* Stay on the grid: a slow sample does not shift later ones. */
			while (next <= now)
				next += interval;
		}
		/*
		 * A sample that took longer than the interval leaves next in the
		 * past: a negative timeout would block until the next event, for
		 * ever on an idle job (--duration was never checked again).
		 */
		wait_ms = (next - tracker_now(t)) * 1000 + 1;
		ret = tracer_poll(&t->bpf, wait_ms > 0 ? (int)wait_ms : 0);
		release_all_held(t);
		if (tracer_watch_fired(&t->bpf))
			next = tracker_now(t);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "memattr-bpf: reading BPF events: %s\n", strerror(-ret));
			return -1;
		}
	}
	return 0;
}

int tracker_sample_on(struct tracker *t, int fd)
{
	return tracer_watch_fd(&t->bpf, fd);
}

void tracker_finish(struct tracker *t)
{
	struct session *s;
	struct proc *p;
	int *links = NULL;
	size_t nlinks = 0;

	flush_runs(t);
	drain(t);
	for (s = t->sessions; s; s = s->next) {
		struct sink_job j;
		double now = tracker_now(t);

		job_view(t, s, &j);
		j.now = now - s->t0;	/* the job's clock (session.h) */
		for (p = s->procs.first; p; p = p->next)
			if (p->account && p->named && !p->oom_marked && proc_sample(p, &s->cls, now) == 0)
				session_sample(s, p, &j);
	}
	tracer_stats(&t->bpf, t->kstats);
	/* Figures first, then every link detached at once (the maps go with tracer_close). */
	for (s = t->sessions; s; s = s->next)
		for (p = s->procs.first; p; p = p->next) {
			collect_modes(t, p);
			if (probes_move_links(p, &links, &nlinks))
				probes_detach(p);
		}
	if (t->probing && probes_move_warm(&t->probes, &links, &nlinks))
		probes_close_warm(&t->probes);
	detach_after_exit();
	close_many(links, nlinks);
	free(links);
	/* Probes are gone: the figures collected above are final. */
	t->probing = false;
	tracer_close(&t->bpf);
	while (t->sessions)
		end_session(t, t->sessions);
	warn_unused_user_specs(t);
	free(t->spec_mapped);
	t->spec_mapped = NULL;
	infer_attach_free(t);
	/* Also without probes: mpi_fn_at's symbol tables are cached there. */
	probes_free(&t->probes);
}
