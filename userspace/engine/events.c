// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's event entry (tracker_on_event, internal/tracker.h): each
 * record of bpf/memattr.h goes to the session its process belongs to (the
 * job slot the kernel side stamps on it, else a lookup by pid), then to
 * its process there: fork and exec (fork_exec.c), exit (retire.c), an OOM
 * kill, or a record for its figures, held or applied (held_records.c,
 * apply.c).
 */
#include "apply.h"
#include "fork_exec.h"
#include "held_records.h"
#include "job_view.h"
#include "retire.h"
#include "tracker.h"
#include "tracker_base.h"

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
	if (retired_lately(t, tgid))
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
	if (h->ts_ns > t->newest_record_ns)
		t->newest_record_ns = h->ts_ns;
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
			tracker_on_fork(t, s, data);
		return 0;
	case EV_EXEC:
		if (size >= sizeof(struct ev_task))
			tracker_on_exec(t, s, data);
		return 0;
	}
	p = session_find(s, h->tgid);
	if (!p) {
		count_orphan(t, h->tgid);
		return 0;
	}
	if (h->type == EV_EXIT) {
		const struct ev_task *e = data;

		if (size >= sizeof(*e) && e->hwm)
			p->kernel_hwm = (int64_t)e->hwm;
		retire(t, s, p);
		return 0;
	}
	if (h->type == EV_OOM) {
		retire_oom(t, s, p, h->ts_ns);
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
	if (!held_records_hold(t, s, p, data, size))
		apply_record(t, s, p, data, size);
	return 0;
}
