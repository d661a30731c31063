// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report page: one HTML file with its style and charts inline, so it
 * opens anywhere after scp (no script, no font, nothing fetched). Read top
 * down it answers: how big did the job get and when, how much of it was
 * MPI's, which ranks stand out, and can the numbers be trusted (drops).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define PAGE_W		1320.0
#define GRID_GAP	10.0	/* px between small multiples, as in the style */
#define MAX_PANELS	12	/* more processes than this: the top ones by peak */
#define ALL_PANELS	16	/* up to this many, every process gets a panel */
#define MAX_TABLE_ROWS	32
#define TOP_TABLE_ROWS	16
#define HEAT_COLS	240
#define MAX_HEAT_ROWS	256	/* more processes than this: bands of them */
#define MAX_CALL_ROWS	30

static void text(FILE *f, const char *s)
{
	rp_xml_escape(f, s);
}

static void bytes(FILE *f, double b)
{
	char s[32];

	rp_fmt_bytes(b, s, sizeof(s));
	fputs(s, f);
}

static void who(char *out, size_t len, const struct rp_proc *p)
{
	if (p->rank >= 0)
		snprintf(out, len, "rank %d", p->rank);
	else
		snprintf(out, len, "pid %d", p->pid);
}

static const char *info_get(const struct rp_run *run, const char *key)
{
	for (size_t i = 0; i < run->ninfo; i++)
		if (!strcmp(run->info[i].key, key))
			return run->info[i].value;
	return NULL;
}

/* A count from run_info.csv, -1 when absent or not a number. */
static long long info_count(const struct rp_run *run, const char *key)
{
	const char *v = info_get(run, key);
	char *end;
	long long n;

	if (!v || !*v)
		return -1;
	n = strtoll(v, &end, 10);
	return *end || n < 0 ? -1 : n;
}

/* 1234567 as "1,234,567": counts of events and calls read at a glance. */
static void count(FILE *f, long long n)
{
	char d[32];
	int len, i;

	len = snprintf(d, sizeof(d), "%lld", n < 0 ? -n : n);
	if (n < 0)
		fputc('-', f);
	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			fputc(',', f);
		fputc(d[i], f);
	}
}

/* "rank"/"ranks" or "process"/"processes" for n of what the figures cover. */
static const char *who_word(bool ranks, size_t n)
{
	if (ranks)
		return n == 1 ? "rank" : "ranks";
	return n == 1 ? "process" : "processes";
}

/* Everything the page is drawn from, computed once. */
struct page {
	struct rp_run *run;
	struct rp_groups g;
	struct rp_pstat *st;
	size_t *order;		/* processes by peak, largest first */
	size_t *who;		/* processes the cross-rank figures cover */
	size_t nwho;
	bool ranks;		/* who are ranks (else: every process) */
	struct rp_agg agg;
	double dur, interval;
};

static int page_init(struct page *pg, struct rp_run *run)
{
	memset(pg, 0, sizeof(*pg));
	pg->run = run;
	if (rp_groups_make(run, &pg->g) || rp_groups_apply(run, &pg->g))
		return -1;
	pg->st = calloc(run->nprocs, sizeof(*pg->st));
	pg->order = calloc(run->nprocs, sizeof(*pg->order));
	pg->who = calloc(run->nprocs, sizeof(*pg->who));
	if (!pg->st || !pg->order || !pg->who)
		return -1;
	for (size_t i = 0; i < run->nprocs; i++) {
		rp_pstat_of(run, &pg->g, i, &pg->st[i]);
		if (run->procs[i].rank >= 0)
			pg->who[pg->nwho++] = i;
	}
	pg->ranks = pg->nwho > 0;
	if (!pg->ranks)
		for (size_t i = 0; i < run->nprocs; i++)
			pg->who[pg->nwho++] = i;
	rp_order_by_peak(pg->st, run->nprocs, pg->order);
	pg->dur = rp_duration(run);
	pg->interval = rp_interval(run);
	return rp_agg_build(run, pg->interval, -1, &pg->agg);
}

