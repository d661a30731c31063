// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stddef.h>

#include "apply.h"
#include "held_records.h"
#include "identity.h"
#include "tracker.h"
#include "tracker_base.h"

/*
 * A sample round reads the ring buffer for a quarter of the interval
 * first; then each catch-up (each process's before its count, the one
 * before the rows) for at most half an interval. With several jobs
 * traced, a round's catch-ups share that half interval, counted from the
 * round's start, whatever the number of processes: under one job's storm
 * the records left wait for the next turn, and the other jobs' samples
 * stay near the grid (with a deadline per catch-up, rounds of 1.1-1.4
 * intervals with two processes). With one job, each keeps its own: no
 * other job waits, and that job's samples at its start-up need every
 * record older than their reads.
 */
#define ROUND_DRAIN_SHARE	0.25
#define CATCH_UP_SHARE		0.5

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

void held_records_release(struct tracker *t, struct session *s, struct proc *p)
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
bool held_records_hold(struct tracker *t, struct session *s, struct proc *p, const void *data,
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
	held_records_release(t, s, p);
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
void held_records_inherit(struct tracker *t, struct session *s, struct proc *child,
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
	held_records_release(t, s, parent);
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
bool held_records_settling(const struct tracker *t, const struct proc *p, double now)
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
			identity_late(t, s, p);
			if (p->held.count && !held_records_settling(t, p, now))
				held_records_release(t, s, p);
		}
}

/* What is left of the round's time for reading the ring (at least a little: progress). */
static int drain_budget_ms(const struct tracker *t)
{
	double left;

	if (t->drain_until <= 0)
		return 0;
	left = (t->drain_until - tracker_now(t)) * 1000;
	return left >= 1 ? (int)left : 1;
}

void held_records_drain(struct tracker *t)
{
	tracer_drain(&t->bpf, drain_budget_ms(t));
	release_all_held(t);
}

void tracker_end_drain(struct tracker *t)
{
	release_all_held(t);
}

void held_records_round_begins(struct tracker *t, double now)
{
	double interval = t->opt->interval_ms / 1e3;

	t->drain_until = now + interval * ROUND_DRAIN_SHARE;
	t->catch_up_until = t->sessions && t->sessions->next ? now + interval * CATCH_UP_SHARE : 0;
}

/*
 * A record written before a sample's VmRSS read and still in the ring
 * when the sample is accounted leaves its pages in VmRSS and in no
 * component: `unattributed` in exact mode (MPI's start-up: hundreds of
 * requests, each costly to place, while every rank faults in its
 * libraries, outrun the round's budget for a sample or three). The
 * ring is read in the order the records were written, so once one newer
 * than the round's newest read is applied, none older is left. Past the
 * bound the sample goes out as it is, and says so (run_info.csv's
 * samples_behind; the records are not lost: the next sample has them).
 */
bool held_records_catch_up(struct tracker *t, uint64_t mark_ns)
{
	double until = t->catch_up_until;

	if (!until)
		until = tracker_now(t) + t->opt->interval_ms / 1e3 * CATCH_UP_SHARE;
	while (tracer_backlog(&t->bpf) && t->newest_record_ns < mark_ns && tracker_now(t) < until)
		held_records_drain(t);
	return tracer_backlog(&t->bpf) && t->newest_record_ns < mark_ns;
}
