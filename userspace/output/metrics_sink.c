// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The metrics sink: a job's live processes into the node's metrics
 * (metrics.c), so that each scrape shows the latest sample. A process's
 * series go when it ends, the job's when the job ends.
 */
#include <stdlib.h>

#include "metrics.h"
#include "sink.h"

#define MX_STACK_COMPS	64

struct metrics_sink {
	struct sink base;
	struct metrics *m;
	struct mx_job *job;
};

static void mx_comp_of(struct mx_comp *out, const struct sink_comp *c)
{
	out->name = c->name;
	out->rss = c->rss;
	out->pss = c->pss;
	out->peak_rss = c->peak_rss;
}

static void mx_proc_sample(struct sink *s, const struct sink_job *j, const struct sink_proc *p)
{
	struct metrics_sink *ms = (struct metrics_sink *)s;
	struct mx_comp stack[MX_STACK_COMPS], *comps = stack, total;

	if (!ms->job)
		return;
	ms->job->dropped = j->c.job_dropped;
	if (p->ncomps > MX_STACK_COMPS) {
		comps = malloc(p->ncomps * sizeof(*comps));
		if (!comps)
			return;
	}
	mx_comp_of(&total, &p->total);
	for (size_t i = 0; i < p->ncomps; i++)
		mx_comp_of(&comps[i], &p->comps[i]);
	metrics_proc_update(ms->job, (struct mx_proc **)p->state, p->rank, p->step, &total, comps,
			    p->ncomps);
	if (comps != stack)
		free(comps);
}

static void mx_proc_end(struct sink *s, const struct sink_job *j, const struct sink_proc *p)
{
	(void)s;
	(void)j;
	metrics_proc_remove((struct mx_proc **)p->state);
}

static void mx_job_oom(struct sink *s, const struct sink_job *j, const struct sink_oom *o)
{
	struct metrics_sink *ms = (struct metrics_sink *)s;

	(void)j;
	if (ms->job)
		metrics_oom_count(ms->m, ms->job, o->rank);
}

static void mx_job_end(struct sink *s, const struct sink_job *j)
{
	struct metrics_sink *ms = (struct metrics_sink *)s;

	(void)j;
	if (ms->job)
		metrics_job_remove(ms->m, ms->job);
	ms->job = NULL;
}

static void mx_destroy(struct sink *s)
{
	mx_job_end(s, NULL);
	free(s);
}

static const struct sink_ops metrics_ops = {
	.proc_sample = mx_proc_sample,
	.proc_end = mx_proc_end,
	.job_end = mx_job_end,
	.job_oom = mx_job_oom,
	.destroy = mx_destroy,
};

struct sink *metrics_sink_new(struct metrics *m, const char *job, const char *user, uid_t uid)
{
	struct metrics_sink *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	ms->base.ops = &metrics_ops;
	ms->m = m;
	ms->job = metrics_job_add(m, job, user, uid);
	if (!ms->job) {
		free(ms);
		return NULL;
	}
	return &ms->base;
}
