// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "held_records.h"
#include "job_view.h"
#include "mode_counts.h"
#include "reads.h"
#include "sample.h"
#include "sampled.h"
#include "tracker.h"
#include "tracker_base.h"

#define FORK_SETTLE_S		0.5	/* a forked child usually execs within this */
#define SMAPS_BUDGET		0.02	/* at most 2% of a core reading smaps */
/* Sampled attribution: the ring buffer is read between processes once counting held the loop this long. */
#define COUNT_HOLD_S		0.005

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

void sample_flush_runs(struct tracker *t)
{
	int ret = tracer_flush_runs(&t->bpf);

	if (ret && !t->flush_warned) {
		fprintf(stderr, "memattr-bpf: cannot collect the faults pending in the kernel: %s "
			"(samples may show them late, as unattributed)\n", strerror(-ret));
		t->flush_warned = true;
	}
}

/*
 * A sample round reads every job's processes in turn: one whose read is
 * long (tens of thousands of mappings) is read after the round's samples
 * are taken, so that it delays no other job's samples, and when it asks
 * for a read (needs_sync: its own storm of requests, or records lost) it
 * is read again within the smaps budget only, not at every sample.
 */
static bool asked_read_due(const struct tracker *t, const struct proc *p, double now)
{
	if (!p->needs_sync)
		return false;
	return p->sync_urgent || !reads_long(t, p) ||
	       now - p->last_sync_time >= p->sync_cost / SMAPS_BUDGET;
}

/* p's mappings are to be read now: in the round (long: false), or after it (true). */
static bool sync_due(const struct tracker *t, const struct proc *p, double now, double period,
		     bool long_reads)
{
	return p->account && !held_records_settling(t, p, now) && reads_long(t, p) == long_reads &&
	       (asked_read_due(t, p, now) || now - p->last_sync_time >= period * p->maps_stretch);
}

/*
 * The reads of the mappings due, each right after a drain: a read that
 * overtakes a request sees its mapping merged with its neighbours, and the
 * request's region, made after the read, would split that one figure by
 * length (an unmap then takes a wrong figure with it, until the next read,
 * seconds later). Applied before the read, the
 * region is there, and the read counts the merged entry page by page. A
 * drain can end processes: the ones due are taken by pid.
 */
static void sync_mappings(struct tracker *t, struct session *s, double now, double period,
			  bool long_reads)
{
	size_t n = 0, i = 0;
	struct proc *p;
	pid_t *due;

	for (p = s->procs.first; p; p = p->next)
		n += sync_due(t, p, now, period, long_reads);
	due = n ? malloc(n * sizeof(*due)) : NULL;
	if (!due)
		return;		/* none, or read in mark_session without the drain */
	for (p = s->procs.first; p; p = p->next)
		if (sync_due(t, p, now, period, long_reads))
			due[i++] = p->pid;
	for (i = 0; i < n; i++) {
		held_records_drain(t);
		p = session_find(s, due[i]);
		if (p && sync_due(t, p, now, period, long_reads)) {
			/* Records older than its first read come before it. */
			if (p->held.count)
				held_records_release(t, s, p);
			reads_mappings(t, s, p);
		}
	}
	free(due);
}

static double session_pss_period(struct tracker *t, const struct session *s)
{
	size_t nalive = 0;

	for (const struct proc *p = s->procs.first; p; p = p->next)
		nalive += p->account;
	return effective_pss_period(t, nalive);
}

/* p's VmRSS read for the sample (its mappings first where due), and its pages counted if sampled. */
static void mark_proc(struct tracker *t, struct session *s, struct proc *p, double now, double period)
{
	if (!p->account || held_records_settling(t, p, now))
		return;
	/* Records older than its first read come before it. */
	if (p->held.count)
		held_records_release(t, s, p);
	if (sync_due(t, p, now, period, false) && !reads_mappings(t, s, p))
		return;
	/* Not yet named (a launcher's child may exec into a rank): no peaks before rows. */
	if (!ready(p, now))
		return;
	if (reads_vmrss(t, s, p))
		return;		/* gone: an attach sample still pending is its row (session.c) */
	/* This read holds what came after the attach read's: that sample is done with. */
	if (p->attach_pending) {
		proc_drop_late(p);
		p->attach_pending = false;
	}
	if (t->opt->sampled)
		sampled_count(t, s, p);
}

