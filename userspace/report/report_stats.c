// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report's figures, from the timelines: display groups of components,
 * per-process peaks, figures across ranks, the job's sum over time, and the
 * rank x time matrix of the heat maps. Plain arithmetic, no I/O.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/*
 * One colour per group, the same in every chart and table. Colour-blind
 * safe-ish (Tableau 10); MPI and the application get the two strongest.
 */
#define COL_APP		"#4e79a7"
#define COL_MPI		"#f28e2b"
#define COL_LIBC	"#59a14f"
#define COL_OTHER_LIBS	"#9c755f"
#define COL_STACK	"#d4a6c8"
#define COL_UNATTR	"#bab0ac"
static const char *const lib_colors[RP_MAX_LIBS] = { "#76b7b2", "#edc948", "#b07aa1", "#ff9da7" };

/* A library is drawn apart only if it matters: 1% of the largest rank peak. */
#define LIB_MIN_SHARE	0.01

int64_t rp_proc_peak(const struct rp_proc *p, size_t c, bool pss)
{
	const int64_t *exact = pss ? p->pss_peaks : p->rss_peak;
	int64_t *const *series = pss ? p->pss : p->rss;
	int64_t m = 0;

	/* A thinned timeline knows each component's peak over every sample. */
	if (p->thinned)
		return exact && c < p->npeak ? exact[c] : 0;
	if (!series || c >= p->nrss || !series[c])
		return 0;
	for (size_t s = 0; s < p->n; s++)
		if (series[c][s] > m)
			m = series[c][s];
	return m;
}

/* Largest rss of component c in any process of the run. */
static int64_t comp_peak(const struct rp_run *run, size_t c)
{
	int64_t m = 0, v;

	for (size_t i = 0; i < run->nprocs; i++) {
		v = rp_proc_peak(&run->procs[i], c, false);
		if (v > m)
			m = v;
	}
	return m;
}

static int add_group(struct rp_groups *g, const char *name, const char *color,
		     enum rp_group_kind kind)
{
	size_t i = g->n++;

	snprintf(g->name[i], sizeof(g->name[i]), "%s", name);
	g->color[i] = color;
	g->kind[i] = kind;
	return (int)i;
}

struct lib_peak {
	size_t comp;
	int64_t peak;
};

static int cmp_lib_peak(const void *a, const void *b)
{
	const struct lib_peak *x = a, *y = b;

	if (x->peak != y->peak)
		return x->peak > y->peak ? -1 : 1;
	return (x->comp > y->comp) - (x->comp < y->comp);
}

/* Fixed components in drawing order (bottom to top), libraries go after libc. */
static const struct {
	const char *comp;
	const char *color;
	enum rp_group_kind kind;
} fixed[] = {
	{ "app", COL_APP, RP_G_APP },
	{ "mpi", COL_MPI, RP_G_MPI },
	{ "libc", COL_LIBC, RP_G_LIBC },
	{ "stack", COL_STACK, RP_G_STACK },
	{ "unattributed", COL_UNATTR, RP_G_UNATTR },
};

static int fixed_index(const char *name)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(fixed[i].comp, name))
			return (int)i;
	return -1;
}

static void add_fixed(const struct rp_run *run, struct rp_groups *g, size_t fi)
{
	int c = rp_comp_find(run, fixed[fi].comp);

	if (c < 0)
		return;
	g->of_comp[c] = add_group(g, fixed[fi].comp, fixed[fi].color, fixed[fi].kind);
}

int rp_groups_make(const struct rp_run *run, struct rp_groups *g)
{
	struct lib_peak *libs;
	size_t nlibs = 0, shown = 0;
	int64_t top = comp_peak(run, 0);
	int other = -1;

	memset(g, 0, sizeof(*g));
	g->mpi = g->app = -1;
	g->of_comp = malloc((run->ncomp ? run->ncomp : 1) * sizeof(*g->of_comp));
	libs = malloc((run->ncomp ? run->ncomp : 1) * sizeof(*libs));
	if (!g->of_comp || !libs) {
		free(libs);
		rp_groups_free(g);
		return -1;
	}
	for (size_t c = 0; c < run->ncomp; c++) {
		g->of_comp[c] = -1;
		if (c == 0 || fixed_index(run->comp[c]) >= 0)
			continue;
		/* lib:* and any name a newer tracer may add: ranked by size. */
		libs[nlibs].comp = c;
		libs[nlibs++].peak = comp_peak(run, c);
	}
	qsort(libs, nlibs, sizeof(*libs), cmp_lib_peak);

	add_fixed(run, g, 0);
	add_fixed(run, g, 1);
	add_fixed(run, g, 2);
	for (size_t i = 0; i < nlibs; i++) {
		bool big = libs[i].peak > 0 && (double)libs[i].peak >= LIB_MIN_SHARE * (double)top;

		if (big && shown < RP_MAX_LIBS) {
			g->of_comp[libs[i].comp] = add_group(g, run->comp[libs[i].comp],
							     lib_colors[shown], RP_G_LIB);
			shown++;
			continue;
		}
		if (other < 0)
			other = add_group(g, "other libraries", COL_OTHER_LIBS, RP_G_OTHER_LIBS);
		g->of_comp[libs[i].comp] = other;
	}
	add_fixed(run, g, 3);
	add_fixed(run, g, 4);
	for (size_t i = 0; i < g->n; i++) {
		if (g->kind[i] == RP_G_MPI)
			g->mpi = (int)i;
		if (g->kind[i] == RP_G_APP)
			g->app = (int)i;
	}
	free(libs);
	return 0;
}

