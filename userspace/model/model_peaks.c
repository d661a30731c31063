// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A run's per-rank peaks summed up per component (md_add_peak), and
 * summary.csv read for them in one pass (md_summary_peaks): what stays is
 * per component (its figures and where it first appears) and the set of
 * ranks seen, so a summary.csv of any length, a crafted one included,
 * is read in bounded memory.
 *
 * The result is the one a sorted read gives (summary.csv's rows by rank,
 * then pid, then line, as rp_read_summary sorts them): components in order
 * of their first row in that order, each rank counted once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "model.h"
#include "report.h"

/* Where a component first appears in summary.csv's sorted order. */
struct first_row {
	int rank, pid;
	size_t line;
};

static struct md_comp *comp_get(struct md_run *run, const char *name)
{
	struct md_comp *grown;

	for (size_t i = 0; i < run->ncomp; i++)
		if (!strcmp(run->comp[i].name, name))
			return &run->comp[i];
	if (run->ncomp >= MD_MAX_COMPS)
		return NULL;
	grown = realloc(run->comp, (run->ncomp + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	run->comp = grown;
	memset(&grown[run->ncomp], 0, sizeof(*grown));
	snprintf(grown[run->ncomp].name, sizeof(grown->name), "%s", name);
	return &grown[run->ncomp++];
}

/* The component's index, made when new: >= 0, or -1 (out of memory, or MD_MAX_COMPS). */
static long add_peak_at(struct md_run *run, struct md_acc *a, const char *name, double v)
{
	struct md_comp *c = comp_get(run, name);
	size_t i;

	if (!c)
		return -1;
	i = (size_t)(c - run->comp);
	if (i >= a->nsum) {
		double *grown = realloc(a->sum, (i + 1) * sizeof(*grown));

		if (!grown)
			return -1;
		for (size_t k = a->nsum; k <= i; k++)
			grown[k] = 0;
		a->sum = grown;
		a->nsum = i + 1;
	}
	/* Byte counts below 2^53 add up exactly in a double, in any order. */
	a->sum[i] += v;
	if (v > c->value)
		c->value = v;
	c->nranks++;
	return (long)i;
}

int md_add_peak(struct md_run *run, struct md_acc *a, const char *name, double v)
{
	return add_peak_at(run, a, name, v) < 0 ? -1 : 0;
}

/*
 * The ranks seen: appended unsorted (a process's rows come together, so
 * a repeat of the last is dropped at once), sorted and made unique when
 * the room is full, which then doubles up to MD_MAX_RANKS distinct ranks.
 */
struct rank_set {
	int *v;
	size_t n, cap;
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void rank_set_unique(struct rank_set *s)
{
	size_t w = 0;

	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_int);
	for (size_t i = 0; i < s->n; i++)
		if (!w || s->v[w - 1] != s->v[i])
			s->v[w++] = s->v[i];
	s->n = w;
}

/* 0, or -1 with a sentence in err. */
static int rank_set_add(struct rank_set *s, int rank, char *err, size_t errlen)
{
	if (s->n && s->v[s->n - 1] == rank)
		return 0;
	if (s->n == s->cap) {
		rank_set_unique(s);
		if (s->n > MD_MAX_RANKS) {
			snprintf(err, errlen, "more than %d ranks", MD_MAX_RANKS);
			return -1;
		}
		/* Still half full: twice the room, up to twice MD_MAX_RANKS (then n < cap). */
		if (!s->cap || (s->n >= s->cap / 2 && s->cap < 2u * MD_MAX_RANKS)) {
			size_t want = s->cap ? 2 * s->cap : 1024;
			int *grown = realloc(s->v, want * sizeof(*grown));

			if (!grown) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			s->v = grown;
			s->cap = want;
		}
	}
	s->v[s->n++] = rank;
	return 0;
}

struct scan {
	struct md_run *run;
	struct md_acc *a;
	bool use_pss;
	bool pss_missing;	/* a rank row without peak_pss (the column is absent) */
	size_t line;
	struct first_row *first;	/* parallel to run->comp */
	size_t nfirst;
	struct rank_set ranks;
};

static bool before(const struct first_row *x, const struct first_row *y)
{
	int c = rp_summary_cmp(x->rank, x->pid, y->rank, y->pid);

	return c ? c < 0 : x->line < y->line;
}

static int scan_row(const struct rp_summary_row *r, void *arg, char *err, size_t errlen)
{
	struct scan *sc = arg;
	struct first_row here = { r->rank, r->pid, sc->line++ };
	long i;

	/* Processes that are not ranks (launchers, helpers) are left out. */
	if (r->rank < 0)
		return 0;
	if (r->peak_pss < 0)
		sc->pss_missing = true;
	if (sc->use_pss && sc->pss_missing)
		return 0;	/* refused once the file is read: its own errors first */
	i = add_peak_at(sc->run, sc->a, r->component,
			(double)(sc->use_pss ? r->peak_pss : r->peak_rss));
	if (i < 0) {
		if (sc->run->ncomp >= MD_MAX_COMPS)
			snprintf(err, errlen, "more than %d components", MD_MAX_COMPS);
		else
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((size_t)i >= sc->nfirst) {
		struct first_row *grown = realloc(sc->first, ((size_t)i + 1) * sizeof(*grown));

		if (!grown) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		sc->first = grown;
		sc->first[i] = here;
		sc->nfirst = (size_t)i + 1;
	} else if (before(&here, &sc->first[i])) {
		sc->first[i] = here;
	}
	return rank_set_add(&sc->ranks, r->rank, err, errlen);
}

/* Components (and their sums) in the order of their first row: insertion sort, as few as they are. */
static void order_comps(struct scan *sc)
{
	struct md_run *run = sc->run;

	for (size_t i = 1; i < run->ncomp; i++)
		for (size_t j = i; j > 0 && before(&sc->first[j], &sc->first[j - 1]); j--) {
			struct md_comp c = run->comp[j];
			struct first_row f = sc->first[j];
			double s = sc->a->sum[j];

			run->comp[j] = run->comp[j - 1];
			run->comp[j - 1] = c;
			sc->first[j] = sc->first[j - 1];
			sc->first[j - 1] = f;
			sc->a->sum[j] = sc->a->sum[j - 1];
			sc->a->sum[j - 1] = s;
		}
}

int md_summary_peaks(struct md_run *run, struct md_acc *a, FILE *f, const char *path,
		     bool use_pss, char *err, size_t errlen)
{
	struct scan sc = { .run = run, .a = a, .use_pss = use_pss };
	int ret = -1;

	if (rp_scan_summary(f, path, scan_row, &sc, err, errlen))
		goto out;
	if (use_pss && sc.pss_missing) {
		snprintf(err, errlen, "%s: no %s column (--pss needs it)", path, COL_PEAK_PSS);
		goto out;
	}
	rank_set_unique(&sc.ranks);
	if (sc.ranks.n > MD_MAX_RANKS) {
		snprintf(err, errlen, "%s: more than %d ranks", path, MD_MAX_RANKS);
		goto out;
	}
	order_comps(&sc);
	run->ranks = (int)sc.ranks.n;
	ret = 0;
out:
	free(sc.first);
	free(sc.ranks.v);
	return ret;
}
