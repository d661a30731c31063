// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <unistd.h>

#include "job_view.h"
#include "mode_counts.h"
#include "oom.h"
#include "procfs.h"
#include "retire.h"
#include "tracker.h"
#include "tracker_base.h"
#include "user_specs.h"

#define ENDED_RECORDS_S		5.0	/* an ended process's last records come within this */
#define FORK_PENDING_S		5.0	/* a queued fork event comes within this */

void retire_held(struct tracker *t, struct proc *p)
{
	t->held_bytes -= p->held.len;
	t->ended_events += held_drop(&p->held);
}

/*
 * The OOM killer chose p: recorded now, before its exit retires it. Its
 * figures are those of its last sample, and stay so (no sample of it is
 * taken after: it is being torn down); the records still held for it
 * (faults since) change no figure before a sample.
 */
void retire_oom(struct tracker *t, struct session *s, struct proc *p, uint64_t boot_ns)
{
	struct sink_oom o;
	struct sink_job j;
	uint64_t note;

	if (p->oom_marked)
		return;
	tracker_job_view(t, s, &j);
	oom_fill(s, p, tracker_boot_time(t, boot_ns) - s->t0, "", &o);
	p->oom_marked = true;
	session_oom(s, &o, &j);
	/* Read: a later process given its pid must not be taken for it. */
	tracer_take_oom_mark(&t->bpf, p->pid, &note);
}

/* A kill the kernel noted at boot_ns is of p, not of an earlier process with its pid. */
static bool oom_note_of(const struct proc *p, uint64_t boot_ns)
{
	uint64_t tick_ns = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);

	return !p->start_ticks || boot_ns + tick_ns >= p->start_ticks * tick_ns;
}

void retire(struct tracker *t, struct session *s, struct proc *p)
{
	struct sink_job j;
	uint64_t boot_ns;

	/*
	 * A read found it gone while the ring still held the record of its
	 * OOM kill (on a busy node, a round's drain stops short of it): that
	 * record would come after its end, to no process. The kernel's note
	 * of the kill says it now.
	 */
	if (!p->oom_marked && tracer_take_oom_mark(&t->bpf, p->pid, &boot_ns) && oom_note_of(p, boot_ns))
		retire_oom(t, s, p, boot_ns);
	retire_held(t, p);
	t->ended[t->nended++ % TRACKER_ENDED_RING] = (struct ended_proc){
		.pid = p->pid, .start_ticks = p->start_ticks, .when = tracker_now(t),
		.fork_pending = p->from_scan,
	};
	mode_counts_release(t, p);
	user_specs_note(t, p);
	tracker_job_view(t, s, &j);
	session_end_proc(s, p, &j);
}

bool retired_lately(const struct tracker *t, pid_t pid)
{
	for (unsigned int i = 0; i < TRACKER_ENDED_RING && i < t->nended; i++)
		if (t->ended[i].pid == pid && tracker_now(t) - t->ended[i].when < ENDED_RECORDS_S)
			return true;
	return false;
}

bool retired_before_fork(struct tracker *t, pid_t pid)
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

bool retired_leaving(const struct tracker *t, pid_t pid)
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