int rp_groups_apply(struct rp_run *run, const struct rp_groups *g)
{
	for (size_t i = 0; i < run->nprocs; i++) {
		struct rp_proc *p = &run->procs[i];

		free(p->tot);
		free(p->grp);
		p->tot = calloc(p->n, sizeof(*p->tot));
		p->grp = calloc(p->n * RP_MAX_GROUPS, sizeof(*p->grp));
		if (!p->tot || !p->grp)
			return -1;
		if (p->nrss && p->rss[0])
			memcpy(p->tot, p->rss[0], p->n * sizeof(*p->tot));
		for (size_t c = 1; c < p->nrss; c++) {
			int gi = g->of_comp[c];

			if (!p->rss[c] || gi < 0)
				continue;
			for (size_t s = 0; s < p->n; s++) {
				int64_t *v = &p->grp[s * RP_MAX_GROUPS + (size_t)gi];

				*v = rp_sat_add(*v, p->rss[c][s]);
			}
		}
	}
	return 0;
}

void rp_groups_free(struct rp_groups *g)
{
	free(g->of_comp);
	g->of_comp = NULL;
}

/*
 * summary.csv's peak pss of this process's total, -1 when it has none, or
 * when two processes share its rank and pid (a merged dataset's nodes reuse
 * pids): then the timeline's own figure stands.
 */
