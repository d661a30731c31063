// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "discovery.h"
#include "fork_exec.h"
#include "held_records.h"
#include "identity.h"
#include "infer_attach.h"
#include "probe_process.h"
#include "reads.h"
#include "retire.h"
#include "tracker.h"
#include "tracker_base.h"

/*
 * What the attach read saw, as a sample in progress: VmRSS read beside
 * it. The first round takes its own sample (sample.c mark_proc); a job
 * that ends, or a tool stopped, before that round still leaves this one
 * as each process's row (session_attach_sample). A late attach can take
 * seconds (8 LULESH ranks on 2 cores: 4.4 s, inference included) and a
 * job may end right after it: its ranks had no CSV at all.
 */
static void attach_sample(struct tracker *t, struct session *s, struct proc *p)
{
	if (reads_vmrss(t, s, p) || p->sample_total <= 0)
		return;		/* gone (retired), unreadable, or a zombie's */
	p->attach_pending = true;
	p->attach_mark_ns = p->sample_mark_ns;
	p->attach_total = p->sample_total;
	p->attach_time = tracker_now(t);
}

int tracker_add_pid(struct tracker *t, struct session *s, pid_t pid, bool follow_only)
{
	struct proc *p = session_find(s, pid);
	int ret;

	if (p)
		return 0;
	/* The node-wide programs first: its maps, read below, hold what it asked for before. */
	ret = tracker_probes_need(t, s);
	if (ret)
		return ret;
	p = session_add_proc(s, pid, tracker_now(t));
	if (!p)
		return -ENOMEM;
	p->live.on = !t->opt->sampled;
	/* Its VmHWM may predate tracing, until it execs (proc_reset_mm). */
	p->image_before_attach = true;
	/* Running before we came: its identity is final, unless it has yet to exec. */
	p->exec_seen = !identity_own_image(pid);
	p->from_scan = true;
	identity_read(s, p);
	if (follow_only)
		p->account = false;
	p->kernel_flags = identity_flags(p);
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
	if (!reads_still_same(p)) {
		tracer_remove_process(&t->bpf, pid);
		retire(t, s, p);
		return 0;
	}
	/* Running before we came: who holds what it has (infer_attach.h). */
	if (p->account && reads_mappings(t, s, p) && p->exec_seen) {
		if (!t->opt->no_infer)
			infer_attach(t, s, p);
		attach_sample(t, s, p);
	}
	return 0;
}

/* Enough for a tree that forks while it is adopted: each pass only meets what the last one added. */
#define ADOPT_PASSES_MAX	16

/*
 * A process found before the kernel followed its parent's forks may have
 * forked since, unseen by that scan and by the kernel: such children are
 * adopted from /proc now that every parent they could have is followed.
 * One the kernel has in its traced set was reported by ma_fork, and joins
 * by that record: admitted here too, it would be two processes in one.
 * Each pass reads /proc after the last one's adds, so a pass that adds
 * nothing proves that no child fell between.
 */
int tracker_adopt_descendants(struct tracker *t, struct session *s, size_t *queued)
{
	int adopted = 0;

	if (queued)
		*queued = 0;
	for (int pass = 0; pass < ADOPT_PASSES_MAX; pass++) {
		struct pid_list roots = {0}, found = {0};
		struct proc *p, *tmp;
		int added = 0, ret = 0;

		proc_table_for_each(&s->procs, p, tmp)
			if (!ret)
				ret = pid_list_add(&roots, p->pid);
		if (!ret && roots.n)
			ret = job_descendants_of(roots.pids, roots.n, &found);
		for (size_t i = 0; !ret && i < found.n; i++) {
			pid_t pid = found.pids[i];

			if (pid == t->self || tracker_find_proc(t, pid, NULL) || retired_leaving(t, pid))
				continue;
			if (tracer_has_process(&t->bpf, pid)) {
				if (queued)
					(*queued)++;	/* the last pass's count stays */
				continue;
			}
			ret = tracker_add_pid(t, s, pid, false);
			if (ret == -ESRCH || ret == -ENOENT)
				ret = 0;	/* gone meanwhile */
			else if (!ret)
				added++;
		}
		pid_list_free(&roots);
		pid_list_free(&found);
		if (ret)
			return ret;
		adopted += added;
		if (!added)
			break;
		if (queued)
			*queued = 0;
	}
	return adopted;
}

void tracker_on_fork(struct tracker *t, struct session *s, const struct ev_task *e)
{
	struct session *olds;
	struct proc *old = tracker_find_proc(t, e->child_tgid, &olds), *p, *parent;

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
	else if (retired_before_fork(t, e->child_tgid))
		return;		/* found in /proc, and already gone */
	p = session_add_proc(s, e->child_tgid, tracker_now(t));
	if (!p) {
		tracer_remove_process(&t->bpf, e->child_tgid);
		return;
	}
	p->live.on = !t->opt->sampled;
	memcpy(p->comm, e->comm, sizeof(e->comm));
	p->account = !job_is_launcher(t->specs, p->comm);
	/* A copy of the parent's address space: its requests resolve from the first one. */
	parent = session_find(s, e->parent_tgid);
	if (parent)
		identity_late(t, s, parent);
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
		identity_update_kernel(t, s, p);
	if (t->probing)
		probes_at_fork(&t->probes, &t->bpf, p, parent);
	if (p->account && parent && parent->account) {
		proc_copy_mm(p, parent, t->probing);
		held_records_inherit(t, s, p, parent);
		/*
		 * A rank's child (or its command's) is never a rank itself: its
		 * pid file can open now. Any other accounted parent's child (a
		 * shell, a wrapper such as setpriv or env that execs in place)
		 * may exec into a rank, its rank variable in the new image's
		 * environment only: its identity waits for that exec, or for
		 * FORK_SETTLE_S as a launcher's child does (sample.c ready()).
		 * Named before, it kept a pid file for good.
		 */
		if (p->under_rank)
			p->exec_seen = true;
	}
}

void tracker_on_exec(struct tracker *t, struct session *s, const struct ev_task *e)
{
	struct proc *p = session_find(s, e->h.tgid);

	if (!p)
		return;
	/*
	 * An exec from before the process was added: the node service admits
	 * a process at one exec record and may meet a later one of the same
	 * process in the same drain (runuser's child exec'd env, which exec'd
	 * the job's program). The maps read and the inference at admission
	 * were already of this image: resetting them would lose what it held.
	 */
	if (p->from_scan && tracker_event_time(t, &e->h) < p->born_time)
		return;
	retire_held(t, p);
	proc_reset_mm(p);
	/* The kernel dropped the old image's heap sites and call counts (ma_exec). */
	p->nheap_sites = 0;
	/* The peak's sites were the old image's: its code is gone, they cannot be named. */
	heap_peak_reset(&p->heap_peak);
	mpi_fn_free(&p->mpi_fns);
	p->exec_seen = true;
	/*
	 * Its name comes with the event. Rank and step wait for the end of
	 * the drain (identity_late; a rank's command needs neither): most
	 * commands are gone by then, and reading their /proc files was most
	 * of what they cost.
	 */
	memcpy(p->comm, e->comm, sizeof(e->comm));
	p->account = !job_is_launcher(t->specs, p->comm);
	p->unidentified = true;
	if (t->probing) {
		identity_read(s, p);
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
	if (p->account && t->probing && !reads_mappings(t, s, p))
		return;
	identity_update_kernel(t, s, p);
}
