// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The figures of an OOM post-mortem are those of the victim's last sample
 * before the kill: a process being torn down has no figures worth reading,
 * and the kill, read from the ring after it happened, may follow a sample
 * taken meanwhile. Its memory cgroup is read at the kill, and kept from
 * its samples for a victim already reaped or one whose exit hides it.
 */
#include <stdlib.h>
#include <string.h>

#include "memcg.h"
#include "oom.h"
#include "session.h"

/*
 * A process is often moved into its cgroup after it started (a launcher
 * or a script that writes cgroup.procs and execs the job), so the copy is
 * read again at each of a process's first samples and then at each trend
 * step: the copy a reaped victim falls back to is then at most a trend
 * step old.
 */
#define MEMCG_EARLY_READS	30

static void note_memcg(struct proc *p, bool trend_step)
{
	struct memcg_ref now;

	if (!p->memcg)
		p->memcg = calloc(1, sizeof(*p->memcg));
	if (!p->memcg || (p->memcg_reads >= MEMCG_EARLY_READS && !trend_step))
		return;
	p->memcg_reads++;
	if (!memcg_of("", p->pid, &now))
		*p->memcg = now;	/* a failed read (gone) keeps the last one */
}

void oom_note_sample(struct proc *p, double now)
{
	int64_t rss[p->ncomps ? p->ncomps : 1];

	for (size_t i = 0; i < p->ncomps; i++)
		rss[i] = p->comps[i].rss;
	note_memcg(p, trend_sample(&p->trend, now, p->total.rss, rss, p->ncomps) == 1);
}

static int by_rss_desc(const void *a, const void *b)
{
	const struct sink_oom_comp *x = a, *y = b;

	if (x->rss != y->rss)
		return x->rss > y->rss ? -1 : 1;
	return strcmp(x->name, y->name);
}

unsigned int oom_fold(struct sink_oom_comp *c, unsigned int n)
{
	qsort(c, n, sizeof(*c), by_rss_desc);
	if (n <= SINK_OOM_COMPS)
		return n;
	for (unsigned int i = SINK_OOM_COMPS; i < n; i++) {
		c[SINK_OOM_COMPS - 1].rss += c[i].rss;
		c[SINK_OOM_COMPS - 1].growth += c[i].growth;
	}
	snprintf(c[SINK_OOM_COMPS - 1].name, sizeof(c->name), "other");
	return SINK_OOM_COMPS;
}

static void set_comp(struct sink_oom_comp *c, const char *name, int64_t rss, int64_t growth)
{
	snprintf(c->name, sizeof(c->name), "%s", name ? name : "?");
	c->rss = rss;
	c->growth = growth;
}

/* The victim's components that had memory at sample at, with their growth. */
static void victim_figures(const struct session *s, const struct proc *p,
			   const struct trend_snap *at, struct sink_oom *o)
{
	size_t n = at->n;
	int64_t *d = calloc(n ? n : 1, sizeof(*d));
	struct sink_oom_comp *all = calloc(n ? n : 1, sizeof(*all));
	unsigned int k = 0;
	int64_t dtotal;

	if (!d || !all)
		goto out;
	o->window_s = trend_growth(&p->trend, at, &dtotal, d);
	set_comp(&o->total, "total", at->total, dtotal);
	for (size_t i = 0; i < n && i < p->ncomps; i++)
		if (p->comps[i].seen)
			set_comp(&all[k++], comp_table_name(&s->comps, (comp_id)i), at->rss[i], d[i]);
	k = oom_fold(all, k);
	memcpy(o->by, all, k * sizeof(*all));
	o->n = k;
out:
	free(d);
	free(all);
}

/*
 * p's figures at its last sample before time; one never sampled (killed
 * before its first) has its live figures in live, rss[] its storage.
 */
static const struct trend_snap *figures_before(const struct proc *p, double time,
					       struct trend_snap *live, int64_t *rss)
{
	const struct trend_snap *at = trend_at(&p->trend, time);

	if (at)
		return at;
	for (size_t i = 0; i < p->ncomps; i++)
		rss[i] = p->comps[i].rss;
	*live = (struct trend_snap){ .t = -1, .total = p->total.rss, .rss = rss, .n = p->ncomps,
				     .set = true };
	return live;
}

/* The job's live processes at their last samples before time, by component. */
static void job_figures(const struct session *s, double time, struct sink_oom *o)
{
	size_t n = comp_table_count(&s->comps);
	int64_t *rss = calloc(n ? n : 1, sizeof(*rss)), total = 0;
	struct sink_oom_comp *all = calloc(n ? n : 1, sizeof(*all));
	unsigned int k = 0;

	if (!rss || !all)
		goto out;
	for (const struct proc *p = s->procs.first; p; p = p->next) {
		int64_t own[p->ncomps ? p->ncomps : 1];
		const struct trend_snap *at;
		struct trend_snap live;

		if (!p->account || !p->total.seen)
			continue;
		at = figures_before(p, time, &live, own);
		total += at->total;
		for (size_t i = 0; i < at->n && i < n; i++)
			rss[i] += at->rss[i];
	}
	set_comp(&o->job_total, "total", total, 0);
	for (size_t i = 0; i < n; i++)
		if (rss[i])
			set_comp(&all[k++], comp_table_name(&s->comps, (comp_id)i), rss[i], 0);
	k = oom_fold(all, k);
	memcpy(o->job, all, k * sizeof(*all));
	o->njob = k;
out:
	free(rss);
	free(all);
}

/*
 * The limit p was killed under, 0 or -1. A victim already exiting may show
 * the root cgroup (v1 moves an exiting task out of its groups): the copy
 * read at its samples decides when that one names a limit reached.
 */
static int victim_limit(const char *root, const struct proc *p, struct memcg_limit *lim)
{
	const struct memcg_ref *kept = p->memcg && p->memcg->path[0] ? p->memcg : NULL;
	struct memcg_limit other;
	struct memcg_ref now;
	bool read = !memcg_of(root, p->pid, &now);

	if (memcg_limit(root, read ? &now : kept, lim))
		return -1;
	if (read && !lim->cgroup && kept && !memcg_limit(root, kept, &other) && other.cgroup)
		*lim = other;
	return 0;
}

void oom_fill(const struct session *s, const struct proc *p, double time, const char *root,
	      struct sink_oom *o)
{
	int64_t own[p->ncomps ? p->ncomps : 1];
	const struct trend_snap *at = NULL;
	struct trend_snap live;
	struct memcg_limit lim;

	if (p->total.seen)
		at = figures_before(p, time, &live, own);
	memset(o, 0, sizeof(*o));
	o->rank = p->rank;
	o->pid = p->pid;
	o->time = time;
	o->sample_time = at ? at->t : -1;	/* live figures: t is -1 too */
	if (!victim_limit(root, p, &lim)) {
		o->limit_bytes = lim.limit_bytes;
		o->cgroup = lim.cgroup;
		snprintf(o->cgroup_dir, sizeof(o->cgroup_dir), "%s", lim.dir);
	}
	if (at)
		victim_figures(s, p, at, o);
	else
		set_comp(&o->total, "total", 0, 0);
	job_figures(s, time, o);
}
