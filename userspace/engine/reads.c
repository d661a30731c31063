// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>

#include "probe_process.h"
#include "procfs.h"
#include "reads.h"
#include "retire.h"
#include "tracker.h"
#include "tracker_base.h"

bool reads_still_same(struct proc *p)
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

/* A process whose one read of its mappings takes this share of the interval is a long read. */
#define LONG_READ_SHARE		0.25

bool reads_long(const struct tracker *t, const struct proc *p)
{
	return p->sync_cost >= t->opt->interval_ms / 1e3 * LONG_READ_SHARE;
}

bool reads_mappings(struct tracker *t, struct session *s, struct proc *p)
{
	double t0 = tracker_mono_s(), cost;
	int ret;

	if (!reads_still_same(p)) {
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
	cost = tracker_mono_s() - t0;
	p->sync_cost = cost;
	t->smaps_cost = t->smaps_cost ? 0.9 * t->smaps_cost + 0.1 * cost : cost;
	/* Libraries loaded since the last read get their probes now. */
	if (t->probing)
		probes_update(&t->probes, &t->bpf, p, tracker_now(t));
	return true;
}

int reads_vmrss(struct tracker *t, struct session *s, struct proc *p)
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
