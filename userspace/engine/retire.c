// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "job_view.h"
#include "mode_counts.h"
#include "procfs.h"
#include "retire.h"
#include "tracker.h"
#include "user_specs.h"

#define ENDED_RECORDS_S		5.0	/* an ended process's last records come within this */
#define FORK_PENDING_S		5.0	/* a queued fork event comes within this */

void retire_held(struct tracker *t, struct proc *p)
{
	t->held_bytes -= p->held.len;
	t->ended_events += held_drop(&p->held);
}

void retire(struct tracker *t, struct session *s, struct proc *p)
{
	struct sink_job j;

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