static void page_free(struct page *pg)
{
	rp_groups_free(&pg->g);
	rp_agg_free(&pg->agg);
	free(pg->st);
	free(pg->order);
	free(pg->who);
}

static double agg_mpi_share(const struct page *pg)
{
	const struct rp_agg *a = &pg->agg;

	if (pg->g.mpi < 0 || !a->nb || a->tot[a->peak_b] <= 0)
		return 0;
	return (double)a->grp[a->peak_b * RP_MAX_GROUPS + (size_t)pg->g.mpi] /
	       (double)a->tot[a->peak_b];
}

static void head(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	const char *base = strrchr(run->dir, '/');
	size_t others = run->nprocs - (pg->ranks ? pg->nwho : 0);

	base = base && base[1] ? base + 1 : run->dir;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>memattr-bpf report: ", f);
	text(f, base);
	fprintf(f, "</title>\n<style>%s</style>\n</head><body><main>\n", rp_html_css);
	fputs("<h1>Memory by owner: ", f);
	text(f, base);
	fputs("</h1>\n<p class=\"sub\">", f);
	if (pg->ranks)
		fprintf(f, "%zu MPI rank%s", pg->nwho, pg->nwho == 1 ? "" : "s");
	if (others)
		fprintf(f, "%s%zu other traced process%s", pg->ranks ? " + " : "", others,
			others == 1 ? "" : "es");
	/* The tracer's own interval: a thinned timeline's gaps are wider. */
	fprintf(f, " &middot; %.1f s traced &middot; a sample every %.0f ms &middot; resident memory (RSS) "
		"by owner, as written by memattr-bpf in <code>", pg->dur,
		info_count(run, "interval_ms") > 0 ? (double)info_count(run, "interval_ms") : pg->interval * 1000);
	text(f, run->dir);
	fputs("</code></p>\n", f);
	if (run->thinned)
		fprintf(f, "<p class=\"note\">%zu timeline%s thinned to %zu samples each for this page (the "
			"first, the last and the largest and smallest total in each slice of time: no "
			"process's peak is lost); the CSVs hold every sample.</p>\n", run->thinned,
			run->thinned == 1 ? " was" : "s were", run->max_samples);
}

/* Drops, unwinding failures, a run still going: said before any figure. */
static void warnings(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	long long drops = info_count(run, "dropped_events");
	long long unw = info_count(run, "unwind_failures");
	long long ev = info_count(run, "events");

	if (run->partial_lines || run->dropped_samples)
		fprintf(f, "<div class=\"warn\"><b>Run still in progress?</b> %zu file%s ended in a line "
			"being written and %zu incomplete last sample%s; both were left out. Run the "
			"report again after the run ends for the final figures.</div>\n",
			run->partial_lines, run->partial_lines == 1 ? "" : "s",
			run->dropped_samples, run->dropped_samples == 1 ? "" : "s");
	if (drops > 0 || unw > 0) {
		fputs("<div class=\"warn\"><b>Some events were lost.</b> ", f);
		if (drops > 0) {
			count(f, drops);
			fprintf(f, " event%s dropped when the ring buffer was full", drops == 1 ? " was" : "s were");
			if (ev > 0) {
				fputs(" (", f);
				count(f, ev);
				/* In double: a hostile run_info.csv can hold INT64_MAX. */
				fprintf(f, " seen, %.2f%% lost)",
					100.0 * (double)drops / ((double)ev + (double)drops));
			}
			fputs(": attribution between two smaps reads may be off (totals are not "
			      "affected). ", f);
		}
		if (unw > 0) {
			count(f, unw);
			fprintf(f, " stack%s could not be unwound: that memory is counted as unattributed.",
				unw == 1 ? "" : "s");
		}
		fputs("</div>\n", f);
	}
}

