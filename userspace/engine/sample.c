// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "held_records.h"
#include "job_view.h"
#include "reads.h"
#include "sample.h"
#include "sampled.h"
#include "tracker.h"

#define FORK_SETTLE_S		0.5	/* a forked child usually execs within this */
#define SMAPS_BUDGET		0.02	/* at most 2% of a core reading smaps */

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

static bool sync_due(const struct tracker *t, const struct proc *p, double now, double period)
{
	return p->account && !held_records_settling(t, p, now) &&
	       (p->needs_sync || now - p->last_sync_time >= period * p->maps_stretch);
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
		held_records_drain(t);
		p = session_find(s, due[i]);
		if (p && sync_due(t, p, now, period)) {
			/* Records older than its first read come before it. */
			if (p->held.count)
				held_records_release(t, s, p);
			reads_mappings(t, s, p);
		}
	}
	free(due);
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
		if (!p->account || held_records_settling(t, p, now))
			continue;
		/* Records older than its first read come before it. */
		if (p->held.count)
			held_records_release(t, s, p);
		if (sync_due(t, p, now, period) && !reads_mappings(t, s, p))
			continue;
		/* Not yet named (a launcher's child may exec into a rank): no peaks before rows. */
		if (!ready(p, now))
			continue;
		if (!reads_vmrss(t, s, p) && t->opt->sampled)
			sampled_count(t, s, p);
	}
}

/* The second step, once the ring buffer is drained: the components, the rows. */
static void account_session(struct tracker *t, struct session *s, double now)
{
	struct sink_job j;

	bool sampled = false;

	for (struct proc *p = s->procs.first; p && !sampled; p = p->next)
		sampled = p->sample_mark_ns && !p->oom_marked;
	/* Before the view: the rows of this sample carry its own gap. */
	if (sampled)
		tracker_note_sample(t, s, now);
	tracker_job_view(t, s, &j);
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

	for (s = t->sessions; s; s = s->next)
		mark_session(t, s, now);
	sample_flush_runs(t);
	held_records_drain(t);
	for (s = t->sessions; s; s = s->next)
		account_session(t, s, now);
}
