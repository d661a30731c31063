// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The node service's node-wide programs, attached while it traces a
 * process (core/probe_hold.h says when). A job's first process is
 * admitted after its exec and runs on while they are attached: what it
 * asked for before is found as for any process traced late, in its maps
 * read after tracer_add_process (tracker_add_pid: maps, then inference),
 * which comes after the attach here.
 */
#include <errno.h>
#include <stdio.h>

#include "tracker.h"
#include "tracker_base.h"

static size_t traced_procs(const struct tracker *t)
{
	size_t n = 0;

	for (const struct session *s = t->sessions; s; s = s->next)
		n += s->procs.n;
	return n;
}

int tracker_probes_need(struct tracker *t, struct session *s)
{
	char err[256];
	double t0;
	enum probe_act act;
	int ok;

	if (!t->opt->probes_on_demand)
		return 0;
	act = probe_hold_step(&t->hold, 1, tracker_now(t));
	if (act != PROBE_ATTACH)
		return 0;
	t0 = tracker_mono_s();
	ok = !tracer_attach_global(&t->bpf, err, sizeof(err));
	probe_hold_done(&t->hold, act, ok);
	if (!ok) {
		fprintf(stderr, "memattr-bpf: %s: process not traced\n", err);
		return -EIO;
	}
	s->probe_attach_ms = (tracker_mono_s() - t0) * 1e3;
	if (t->opt->verbose)
		fprintf(stderr, "memattr-bpf: node-wide programs attached in %.1f ms\n", s->probe_attach_ms);
	return 0;
}

void tracker_probes_tick(struct tracker *t, double now)
{
	enum probe_act act;

	if (!t->opt->probes_on_demand)
		return;
	/* Processes come only through tracker_probes_need (or forks of theirs): never PROBE_ATTACH here. */
	act = probe_hold_step(&t->hold, traced_procs(t), now);
	if (act == PROBE_DETACH) {
		double t0 = tracker_mono_s();

		tracer_detach_global(&t->bpf);
		probe_hold_done(&t->hold, act, true);
		if (t->opt->verbose)
			fprintf(stderr, "memattr-bpf: node-wide programs detached in %.1f ms (no process traced for %.0f s)\n",
				(tracker_mono_s() - t0) * 1e3, t->hold.hold_s);
	}
}

void tracker_set_probe_hold(struct tracker *t, double hold_s)
{
	t->hold.hold_s = hold_s;
}
