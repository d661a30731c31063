// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A job folded for the exposition: the components it keeps, its rank
 * groups (capped), and each group's sums (metrics_fold.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "metrics_fold.h"

struct comp_sum {
	const char *name;
	int64_t rss;
};

static int by_rss_desc(const void *a, const void *b)
{
	const struct comp_sum *x = a, *y = b;

	if (x->rss != y->rss)
		return x->rss < y->rss ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_rank(const void *a, const void *b)
{
	const struct mx_group *p = a, *q = b;
	int x = p->rank, y = q->rank, s = strcmp(p->step, q->step);

	if (s)
		return s;
	/* -1 ("other") sorts last. */
	if ((x < 0) != (y < 0))
		return x < 0 ? 1 : -1;
	return (x > y) - (x < y);
}

/* Ranks first, the largest first; ties by step and rank, so the cap keeps the same ones. */
static int by_size(const void *a, const void *b)
{
	const struct mx_group *p = a, *q = b;

	if ((p->rank < 0) != (q->rank < 0))
		return p->rank < 0 ? 1 : -1;
	if (p->rss != q->rss)
		return p->rss < q->rss ? 1 : -1;
	return by_rank(a, b);
}

static bool same_group(const struct mx_group *g, const char *step, int rank)
{
	return g->rank == rank && !strcmp(g->step, step);
}

static ssize_t find_group(const struct mx_folded *fo, const char *step, int rank)
{
	for (size_t g = 0; g < fo->ngroups; g++)
		if (same_group(&fo->groups[g], step, rank))
			return (ssize_t)g;
	return -1;
}

static ssize_t find_name(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (ssize_t)i;
	return -1;
}

void mx_fold_free(struct mx_folded *fo)
{
	free(fo->names);
	free(fo->groups);
	free(fo->v);
	free(fo->job);
	memset(fo, 0, sizeof(*fo));
}

/* The components kept: the job's largest by resident bytes, summed over its processes. */
static int pick_names(const struct mx_job *j, struct mx_folded *fo)
{
	struct comp_sum *sums = NULL;
	size_t nsums = 0, cap = 0, nkept;
	bool folds;

	for (const struct mx_proc *p = j->procs; p; p = p->next) {
		for (size_t i = 0; i < p->ncomps; i++) {
			size_t k;

			for (k = 0; k < nsums && strcmp(sums[k].name, p->comps[i].name); k++)
				;
			if (k == nsums) {
				if (nsums == cap) {
					struct comp_sum *n;

					cap = cap ? cap * 2 : 32;
					n = realloc(sums, cap * sizeof(*n));
					if (!n) {
						free(sums);
						return -ENOMEM;
					}
					sums = n;
				}
				sums[nsums++] = (struct comp_sum){ p->comps[i].name, 0 };
			}
			sums[k].rss += p->comps[i].rss;
		}
	}
	if (nsums > 1)
		qsort(sums, nsums, sizeof(*sums), by_rss_desc);
	nkept = nsums < METRICS_TOP_COMPONENTS ? nsums : METRICS_TOP_COMPONENTS;
	folds = nsums > nkept;
	fo->names = calloc(nkept + 2, sizeof(*fo->names));
	if (!fo->names) {
		free(sums);
		return -ENOMEM;
	}
	fo->names[fo->nnames++] = "total";
	for (size_t i = 0; i < nkept; i++) {
		/* A component really named "other" shares the folded series. */
		if (!strcmp(sums[i].name, "other"))
			folds = true;
		else if (strcmp(sums[i].name, "total"))
			fo->names[fo->nnames++] = sums[i].name;
	}
	if (folds)
		fo->names[fo->nnames++] = "other";
	free(sums);
	return 0;
}

/* Past max_ranks, the smallest ranks become their step's "other": merged, then deduplicated. */
static void cap_ranks(struct mx_folded *fo, unsigned int max_ranks)
{
	size_t nranks = 0, n = 0;

	for (size_t g = 0; g < fo->ngroups; g++)
		nranks += fo->groups[g].rank >= 0;
	if (!max_ranks || nranks <= max_ranks)
		return;
	qsort(fo->groups, fo->ngroups, sizeof(*fo->groups), by_size);
	for (size_t g = max_ranks; g < nranks; g++)
		fo->groups[g].rank = -1;
	fo->folded = (unsigned int)(nranks - max_ranks);
	for (size_t g = 0; g < fo->ngroups; g++) {
		ssize_t k = fo->groups[g].rank < 0 ? -1 : (ssize_t)n;

		for (size_t i = 0; k < 0 && i < n; i++)
			if (same_group(&fo->groups[i], fo->groups[g].step, -1))
				k = (ssize_t)i;
		if (k < 0 || k == (ssize_t)n)
			fo->groups[n++] = fo->groups[g];
	}
	fo->ngroups = n;
}

static int pick_groups(const struct mx_job *j, unsigned int max_ranks, struct mx_folded *fo)
{
	size_t n = 0;
	bool ranks = false;

	for (const struct mx_proc *p = j->procs; p; p = p->next)
		n++;
	fo->groups = calloc(n ? n : 1, sizeof(*fo->groups));
	if (!fo->groups)
		return -ENOMEM;
	for (const struct mx_proc *p = j->procs; p; p = p->next) {
		int rank = p->rank < 0 ? -1 : p->rank;
		ssize_t g = find_group(fo, p->step, rank);

		if (g < 0) {
			g = (ssize_t)fo->ngroups++;
			fo->groups[g] = (struct mx_group){ .step = p->step, .rank = rank };
		}
		fo->groups[g].rss += p->total.rss;
		fo->groups[g].peak += p->total.peak_rss;
	}
	for (size_t g = 0; g < fo->ngroups; g++) {
		const struct mx_group *x = &fo->groups[g];

		/* The largest rank; the "other" groups count only in a job with no rank. */
		if (x->rank >= 0 && (!ranks || x->peak > fo->rank_peak)) {
			fo->rank_peak = x->peak;
			ranks = true;
		} else if (x->rank < 0 && !ranks && x->peak > fo->rank_peak) {
			fo->rank_peak = x->peak;
		}
	}
	cap_ranks(fo, max_ranks);
	if (fo->ngroups > 1)
		qsort(fo->groups, fo->ngroups, sizeof(*fo->groups), by_rank);
	return 0;
}

static void add_comp(struct mx_folded *fo, size_t g, const struct mx_comp *c, bool is_total)
{
	ssize_t k = is_total ? 0 : find_name(fo->names + 1, fo->nnames - 1, c->name);
	int64_t *v;

	if (!is_total)
		k = k < 0 ? find_name(fo->names, fo->nnames, "other") : k + 1;
	if (k < 0)
		return;
	v = fo->v + (g * fo->nnames + (size_t)k) * MXV_NR;
	v[MXV_RSS] += c->rss;
	v[MXV_PSS] += c->pss;
	v[MXV_PEAK] += c->peak_rss;
	v = fo->job + (size_t)k * MXV_NR;
	v[MXV_RSS] += c->rss;
	v[MXV_PSS] += c->pss;
	v[MXV_PEAK] += c->peak_rss;
}

int mx_fold_job(const struct mx_job *j, unsigned int max_ranks, struct mx_folded *fo)
{
	memset(fo, 0, sizeof(*fo));
	if (pick_names(j, fo) || pick_groups(j, max_ranks, fo))
		goto fail;
	fo->v = calloc((fo->ngroups ? fo->ngroups : 1) * fo->nnames * MXV_NR, sizeof(*fo->v));
	fo->job = calloc(fo->nnames * MXV_NR, sizeof(*fo->job));
	if (!fo->v || !fo->job)
		goto fail;
	for (const struct mx_proc *p = j->procs; p; p = p->next) {
		ssize_t g = find_group(fo, p->step, p->rank < 0 ? -1 : p->rank);

		if (g < 0)	/* a rank past the cap */
			g = find_group(fo, p->step, -1);
		if (g < 0)	/* cannot be: cap_ranks made its step's "other" */
			continue;
		add_comp(fo, (size_t)g, &p->total, true);
		for (size_t i = 0; i < p->ncomps; i++)
			add_comp(fo, (size_t)g, &p->comps[i], false);
	}
	return 0;
fail:
	mx_fold_free(fo);
	return -ENOMEM;
}