static void card(FILE *f, const char *label, double b, const char *sub)
{
	fputs("<div class=\"card\"><span>", f);
	text(f, label);
	fputs("</span><b>", f);
	bytes(f, b);
	fputs("</b><span>", f);
	text(f, sub);
	fputs("</span></div>\n", f);
}

static void cards(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	const struct rp_agg *a = &pg->agg;
	const struct rp_pstat *top = &pg->st[pg->order[0]];
	double *v = malloc(pg->nwho * sizeof(*v));
	struct rp_dist d;
	char sub[160], w[32], b1[32], b2[32];

	if (!v)
		return;
	for (size_t i = 0; i < pg->nwho; i++)
		v[i] = (double)pg->st[pg->who[i]].peak_total;
	rp_dist_of(v, pg->nwho, &d);
	free(v);
	fputs("<div class=\"cards\">\n", f);
	snprintf(sub, sizeof(sub), "sum over %s at %.1f s; MPI %.0f%% of it",
		 pg->ranks ? "ranks" : "processes", (double)a->peak_b * a->interval,
		 100 * agg_mpi_share(pg));
	card(f, "Job peak", a->nb ? (double)a->tot[a->peak_b] : 0, sub);
	who(w, sizeof(w), &run->procs[pg->order[0]]);
	snprintf(sub, sizeof(sub), "%s at %.1f s; MPI %.0f%% of it", w, top->peak_t, 100 * top->mpi_share);
	card(f, "Largest peak of one process", (double)top->peak_total, sub);
	rp_fmt_bytes(d.std, b1, sizeof(b1));
	rp_fmt_bytes(d.min, b2, sizeof(b2));
	snprintf(sub, sizeof(sub), "&plusmn; %s across %zu %s; smallest %s", b1, pg->nwho,
		 who_word(pg->ranks, pg->nwho), b2);
	fputs("<div class=\"card\"><span>Mean peak per ", f);
	fputs(pg->ranks ? "rank" : "process", f);
	fputs("</span><b>", f);
	bytes(f, d.mean);
	fprintf(f, "</b><span>%s</span></div>\n", sub);
	if (pg->g.mpi >= 0) {
		double peak_mpi = 0;

		for (size_t i = 0; i < pg->nwho; i++)
			if ((double)pg->st[pg->who[i]].gpeak[pg->g.mpi] > peak_mpi)
				peak_mpi = (double)pg->st[pg->who[i]].gpeak[pg->g.mpi];
		card(f, "Largest MPI library footprint", peak_mpi, "of any one rank, at any time");
	}
	fputs("</div>\n", f);
}

/* "12.3 MiB (rank 4, 1.8 s)" */
static void extreme(FILE *f, const struct page *pg, double v, size_t at, bool is_bytes,
		    bool pct, bool with_time)
{
	const struct rp_proc *p = &pg->run->procs[pg->who[at]];
	char w[32];

	if (is_bytes)
		bytes(f, v);
	else if (pct)
		fprintf(f, "%.1f%%", 100 * v);
	else
		fprintf(f, "%.1f s", v);
	who(w, sizeof(w), p);
	if (with_time)
		fprintf(f, " <small>(%s, %.1f s)</small>", w, pg->st[pg->who[at]].peak_t);
	else
		fprintf(f, " <small>(%s)</small>", w);
}

enum fig { F_PEAK, F_PSS, F_TIME, F_MPI_AT, F_SHARE, F_GPEAK, F_FINAL };

static double figure(const struct rp_pstat *st, enum fig k, size_t gi)
{
	switch (k) {
	case F_PEAK: return (double)st->peak_total;
	case F_PSS: return (double)st->peak_pss;
	case F_TIME: return st->peak_t;
	case F_MPI_AT: return (double)st->at_peak[gi];
	case F_SHARE: return st->mpi_share;
	case F_GPEAK: return (double)st->gpeak[gi];
	case F_FINAL: return (double)st->final_total;
	}
	return 0;
}

