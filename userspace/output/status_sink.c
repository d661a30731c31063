// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live status line on a terminal while tracing: processes traced, the
 * job's total, MPI's share, events per second and drops. Silent when stdout
 * is not a terminal (a batch script's log gets only the final summary).
 *
 * A sample round is the samples that share one time: the line for a round
 * is drawn when the next round begins, at most twice a second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sink.h"

#define STATUS_PERIOD_S	0.5
#define MIB		(1024.0 * 1024.0)

struct status_sink {
	struct sink base;
	double round;			/* time of the round being added up, <0: none */
	size_t ranks, procs;
	double total, mpi;
	double last_time;		/* of the last line drawn */
	uint64_t last_events;
	bool drawn;
};

static void draw(struct status_sink *ss, const struct sink_job *j)
{
	double now = ss->round, rate;

	if (now - ss->last_time < STATUS_PERIOD_S)
		return;
	rate = now > ss->last_time ? (j->c.events - ss->last_events) / (now - ss->last_time) : 0;
	/* \r and erase-line: one line, redrawn in place. */
	printf("\r\033[K%.1fs  %zu rank%s (%zu process%s)  job %.1f MiB  mpi %.0f%%  %.0f events/s  dropped %llu",
	       now, ss->ranks, ss->ranks == 1 ? "" : "s", ss->procs, ss->procs == 1 ? "" : "es",
	       ss->total / MIB, ss->total > 0 ? 100.0 * ss->mpi / ss->total : 0.0, rate,
	       (unsigned long long)j->c.dropped);
	fflush(stdout);
	ss->last_time = now;
	ss->last_events = j->c.events;
	ss->drawn = true;
}

static void status_proc_sample(struct sink *s, const struct sink_job *j, const struct sink_proc *p)
{
	struct status_sink *ss = (struct status_sink *)s;

	if (p->time != ss->round) {
		if (ss->round >= 0)
			draw(ss, j);
		ss->round = p->time;
		ss->ranks = ss->procs = 0;
		ss->total = ss->mpi = 0;
	}
	ss->procs++;
	ss->ranks += p->rank >= 0;
	ss->total += p->total.rss;
	for (size_t i = 0; i < p->ncomps; i++)
		if (!strcmp(p->comps[i].name, "mpi"))
			ss->mpi += p->comps[i].rss;
}

/* Erase the line before anything else is printed. */
static void status_job_end(struct sink *s, const struct sink_job *j)
{
	struct status_sink *ss = (struct status_sink *)s;

	(void)j;
	if (!ss->drawn)
		return;
	printf("\r\033[K");
	fflush(stdout);
}

static void status_destroy(struct sink *s)
{
	free(s);
}

static const struct sink_ops status_ops = {
	.proc_sample = status_proc_sample,
	.job_end = status_job_end,
	.destroy = status_destroy,
};

struct sink *status_sink_new(void)
{
	struct status_sink *ss;

	if (!isatty(STDOUT_FILENO))
		return NULL;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return NULL;
	ss->base.ops = &status_ops;
	ss->round = -1;
	return &ss->base;
}