static int64_t summary_peak_pss(const struct rp_run *run, const struct rp_proc *p)
{
	size_t lo = 0, hi = run->nsummary;
	int64_t found = -1;
	int totals = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct rp_summary_row *r = &run->summary[mid];

		if (rp_summary_cmp(r->rank, r->pid, p->rank, p->pid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < run->nsummary; i++) {
		const struct rp_summary_row *r = &run->summary[i];

		if (r->rank != p->rank || r->pid != p->pid)
			break;
		if (!strcmp(r->component, "total")) {
			found = r->peak_pss;
			totals++;
		}
	}
	return totals == 1 ? found : -1;
}

/*
 * A thinned timeline kept the samples of its largest and smallest totals,
 * not of each group's: a group of one component takes that component's
 * peak over every sample. A group of several ("other libraries") keeps the
 * largest sum among the kept samples, which may be below its true peak.
 */
static void exact_gpeak(const struct rp_run *run, const struct rp_groups *g,
			const struct rp_proc *p, struct rp_pstat *st)
{
	for (size_t gi = 0; gi < g->n; gi++) {
		size_t members = 0, only = 0;

		for (size_t c = 0; c < run->ncomp; c++)
			if (g->of_comp[c] == (int)gi) {
				members++;
				only = c;
			}
		if (members == 1 && only < p->npeak && p->rss_peak[only] > st->gpeak[gi])
			st->gpeak[gi] = p->rss_peak[only];
	}
}

void rp_pstat_of(const struct rp_run *run, const struct rp_groups *g, size_t pi,
		 struct rp_pstat *st)
{
	const struct rp_proc *p = &run->procs[pi];
	size_t pk = 0;

	memset(st, 0, sizeof(*st));
	if (!p->n)
		return;
	for (size_t s = 1; s < p->n; s++)
		if (p->tot[s] > p->tot[pk])
			pk = s;
	st->peak_idx = pk;
	st->peak_t = p->t[pk];
	st->peak_total = p->tot[pk];
	st->final_total = p->tot[p->n - 1];
	for (size_t gi = 0; gi < g->n; gi++) {
		st->at_peak[gi] = p->grp[pk * RP_MAX_GROUPS + gi];
		for (size_t s = 0; s < p->n; s++)
			if (p->grp[s * RP_MAX_GROUPS + gi] > st->gpeak[gi])
				st->gpeak[gi] = p->grp[s * RP_MAX_GROUPS + gi];
	}
	if (p->thinned)
		exact_gpeak(run, g, p, st);
	if (g->mpi >= 0 && st->peak_total > 0)
		st->mpi_share = (double)st->at_peak[g->mpi] / (double)st->peak_total;
	st->peak_pss = summary_peak_pss(run, p);
	if (st->peak_pss < 0 && p->thinned)
		st->peak_pss = p->pss_peak;
	else if (st->peak_pss < 0)
		for (size_t s = 0; s < p->n; s++)
			if (p->pss_total[s] > st->peak_pss)
				st->peak_pss = p->pss_total[s];
}

/* Population standard deviation: the ranks are the whole job, not a sample of it. */
void rp_dist_of(const double *v, size_t n, struct rp_dist *d)
{
	double sum = 0, sq = 0;

	memset(d, 0, sizeof(*d));
	d->n = n;
	if (!n)
		return;
	d->max = d->min = v[0];
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] > d->max) {
			d->max = v[i];
			d->max_at = i;
		}
		if (v[i] < d->min) {
			d->min = v[i];
			d->min_at = i;
		}
	}
	d->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - d->mean) * (v[i] - d->mean);
	d->std = sqrt(sq / (double)n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define DEFAULT_INTERVAL	0.1	/* the tracer's default --interval */

double rp_interval(const struct rp_run *run)
{
	double *gaps, med = DEFAULT_INTERVAL;
	size_t n = 0, room = 0;

	for (size_t i = 0; i < run->nprocs; i++)
		room += run->procs[i].thinned ? run->procs[i].ngaps :
			run->procs[i].n < RP_MAX_GAPS ? run->procs[i].n : RP_MAX_GAPS;
	gaps = malloc((room ? room : 1) * sizeof(*gaps));
	if (!gaps)
		return med;
	for (size_t i = 0; i < run->nprocs; i++) {
		const struct rp_proc *p = &run->procs[i];

		/* A thinned timeline's gaps are wider than the tracer's: its first ones, as read. */
		if (p->thinned) {
			memcpy(gaps + n, p->gaps, p->ngaps * sizeof(*gaps));
			n += p->ngaps;
			continue;
		}
		for (size_t s = 1; s < p->n && s < RP_MAX_GAPS; s++)
			if (p->t[s] > p->t[s - 1])
				gaps[n++] = p->t[s] - p->t[s - 1];
	}
	/* The median: a stalled sample or two must not set the grid. */
	if (n) {
		qsort(gaps, n, sizeof(*gaps), cmp_double);
		med = gaps[n / 2];
	}
	free(gaps);
	/* time_s has millisecond resolution. */
	return med < 0.001 ? 0.001 : med;
}

double rp_duration(const struct rp_run *run)
{
	double d = 0;

	for (size_t i = 0; i < run->nprocs; i++)
		if (run->procs[i].n && run->procs[i].t[run->procs[i].n - 1] > d)
			d = run->procs[i].t[run->procs[i].n - 1];
	return d;
}

#define MAX_BUCKETS	200000

static size_t bucket_of(double t, double interval)
{
	return (size_t)floor(t / interval + 0.5);
}

/* Add one process's step function (its last sample in each bucket) to the sum. */
static void agg_add(struct rp_agg *a, const struct rp_proc *p)
{
	for (size_t s = 0; s < p->n; s++) {
		size_t b0 = bucket_of(p->t[s], a->interval);
		size_t b1 = s + 1 < p->n ? bucket_of(p->t[s + 1], a->interval) : b0 + 1;

		/*
		 * Sample s holds until the next sample's bucket: a gap is
		 * bridged, and a later sample in the same bucket replaces it.
		 */
		for (size_t b = b0; b < b1 && b < a->nb; b++) {
			int64_t *grp = &a->grp[b * RP_MAX_GROUPS];

			a->tot[b] = rp_sat_add(a->tot[b], p->tot[s]);
			for (size_t g = 0; g < RP_MAX_GROUPS; g++)
				grp[g] = rp_sat_add(grp[g], p->grp[s * RP_MAX_GROUPS + g]);
		}
	}
}

int rp_agg_build(const struct rp_run *run, double interval, int node, struct rp_agg *a)
{
	double dur = rp_duration(run);

	memset(a, 0, sizeof(*a));
	if (interval <= 0)
		interval = DEFAULT_INTERVAL;
	/* A long run at a fine interval: coarser buckets rather than gigabytes. */
	if (dur / interval > MAX_BUCKETS)
		interval = dur / MAX_BUCKETS;
	a->interval = interval;
	a->nb = bucket_of(dur, interval) + 1;
	a->tot = calloc(a->nb, sizeof(*a->tot));
	a->grp = calloc(a->nb * RP_MAX_GROUPS, sizeof(*a->grp));
	if (!a->tot || !a->grp) {
		rp_agg_free(a);
		return -1;
	}
	a->first_b = a->nb - 1;
	for (size_t i = 0; i < run->nprocs; i++) {
		const struct rp_proc *p = &run->procs[i];

		if (!p->n || (node >= 0 && p->node != node))
			continue;
		agg_add(a, p);
		if (bucket_of(p->t[0], interval) < a->first_b)
			a->first_b = bucket_of(p->t[0], interval);
	}
	/*
	 * The peak among buckets someone has a sample in: before first_b
	 * everything is 0, and a job whose totals are all 0 must not peak
	 * there (the chart starts at first_b).
	 */
	a->peak_b = a->first_b;
	for (size_t b = a->first_b + 1; b < a->nb; b++)
		if (a->tot[b] > a->tot[a->peak_b])
			a->peak_b = b;
	return 0;
}

void rp_agg_free(struct rp_agg *a)
{
	free(a->tot);
	free(a->grp);
	a->tot = a->grp = NULL;
	a->nb = 0;
}

static double value_at(const struct rp_proc *p, int grp, size_t s)
{
	return (double)(grp < 0 ? p->tot[s] : p->grp[s * RP_MAX_GROUPS + (size_t)grp]);
}

void rp_heat_build(const struct rp_run *run, int grp, double tmax, size_t ncol, double *cells)
{
	for (size_t i = 0; i < run->nprocs; i++)
		rp_heat_row(&run->procs[i], grp, tmax, ncol, cells + i * ncol);
}

void rp_heat_row(const struct rp_proc *p, int grp, double tmax, size_t ncol, double *row)
{
	double w = tmax > 0 ? tmax / (double)ncol : 1, prev = NAN;
	size_t s = 0, c0, c1;

	for (size_t c = 0; c < ncol; c++)
		row[c] = NAN;
	if (!p->n)
		return;
	c0 = (size_t)(p->t[0] / w);
	c1 = (size_t)(p->t[p->n - 1] / w);
	c0 = c0 < ncol ? c0 : ncol - 1;
	c1 = c1 < ncol ? c1 : ncol - 1;
	for (size_t c = c0; c <= c1; c++) {
		double mx = NAN;

		/* The largest sample inside the cell keeps the peaks visible... */
		while (s < p->n && ((size_t)(p->t[s] / w) <= c || c == ncol - 1)) {
			double v = value_at(p, grp, s);

			mx = isnan(mx) || v > mx ? v : mx;
			prev = v;
			s++;
		}
		/* ...and an empty cell holds the last value before it. */
		row[c] = isnan(mx) ? prev : mx;
	}
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

size_t rp_pick_samples(const struct rp_proc *p, size_t ncol, size_t *out)
{
	size_t n = 0, pk = 0, s = 0, k = 0;
	double t0, w;

	if (!p->n)
		return 0;
	if (p->n <= 2 * ncol) {
		for (s = 0; s < p->n; s++)
			out[s] = s;
		return p->n;
	}
	for (s = 1; s < p->n; s++)
		if (p->tot[s] > p->tot[pk])
			pk = s;
	t0 = p->t[0];
	w = (p->t[p->n - 1] - t0) / (double)ncol;
	if (w <= 0)
		w = 1;
	out[n++] = 0;
	out[n++] = p->n - 1;
	out[n++] = pk;
	/* Per column the highest and the lowest sample: the outline survives. */
	for (s = 0; s < p->n;) {
		size_t hi = s, lo = s;

		for (; s < p->n && (p->t[s] - t0 < w * (double)(k + 1) || k + 1 == ncol); s++) {
			if (p->tot[s] > p->tot[hi])
				hi = s;
			if (p->tot[s] < p->tot[lo])
				lo = s;
		}
		out[n++] = hi;
		if (lo != hi)
			out[n++] = lo;
		k++;
		if (n + 2 > 2 * ncol + 3)
			break;
	}
	qsort(out, n, sizeof(*out), cmp_size);
	k = 0;
	for (s = 0; s < n; s++)
		if (!k || out[s] != out[k - 1])
			out[k++] = out[s];
	return k;
}

static const struct rp_pstat *sort_stats;

static int cmp_peak(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int64_t px = sort_stats[x].peak_total, py = sort_stats[y].peak_total;

	if (px != py)
		return px > py ? -1 : 1;
	return (x > y) - (x < y);
}

void rp_order_by_peak(const struct rp_pstat *st, size_t n, size_t *order)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	/* qsort has no context argument in C11; the report is single-threaded. */
	sort_stats = st;
	qsort(order, n, sizeof(*order), cmp_peak);
	sort_stats = NULL;
}