static void dist_row(FILE *f, const struct page *pg, const char *label, const char *swatch,
		     enum fig k, size_t gi)
{
	double *v = malloc(pg->nwho * sizeof(*v));
	bool is_bytes = k != F_TIME && k != F_SHARE, pct = k == F_SHARE;
	struct rp_dist d;

	if (!v)
		return;
	for (size_t i = 0; i < pg->nwho; i++)
		v[i] = figure(&pg->st[pg->who[i]], k, gi);
	rp_dist_of(v, pg->nwho, &d);
	free(v);
	fputs("<tr><td class=\"l\">", f);
	if (swatch)
		fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>", swatch);
	text(f, label);
	fputs("</td><td>", f);
	if (is_bytes) {
		bytes(f, d.mean);
		fputs(" &plusmn; ", f);
		bytes(f, d.std);
	} else if (pct) {
		fprintf(f, "%.1f%% &plusmn; %.1f%%", 100 * d.mean, 100 * d.std);
	} else {
		fprintf(f, "%.1f s &plusmn; %.2f s", d.mean, d.std);
	}
	fputs("</td><td>", f);
	extreme(f, pg, d.max, d.max_at, is_bytes, pct, k == F_PEAK);
	fputs("</td><td>", f);
	extreme(f, pg, d.min, d.min_at, is_bytes, pct, k == F_PEAK);
	fputs("</td></tr>\n", f);
}

static void peak_table(FILE *f, const struct page *pg)
{
	const char *unit = pg->ranks ? "rank" : "process";
	bool pss = true;

	for (size_t i = 0; i < pg->nwho; i++)
		pss = pss && pg->st[pg->who[i]].peak_pss >= 0;
	const char *units = who_word(pg->ranks, 2);

	fprintf(f, "<h2>Peaks across %s</h2>\n<p class=\"note\">Each %s's peak is the sample where its "
		"total resident memory was largest. Mean &plusmn; standard deviation over %zu %s; "
		"the largest and smallest %s in brackets.</p>\n", units, unit, pg->nwho,
		who_word(pg->ranks, pg->nwho), unit);
	fprintf(f, "<table><tr><th class=\"l\">figure (per %s)</th><th>mean &plusmn; std</th>"
		"<th>max</th><th>min</th></tr>\n", unit);
	dist_row(f, pg, "peak total (RSS)", "#222", F_PEAK, 0);
	if (pss)
		dist_row(f, pg, "peak total PSS (shared pages 1/N)", NULL, F_PSS, 0);
	dist_row(f, pg, "time of the peak", NULL, F_TIME, 0);
	if (pg->g.mpi >= 0) {
		dist_row(f, pg, "MPI library at the peak", pg->g.color[pg->g.mpi], F_MPI_AT,
			 (size_t)pg->g.mpi);
		dist_row(f, pg, "MPI share at the peak", pg->g.color[pg->g.mpi], F_SHARE, 0);
	}
	if (pg->g.app >= 0)
		dist_row(f, pg, "application at the peak", pg->g.color[pg->g.app], F_MPI_AT,
			 (size_t)pg->g.app);
	for (size_t gi = 0; gi < pg->g.n; gi++) {
		char label[96];

		snprintf(label, sizeof(label), "own peak of %s", pg->g.name[gi]);
		dist_row(f, pg, label, pg->g.color[gi], F_GPEAK, gi);
	}
	dist_row(f, pg, "total at the end", NULL, F_FINAL, 0);
	fputs("</table>\n", f);
}

static int agg_chart(FILE *f, const struct page *pg)
{
	struct rp_stack_chart c = {
		.width = PAGE_W, .height = 330, .tmax = pg->dur,
		.title = pg->ranks ? "Job total: sum over ranks, stacked by owner"
				   : "Job total: sum over processes, stacked by owner",
	};

	fprintf(f, "<h2>Job total over time</h2>\n<p class=\"note\">Resident memory of the whole job on "
		"%s, by owner; samples of different processes are aligned on a %.0f ms grid. "
		"The black line is the total.</p>\n",
		pg->run->nnodes > 1 ? "all its nodes" : "this node", pg->interval * 1000);
	return rp_svg_agg(f, &pg->g, &pg->agg, &c);
}