/*
 * A sample's first step: mappings read where due, then every VmRSS. With
 * sampled attribution each process's pages are counted there too: once
 * the counts of a round have held the loop for COUNT_HOLD_S, the ring
 * buffer is read before the next process's (a drain can end processes:
 * they are taken by pid). What it applies is older than that process's
 * VmRSS read, as for the processes read after a drain in sync_mappings.
 */
static void mark_session(struct tracker *t, struct session *s, double now)
{
	double period = session_pss_period(t, s), held_since = tracker_mono_s();
	struct proc *p, *tmp;
	size_t n = 0, i = 0;
	pid_t *pids;

	sync_mappings(t, s, now, period, false);
	pids = t->opt->sampled && s->procs.n ? malloc(s->procs.n * sizeof(*pids)) : NULL;
	if (!pids) {
		proc_table_for_each(&s->procs, p, tmp)
			mark_proc(t, s, p, now, period);
		return;
	}
	for (p = s->procs.first; p && n < s->procs.n; p = p->next)
		pids[n++] = p->pid;
	for (i = 0; i < n; i++) {
		if (tracker_mono_s() - held_since >= COUNT_HOLD_S) {
			held_records_drain(t);
			held_since = tracker_mono_s();
		}
		p = session_find(s, pids[i]);
		if (p)
			mark_proc(t, s, p, now, period);
	}
	free(pids);
}

/* The second step, once the ring buffer is drained: the components, the rows. */
static void account_session(struct tracker *t, struct session *s, double now, bool behind)
{
	struct sink_job j;

	bool sampled = false;

	for (struct proc *p = s->procs.first; p && !sampled; p = p->next)
		sampled = p->sample_mark_ns && !p->attach_pending && !p->oom_marked;
	/* Before the view: the rows of this sample carry its own gap. */
	if (sampled)
		tracker_note_sample(t, s, now);
	if (sampled && behind)
		s->behind_samples++;
	tracker_job_view(t, s, &j);
	j.now = now - s->t0;	/* the job's clock (session.h) */
	/* Records lost: the totals followed from them are anchored again, at this sample's reads. */
	if (s->drops != s->drops_followed) {
		for (struct proc *p = s->procs.first; p; p = p->next)
			p->live.anchored = false;
		s->drops_followed = s->drops;
	}
	for (struct proc *p = s->procs.first; p; p = p->next) {
		/*
		 * Attached during this round (the node service admits at exec,
		 * records being read): that read's sample waits for the next
		 * round's, or the process's end (a row stamped before it).
		 */
		if (!p->sample_mark_ns || p->attach_pending)
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

/* The newest VmRSS read of this round (boot clock), 0: none. */
static uint64_t newest_mark(const struct tracker *t)
{
	uint64_t m = 0;

	for (const struct session *s = t->sessions; s; s = s->next)
		for (const struct proc *p = s->procs.first; p; p = p->next)
			if (p->sample_mark_ns > m)
				m = p->sample_mark_ns;
	return m;
}

/*
 * Every session's sample. The faults made while the figures were read (by
 * a rank allocating at full speed, many pages) are in its VmRSS
 * and still in the kernel (runs in progress) or the ring buffer: handled
 * between the two steps, so they are not left to `unattributed`; those
 * after each read are set apart from its sample. One collection of the
 * runs for all sessions: it walks every task on the node.
 */
void sample_sessions(struct tracker *t)
{
	double now = tracker_now(t);
	struct session *s;
	bool behind;

	/*
	 * A job admitted during this round (records read while a process's
	 * mappings were) began after now: its first sample is the next
	 * round's, not one stamped before its time 0.
	 */
	for (s = t->sessions; s; s = s->next)
		if (s->t0 <= now)
			mark_session(t, s, now);
	sample_flush_runs(t);
	held_records_drain(t);
	behind = held_records_catch_up(t, newest_mark(t));
	for (s = t->sessions; s; s = s->next)
		account_session(t, s, now, behind);
	mode_counts_peaks(t);
	/* The long reads, once every job's samples are out (their VmRSS: the next round). */
	for (s = t->sessions; s; s = s->next)
		sync_mappings(t, s, now, session_pss_period(t, s), true);
}
