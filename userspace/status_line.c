// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <unistd.h>

#include "status_line.h"
#include "tracker.h"

#define STATUS_PERIOD_S	0.5
#define MIB		(1024.0 * 1024.0)

void status_line_init(struct status_line *s, bool quiet)
{
	s->on = !quiet && isatty(STDOUT_FILENO);
	s->last_time = 0;
	s->last_events = 0;
}

void status_line_update(struct status_line *s, struct tracker *t, double now)
{
	comp_id mpi = component_id("mpi");
	double total = 0, mpi_rss = 0, rate;
	size_t ranks = 0, procs = 0;

	if (!s->on || now - s->last_time < STATUS_PERIOD_S)
		return;
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct proc *p = t->procs[i];

		if (!p->alive || !p->account || !p->total.seen)
			continue;
		procs++;
		ranks += p->rank >= 0;
		total += p->total.rss;
		if (mpi < p->ncomps)
			mpi_rss += p->comps[mpi].rss;
	}
	rate = now > s->last_time ? (t->events - s->last_events) / (now - s->last_time) : 0;
	tracer_stats(&t->bpf, t->kstats);
	/* \r and erase-line: one line, redrawn in place. */
	printf("\r\033[K%.1fs  %zu rank%s (%zu process%s)  job %.1f MiB  mpi %.0f%%  %.0f events/s  dropped %llu",
	       now, ranks, ranks == 1 ? "" : "s", procs, procs == 1 ? "" : "es", total / MIB,
	       total > 0 ? 100.0 * mpi_rss / total : 0.0, rate,
	       (unsigned long long)t->kstats[STAT_RINGBUF_DROPS]);
	fflush(stdout);
	s->last_time = now;
	s->last_events = t->events;
}

void status_line_clear(struct status_line *s)
{
	if (!s->on || !s->last_time)
		return;
	printf("\r\033[K");
	fflush(stdout);
}