static int small_multiples(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	size_t n = run->nprocs <= ALL_PANELS ? run->nprocs : MAX_PANELS;
	size_t *shown = malloc(n * sizeof(*shown));
	/* Two a row for 2 or 4 panels: a square grid reads better than 3 + 1. */
	int cols = n <= 1 ? 1 : n == 2 || n == 4 ? 2 : 3;
	double vmax = 0;
	int ret = 0;

	if (!shown)
		return -1;
	/* All of them in rank order, or the largest ones by peak. */
	for (size_t i = 0; i < n; i++)
		shown[i] = run->nprocs <= ALL_PANELS ? i : pg->order[i];
	for (size_t i = 0; i < n; i++)
		if ((double)pg->st[shown[i]].peak_total > vmax)
			vmax = (double)pg->st[shown[i]].peak_total;
	fputs("<h2>Each process over time</h2>\n<p class=\"note\">", f);
	if (n < run->nprocs)
		fprintf(f, "The %zu processes with the largest peaks, largest first (all %zu are in the "
			"heat maps below). ", n, run->nprocs);
	fprintf(f, "One scale for all panels, so heights compare; the red mark is each one's peak.</p>\n"
		"<div class=\"grid\" style=\"grid-template-columns:repeat(%d,1fr)\">\n", cols);
	for (size_t i = 0; i < n && !ret; i++) {
		const struct rp_proc *p = &run->procs[shown[i]];
		struct rp_stack_chart c = {
			.width = (PAGE_W - GRID_GAP * (cols - 1)) / cols,
			.height = cols == 3 ? 210 : cols == 2 ? 250 : 300,
			.tmax = pg->dur, .vmax = vmax,
		};
		char t[96];

		if (p->rank >= 0)
			snprintf(t, sizeof(t), "rank %d (pid %d)", p->rank, p->pid);
		else
			snprintf(t, sizeof(t), "pid %d (not a rank)", p->pid);
		c.title = t;
		ret = rp_svg_proc(f, run, &pg->g, shown[i], &pg->st[shown[i]], &c);
	}
	fputs("</div>\n", f);
	free(shown);
	return ret;
}

/*
 * Rows of the rank x time heat maps: one per process up to MAX_HEAT_ROWS;
 * past that, bands of consecutive processes (ranks in order), each cell the
 * band's largest value, so a 100,000-rank job stays a picture, and no
 * rank's peak disappears in it.
 */
static int heat_rows(const struct page *pg, int grp, size_t ncol, size_t nrow, double *cells,
		     char (*names)[40], const char **labels)
{
	const struct rp_run *run = pg->run;
	double *row = malloc(ncol * sizeof(*row));

	if (!row)
		return -1;
	for (size_t r = 0; r < nrow; r++) {
		size_t first = r * run->nprocs / nrow, end = (r + 1) * run->nprocs / nrow;
		double *band = cells + r * ncol;
		const struct rp_proc *a = &run->procs[first], *z = &run->procs[end - 1];

		for (size_t k = 0; k < ncol; k++)
			band[k] = NAN;
		for (size_t i = first; i < end; i++) {
			rp_heat_row(&run->procs[i], grp, pg->dur, ncol, row);
			for (size_t k = 0; k < ncol; k++)
				if (!isnan(row[k]) && (isnan(band[k]) || row[k] > band[k]))
					band[k] = row[k];
		}
		if (end - first == 1 && a->rank >= 0)
			snprintf(names[r], sizeof(names[r]), "rank %d", a->rank);
		else if (end - first == 1)
			snprintf(names[r], sizeof(names[r]), "pid %d", a->pid);
		else if (a->rank >= 0 && z->rank >= 0)
			snprintf(names[r], sizeof(names[r]), "ranks %d-%d", a->rank, z->rank);
		else
			snprintf(names[r], sizeof(names[r]), "%zu processes", end - first);
		labels[r] = names[r];
	}
	free(row);
	return 0;
}

static int heat_maps(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	size_t ncol = HEAT_COLS, nrow = run->nprocs < MAX_HEAT_ROWS ? run->nprocs : MAX_HEAT_ROWS;
	double *cells = malloc(nrow * ncol * sizeof(*cells));
	char (*names)[40] = calloc(nrow, sizeof(*names));
	const char **labels = calloc(nrow, sizeof(*labels));
	struct rp_heat_chart c = {
		.width = PAGE_W, .tmax = pg->dur,
		.peak_t = pg->agg.nb ? (double)pg->agg.peak_b * pg->agg.interval : -1,
	};
	int ret = -1;

	if (!cells || !names || !labels)
		goto out;
	fputs("<h2>Ranks &times; time</h2>\n<p class=\"note\">", f);
	if (nrow < run->nprocs)
		fprintf(f, "%zu processes in %zu bands of consecutive ranks, each cell the largest value "
			"in its band", run->nprocs, nrow);
	else
		fputs("One row per process", f);
	fputs(", one column per time slice (its largest value); yellow is much, dark purple little, "
	      "grey not running. White rings mark each row's peak.</p>\n<div class=\"box\">\n", f);
	if (heat_rows(pg, -1, ncol, nrow, cells, names, labels))
		goto out;
	c.title = "total resident memory";
	if (rp_svg_heat_rows(f, labels, nrow, cells, ncol, &c))
		goto out;
	if (pg->g.mpi >= 0) {
		if (heat_rows(pg, pg->g.mpi, ncol, nrow, cells, names, labels))
			goto out;
		c.title = "MPI library (mpi)";
		if (rp_svg_heat_rows(f, labels, nrow, cells, ncol, &c))
			goto out;
	}
	fputs("</div>\n", f);
	ret = 0;
out:
	free(cells);
	free(names);
	free(labels);
	return ret;
}

static void group_at_peak(FILE *f, const struct rp_pstat *st, int gi)
{
	fputs("<td>", f);
	if (gi >= 0)
		bytes(f, (double)st->at_peak[gi]);
	else
		fputs("&ndash;", f);
	fputs("</td>", f);
}

static int group_kind(const struct rp_groups *g, enum rp_group_kind k)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->kind[i] == k)
			return (int)i;
	return -1;
}

static void proc_table(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	bool all = run->nprocs <= MAX_TABLE_ROWS;
	size_t n = all ? run->nprocs : TOP_TABLE_ROWS;
	int un = group_kind(&pg->g, RP_G_UNATTR);

	fputs("<h2>Per process</h2>\n", f);
	if (!all)
		fprintf(f, "<p class=\"note\">The %zu processes with the largest peaks of %zu.</p>\n",
			n, run->nprocs);
	fprintf(f, "<table><tr><th>rank</th>%s<th>pid</th><th>peak total</th><th>at</th><th>MPI at peak</th>",
		run->nnodes ? "<th class=\"l\">node</th>" : "");
	fputs("<th class=\"l\">MPI share</th><th>app at peak</th><th>unattributed at peak</th>"
	      "<th>peak PSS</th><th>at end</th></tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		size_t pi = all ? i : pg->order[i];
		const struct rp_proc *p = &run->procs[pi];
		const struct rp_pstat *st = &pg->st[pi];

		if (p->rank >= 0)
			fprintf(f, "<tr><td>%d</td>", p->rank);
		else
			fputs("<tr><td>&ndash;</td>", f);
		if (run->nnodes && p->node >= 0 && (size_t)p->node < run->nnodes) {
			fputs("<td class=\"l\">", f);
			text(f, run->nodes[p->node]);
			fputs("</td>", f);
		} else if (run->nnodes) {
			fputs("<td></td>", f);
		}
		fprintf(f, "<td>%d</td><td><b>", p->pid);
		bytes(f, (double)st->peak_total);
		fprintf(f, "</b></td><td>%.1f s</td>", st->peak_t);
		group_at_peak(f, st, pg->g.mpi);
		fprintf(f, "<td class=\"l\">%5.1f%%<span class=\"bar\" style=\"width:%.0fpx\"></span></td>",
			100 * st->mpi_share, 80 * st->mpi_share);
		group_at_peak(f, st, pg->g.app);
		group_at_peak(f, st, un);
		fputs("<td>", f);
		if (st->peak_pss >= 0)
			bytes(f, (double)st->peak_pss);
		fputs("</td><td>", f);
		bytes(f, (double)st->final_total);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* mpi_calls.csv summed over ranks, one row per function. */
struct call_sum {
	const char *function;
	size_t ranks;
	int64_t calls, gained, released, net, peak;
	double first, last;
	bool has_released, has_peak, has_calls;
};

static int cmp_call(const void *a, const void *b)
{
	const struct call_sum *x = a, *y = b;

	if (x->gained != y->gained)
		return x->gained > y->gained ? -1 : 1;
	return strcmp(x->function, y->function);
}

static void opt_bytes_cell(FILE *f, bool has, double v)
{
	fputs("<td>", f);
	if (has)
		bytes(f, v);
	else
		fputs("&ndash;", f);
	fputs("</td>", f);
}

static void opt_time_cell(FILE *f, double t)
{
	if (t >= 0)
		fprintf(f, "<td>%.2f s</td>", t);
	else
		fputs("<td>&ndash;</td>", f);
}

static void call_table(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;
	struct call_sum *cs = calloc(run->ncalls ? run->ncalls : 1, sizeof(*cs));
	size_t n = 0;
	int64_t top = 1;

	if (!cs)
		return;
	for (size_t i = 0; i < run->ncalls; i++) {
		const struct rp_call_row *r = &run->calls[i];
		size_t k;

		for (k = 0; k < n && strcmp(cs[k].function, r->function); k++)
			;
		if (k == n) {
			cs[n].function = r->function;
			cs[n].first = cs[n].last = -1;
			n++;
		}
		cs[k].ranks += r->rows ? r->rows : 1;
		if (r->calls >= 0) {
			cs[k].calls = rp_sat_add(cs[k].calls, r->calls);
			cs[k].has_calls = true;
		}
		cs[k].gained = rp_sat_add(cs[k].gained, r->gained);
		cs[k].net = rp_sat_add(cs[k].net, r->net);
		if (r->released >= 0) {
			cs[k].released = rp_sat_add(cs[k].released, r->released);
			cs[k].has_released = true;
		}
		if (r->peak >= 0) {
			cs[k].peak = r->peak > cs[k].peak ? r->peak : cs[k].peak;
			cs[k].has_peak = true;
		}
		if (r->first_growth >= 0 && (cs[k].first < 0 || r->first_growth < cs[k].first))
			cs[k].first = r->first_growth;
		if (r->last_growth > cs[k].last)
			cs[k].last = r->last_growth;
	}
	qsort(cs, n, sizeof(*cs), cmp_call);
	for (size_t k = 0; k < n; k++)
		top = cs[k].gained > top ? cs[k].gained : top;
	fputs("<h2>Which MPI calls made the library grow</h2>\n<p class=\"note\">From "
	      "<code>mpi_calls.csv</code>, summed over ranks, largest growth first. <i>gained</i> is "
	      "memory the MPI library took during calls of that function or asked for in them, "
	      "<i>net</i> what it still held after them; <i>peak</i> the largest on one rank. "
	      "<i>calls</i> are counted only in runs traced with --mpi-calls.</p>\n", f);
	if (!n) {
		fputs("<p class=\"note\">No MPI function made the library grow.</p>\n", f);
		free(cs);
		return;
	}
	fputs("<table><tr><th class=\"l\">function</th><th>ranks</th><th>calls</th>"
	      "<th class=\"l\">gained</th><th>gained per rank</th><th>released</th><th>net</th>"
	      "<th>peak (one rank)</th><th>first growth</th><th>last growth</th></tr>\n", f);
	for (size_t k = 0; k < n && k < MAX_CALL_ROWS; k++) {
		fputs("<tr><td class=\"l\"><code>", f);
		text(f, cs[k].function);
		fprintf(f, "</code></td><td>%zu</td><td>", cs[k].ranks);
		if (cs[k].has_calls)
			count(f, cs[k].calls);
		else
			fputs("&ndash;", f);
		fputs("</td><td class=\"l\">", f);
		bytes(f, (double)cs[k].gained);
		fprintf(f, "<span class=\"bar\" style=\"width:%.0fpx\"></span></td>",
			120.0 * (double)cs[k].gained / (double)top);
		opt_bytes_cell(f, true, (double)cs[k].gained / (double)cs[k].ranks);
		opt_bytes_cell(f, cs[k].has_released, (double)cs[k].released);
		opt_bytes_cell(f, true, (double)cs[k].net);
		opt_bytes_cell(f, cs[k].has_peak, (double)cs[k].peak);
		opt_time_cell(f, cs[k].first);
		opt_time_cell(f, cs[k].last);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (n > MAX_CALL_ROWS)
		fprintf(f, "<p class=\"note\">%zu more functions with less growth are in the CSV.</p>\n",
			n - MAX_CALL_ROWS);
	free(cs);
}

static void run_notes(FILE *f, const struct page *pg)
{
	const struct rp_run *run = pg->run;

	fputs("<h2>About this run</h2>\n", f);
	if (run->has_info) {
		long long drops = info_count(run, "dropped_events");
		long long unw = info_count(run, "unwind_failures");

		if (drops == 0 && unw <= 0)
			fputs("<div class=\"ok\">No event was dropped: attribution is complete.</div>\n", f);
		fputs("<table>\n", f);
		for (size_t i = 0; i < run->ninfo; i++) {
			fputs("<tr><td class=\"l\">", f);
			text(f, run->info[i].key);
			fputs("</td><td class=\"l\">", f);
			text(f, run->info[i].value);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
	} else {
		fputs("<p class=\"note\">No <code>run_info.csv</code> in the directory: how many events "
		      "were seen or dropped is not known here (the tracer prints it at the end).</p>\n", f);
	}
	fputs("<p class=\"note\">", f);
	if (!run->has_summary)
		fputs("No <code>summary.csv</code> yet: peaks come from the timelines only. ", f);
	if (!run->has_calls)
		fputs("No <code>mpi_calls.csv</code>: the per-MPI-function breakdown was not recorded "
		      "in this run. ", f);
	fputs("<code>unattributed</code> is memory the kernel counts whose owner is not known "
	      "(see the documentation, docs/attribution.md); it is never dropped, so the stacks always add up to the "
	      "kernel's resident set.</p>\n", f);
}

int rp_html_write(FILE *f, struct rp_run *run)
{
	struct page pg = { 0 };
	int ret = -1;

	if (!run->nprocs || page_init(&pg, run))
		goto out;
	head(f, &pg);
	rp_oom_html(f, run);
	warnings(f, &pg);
	cards(f, &pg);
	rp_svg_legend(f, &pg.g, PAGE_W);
	if (agg_chart(f, &pg))
		goto out;
	peak_table(f, &pg);
	if (run->model_html)
		fputs(run->model_html, f);
	if (rp_html_nodes(f, run, &pg.g, pg.st, pg.interval, pg.dur,
			  pg.agg.nb ? (double)pg.agg.peak_b * pg.agg.interval : -1, PAGE_W))
		goto out;
	if (small_multiples(f, &pg) || heat_maps(f, &pg))
		goto out;
	proc_table(f, &pg);
	if (run->has_calls)
		call_table(f, &pg);
	run_notes(f, &pg);
	fputs("</main></body></html>\n", f);
	ret = ferror(f) ? -1 : 0;
out:
	page_free(&pg);
	return ret;
}
