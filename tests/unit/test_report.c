// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report's data side: reading a run's CSVs (columns by header name,
 * extra columns, quoted fields, a run still being written, bad and foreign
 * files refused with file and line), and the figures drawn from them (peaks,
 * mean and standard deviation across ranks, the job sum on a common time
 * grid, heat map cells, thinning for drawing, axis ticks). Fixtures are in
 * fixtures/report/; each directory is one run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "report.h"

#define FIX "fixtures/report/"

static int load(const char *name, struct rp_run *run, char *err)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), FIX "%s", name);
	memset(run, 0, sizeof(*run));
	err[0] = '\0';
	fd = open(path, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	ret = rp_load_dir(run, fd, path, err, RP_ERRLEN);
	close(fd);
	return ret;
}

/* A run that must be refused, with an error naming what and where. */
static void refused(const char *name, const char *want1, const char *want2)
{
	struct rp_run run;
	char err[RP_ERRLEN];

	assert_int_equal(load(name, &run, err), -1);
	if (!strstr(err, want1) || (want2 && !strstr(err, want2)))
		fail_msg("error for %s: '%s', expected '%s'%s%s", name, err, want1,
			 want2 ? " and " : "", want2 ? want2 : "");
	assert_null(strchr(err, '\n'));
	rp_run_free(&run);
}

static const struct rp_proc *proc_of_rank(const struct rp_run *run, int rank)
{
	for (size_t i = 0; i < run->nprocs; i++)
		if (run->procs[i].rank == rank)
			return &run->procs[i];
	fail_msg("no rank %d", rank);
	return NULL;
}

static int64_t rss(const struct rp_run *run, const struct rp_proc *p, const char *comp, size_t s)
{
	int c = rp_comp_find(run, comp);

	assert_true(c >= 0);
	if ((size_t)c >= p->nrss || !p->rss[c])
		return 0;
	return p->rss[c][s];
}

static void test_split(void **state)
{
	char line[] = "a,,\"b,c\",\"say \"\"hi\"\"\",";
	char bad1[] = "a,\"open";
	char bad2[] = "a,\"x\"y";
	char bad3[] = "a,b\"c";
	char *f[8];

	(void)state;
	assert_int_equal(rp_csv_split(line, f, 8), 5);
	assert_string_equal(f[0], "a");
	assert_string_equal(f[1], "");
	assert_string_equal(f[2], "b,c");
	assert_string_equal(f[3], "say \"hi\"");
	assert_string_equal(f[4], "");
	assert_int_equal(rp_csv_split(bad1, f, 8), -1);
	assert_int_equal(rp_csv_split(bad2, f, 8), -1);
	assert_int_equal(rp_csv_split(bad3, f, 8), -1);
}

static void test_load_good(void **state)
{
	struct rp_run run;
	char err[RP_ERRLEN];
	const struct rp_proc *p0, *p1;

	(void)state;
	if (load("good", &run, err))
		fail_msg("good run refused: %s", err);
	assert_int_equal(run.nprocs, 3);
	/* Ranks by rank first, then the process that is not one (pid 50 < 100). */
	assert_int_equal(run.procs[0].rank, 0);
	assert_int_equal(run.procs[1].rank, 1);
	assert_int_equal(run.procs[2].rank, -1);
	assert_int_equal(run.procs[2].pid, 50);
	assert_string_equal(run.procs[0].file, "rank-0.csv");
	assert_string_equal(run.comp[0], "total");
	p0 = proc_of_rank(&run, 0);
	p1 = proc_of_rank(&run, 1);
	assert_int_equal(p0->pid, 100);
	assert_int_equal(p0->n, 3);
	assert_int_equal(p1->n, 3);
	assert_true(fabs(p1->t[1] - 0.202) < 1e-9);
	assert_int_equal(rss(&run, p0, "total", 1), 3000);
	assert_int_equal(rss(&run, p0, "mpi", 2), 800);
	/* A component that appears late is 0 before. */
	assert_int_equal(rss(&run, p0, "lib:libfoo.so", 0), 0);
	assert_int_equal(rss(&run, p0, "lib:libfoo.so", 2), 200);
	assert_int_equal(p0->pss_total[1], 1500);
	assert_int_equal(run.partial_lines, 0);
	assert_int_equal(run.dropped_samples, 0);

	assert_true(run.has_summary);
	assert_int_equal(run.nsummary, 4);
	assert_int_equal(run.summary[2].peak_pss, 2600);
	assert_int_equal(run.summary[3].rank, -1);

	/* mpi_calls.csv: an unknown trailing column, an empty growth time, and
	 * a row of a run without --mpi-calls (growth, calls not counted). */
	assert_true(run.has_calls);
	assert_int_equal(run.ncalls, 4);
	assert_int_equal(run.calls[0].calls, 1);
	assert_int_equal(run.calls[3].calls, -1);
	assert_int_equal(run.calls[3].gained, 4096);
	assert_string_equal(run.calls[2].function, "MPI_Alltoall");
	assert_int_equal(run.calls[2].net, -200);
	assert_int_equal(run.calls[2].released, 500);
	assert_true(run.calls[2].last_growth < 0);
	assert_true(fabs(run.calls[1].first_growth - 0.051) < 1e-9);

	assert_true(run.has_info);
	assert_int_equal(run.ninfo, 4);
	assert_string_equal(run.info[0].key, "events");
	assert_string_equal(run.info[2].value, "2");
	assert_string_equal(run.info[3].value, "mpirun -np 2 ./a.out, with a comma");
	rp_run_free(&run);
}

static void test_extra_columns(void **state)
{
	struct rp_run run;
	char err[RP_ERRLEN];
	const struct rp_proc *p;

	(void)state;
	if (load("extra", &run, err))
		fail_msg("refused: %s", err);
	p = proc_of_rank(&run, 3);
	assert_int_equal(p->pid, 300);
	assert_int_equal(p->n, 2);
	assert_int_equal(rss(&run, p, "total", 1), 12288);
	assert_int_equal(rss(&run, p, "app", 1), 8192);
	assert_int_equal(rss(&run, p, "lib:odd,name.so", 0), 4096);
	assert_int_equal(p->pss_total[0], 2048);
	assert_false(run.has_summary);
	assert_false(run.has_calls);
	assert_false(run.has_info);
	rp_run_free(&run);
}

static void test_in_progress(void **state)
{
	struct rp_run run;
	char err[RP_ERRLEN];

	(void)state;
	if (load("partial", &run, err))
		fail_msg("a run in progress refused: %s", err);
	/* rank 0: the cut line is ignored; rank 1: the sample missing a row is. */
	assert_int_equal(proc_of_rank(&run, 0)->n, 2);
	assert_int_equal(proc_of_rank(&run, 1)->n, 2);
	assert_int_equal(rss(&run, proc_of_rank(&run, 0), "total", 1), 2000);
	assert_int_equal(run.partial_lines, 1);
	assert_int_equal(run.dropped_samples, 1);
	rp_run_free(&run);
}

static void test_bad_input(void **state)
{
	(void)state;
	refused("empty", "no rank-<R>.csv", "empty");
	refused("truncated_header", "rank-0.csv:1:", "cut short");
	refused("badnum", "rank-0.csv:3:", "'12x4' in column rss_bytes");
	refused("foreign", "rank-0.csv:1:", "not a memattr-bpf timeline");
	refused("badsummary", "summary.csv:3:", "peak_rss_bytes");
	refused("shortrow", "rank-0.csv:3:", "5 fields");
	refused("notime", "rank-0.csv:3:", "no total row");
}

/* Groups, stats and the aggregate on the good run. */
struct fx {
	struct rp_run run;
	struct rp_groups g;
	struct rp_pstat st[3];
};

static int fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char err[RP_ERRLEN];

	if (!fx || load("good", &fx->run, err) || rp_groups_make(&fx->run, &fx->g) ||
	    rp_groups_apply(&fx->run, &fx->g))
		return -1;
	for (size_t i = 0; i < 3; i++)
		rp_pstat_of(&fx->run, &fx->g, i, &fx->st[i]);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;

	rp_groups_free(&fx->g);
	rp_run_free(&fx->run);
	free(fx);
	return 0;
}

static int group_named(const struct rp_groups *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->name[i], name))
			return (int)i;
	return -1;
}

static void test_groups(void **state)
{
	struct fx *fx = *state;
	const struct rp_groups *g = &fx->g;

	/* Drawing order bottom up: app, mpi, libraries, unattributed. */
	assert_int_equal(g->n, 4);
	assert_string_equal(g->name[0], "app");
	assert_string_equal(g->name[1], "mpi");
	assert_string_equal(g->name[2], "lib:libfoo.so");
	assert_string_equal(g->name[3], "unattributed");
	assert_int_equal(g->mpi, 1);
	assert_int_equal(g->app, 0);
	assert_string_equal(g->color[g->mpi], "#f28e2b");
	assert_int_equal(g->of_comp[0], -1);
	/* Every group's rows sum to the total. */
	for (size_t i = 0; i < fx->run.nprocs; i++) {
		const struct rp_proc *p = &fx->run.procs[i];

		for (size_t s = 0; s < p->n; s++) {
			int64_t sum = 0;

			for (size_t k = 0; k < g->n; k++)
				sum += p->grp[s * RP_MAX_GROUPS + k];
			assert_int_equal(sum, p->tot[s]);
		}
	}
}

static void test_peaks(void **state)
{
	struct fx *fx = *state;
	const struct rp_pstat *s0 = &fx->st[0], *s1 = &fx->st[1];

	assert_int_equal(s0->peak_total, 3000);
	assert_int_equal(s0->peak_idx, 1);
	assert_true(fabs(s0->peak_t - 0.2) < 1e-9);
	assert_int_equal(s0->at_peak[fx->g.mpi], 1000);
	assert_int_equal(s0->at_peak[fx->g.app], 2000);
	assert_true(fabs(s0->mpi_share - 1.0 / 3) < 1e-9);
	assert_int_equal(s0->gpeak[fx->g.mpi], 1000);
	assert_int_equal(s0->final_total, 1500);
	assert_int_equal(s1->peak_total, 5000);
	assert_true(fabs(s1->mpi_share - 0.8) < 1e-9);
	/* summary.csv's PSS peak wins over the timeline's (2500). */
	assert_int_equal(s1->peak_pss, 2600);
	assert_int_equal(s0->peak_pss, 1500);
	/* mpi's own peak is not the mpi at the total's peak for rank 0. */
	assert_int_equal(s1->gpeak[fx->g.mpi], 4000);
}

static void test_dist(void **state)
{
	double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	double one[] = { 42 };
	struct rp_dist d;

	(void)state;
	rp_dist_of(v, 8, &d);
	assert_true(fabs(d.mean - 5) < 1e-12);
	assert_true(fabs(d.std - 2) < 1e-12);	/* population, not sample (2.138) */
	assert_true(d.max == 9 && d.max_at == 7);
	assert_true(d.min == 2 && d.min_at == 0);
	rp_dist_of(one, 1, &d);
	assert_true(d.mean == 42 && d.std == 0 && d.max_at == 0 && d.min_at == 0);
	rp_dist_of(NULL, 0, &d);
	assert_int_equal(d.n, 0);
}

static void test_dist_ranks(void **state)
{
	struct fx *fx = *state;
	double v[2] = { (double)fx->st[0].peak_total, (double)fx->st[1].peak_total };
	struct rp_dist d;

	rp_dist_of(v, 2, &d);
	assert_true(fabs(d.mean - 4000) < 1e-9);
	assert_true(fabs(d.std - 1000) < 1e-9);
	assert_int_equal(fx->run.procs[d.max_at].rank, 1);
	assert_int_equal(fx->run.procs[d.min_at].rank, 0);
}

static void test_agg(void **state)
{
	struct fx *fx = *state;
	struct rp_agg a;

	assert_true(fabs(rp_interval(&fx->run) - 0.1) < 1e-6);
	assert_true(fabs(rp_duration(&fx->run) - 0.302) < 1e-9);
	assert_int_equal(rp_agg_build(&fx->run, 0.1, -1, &a), 0);
	/* Ranks 2 ms apart land in the same buckets; pid 50 only in the last. */
	assert_int_equal(a.nb, 4);
	assert_int_equal(a.tot[0], 0);
	assert_int_equal(a.tot[1], 3000);
	assert_int_equal(a.tot[2], 8000);
	assert_int_equal(a.tot[3], 5600);
	assert_int_equal(a.peak_b, 2);
	assert_int_equal(a.first_b, 1);
	assert_int_equal(a.grp[2 * RP_MAX_GROUPS + fx->g.mpi], 5000);
	assert_int_equal(a.grp[3 * RP_MAX_GROUPS + group_named(&fx->g, "unattributed")], 100);
	rp_agg_free(&a);
}

/* Two samples of a process in one bucket: the later counts; a gap is bridged. */
static void test_agg_gaps(void **state)
{
	double t[] = { 0.0, 0.1, 0.12, 0.4 };
	int64_t tot[] = { 10, 20, 30, 40 };
	int64_t grp[4 * RP_MAX_GROUPS] = { 0 };
	struct rp_proc p = { .rank = 0, .n = 4, .t = t, .tot = tot, .grp = grp };
	struct rp_run run = { .procs = &p, .nprocs = 1 };
	struct rp_agg a;

	(void)state;
	assert_int_equal(rp_agg_build(&run, 0.1, -1, &a), 0);
	assert_int_equal(a.nb, 5);
	assert_int_equal(a.tot[0], 10);
	assert_int_equal(a.tot[1], 30);
	assert_int_equal(a.tot[2], 30);
	assert_int_equal(a.tot[3], 30);
	assert_int_equal(a.tot[4], 40);
	assert_int_equal(a.peak_b, 4);
	assert_int_equal(a.first_b, 0);
	rp_agg_free(&a);
}

static void test_heat(void **state)
{
	struct fx *fx = *state;
	double cells[3 * 6];

	/* Six cells of 0.05 s over [0, 0.3]. */
	rp_heat_build(&fx->run, -1, 0.3, 6, cells);
	assert_true(isnan(cells[0]) && isnan(cells[1]));	/* rank 0 starts at 0.1 */
	assert_true(cells[2] == 1000);
	assert_true(cells[3] == 1000);	/* carried forward */
	assert_true(cells[4] == 3000);
	assert_true(cells[5] == 1500);	/* 0.3 is the last cell */
	assert_true(isnan(cells[12]) && cells[17] == 100);	/* pid 50: one sample at the end */
	rp_heat_build(&fx->run, fx->g.mpi, 0.3, 6, cells);
	assert_true(cells[6 + 4] == 4000);
}

static void test_pick(void **state)
{
	enum { N = 1000 };
	double *t = malloc(N * sizeof(*t));
	int64_t *tot = malloc(N * sizeof(*tot));
	size_t out[2 * 50 + 3], n;
	struct rp_proc p = { .n = N, .t = t, .tot = tot };
	int seen_peak = 0;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		t[i] = (double)i * 0.1;
		tot[i] = (int64_t)(i % 10);
	}
	tot[537] = 1000;
	n = rp_pick_samples(&p, 50, out);
	assert_true(n <= 2 * 50 + 3 && n > 50);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[n - 1], N - 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(out[i] > out[i - 1]);
		seen_peak |= out[i] == 537;
	}
	assert_true(seen_peak);
	/* Few samples: all of them. */
	p.n = 60;
	assert_int_equal(rp_pick_samples(&p, 50, out), 60);
	free(t);
	free(tot);
}

static void test_order(void **state)
{
	struct fx *fx = *state;
	size_t order[3];

	rp_order_by_peak(fx->st, 3, order);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 0);
	assert_int_equal(order[2], 2);
}

/*
 * A merged dataset: the node column, pid-<P>@<node>.csv, each node's sum on
 * the common grid (cnA 3000 + 500 at 0.2 s; cnB 5000 at 0.1 s), and the
 * node section listing the larger node first.
 */
static void test_nodes(void **state)
{
	struct rp_run run;
	struct rp_groups g;
	struct rp_pstat st[3];
	struct rp_agg a;
	char err[RP_ERRLEN], *page = NULL;
	size_t len = 0;
	FILE *f;
	int na, nb;

	(void)state;
	assert_int_equal(load("merged", &run, err), 0);
	assert_int_equal(run.nprocs, 3);
	assert_int_equal(run.nnodes, 2);
	na = strcmp(run.nodes[0], "cnA") ? 1 : 0;
	nb = 1 - na;
	assert_string_equal(run.nodes[nb], "cnB");
	assert_int_equal(proc_of_rank(&run, 0)->node, na);
	assert_int_equal(proc_of_rank(&run, 1)->node, nb);
	assert_int_equal(rp_groups_make(&run, &g), 0);
	assert_int_equal(rp_groups_apply(&run, &g), 0);
	assert_int_equal(rp_agg_build(&run, 0.1, na, &a), 0);
	assert_int_equal(a.tot[a.peak_b], 3500);
	rp_agg_free(&a);
	assert_int_equal(rp_agg_build(&run, 0.1, nb, &a), 0);
	assert_int_equal(a.tot[a.peak_b], 5000);
	assert_int_equal(a.peak_b, 1);
	rp_agg_free(&a);
	for (size_t i = 0; i < run.nprocs; i++)
		rp_pstat_of(&run, &g, i, &st[i]);
	f = open_memstream(&page, &len);
	assert_int_equal(rp_html_nodes(f, &run, &g, st, 0.1, rp_duration(&run), -1, 1000), 0);
	fclose(f);
	/* Larger node first; cnB's peak is all mpi: 100%. */
	assert_non_null(strstr(page, "<td class=\"l\">cnB</td>"));
	assert_true(strstr(page, "<td class=\"l\">cnB</td>") < strstr(page, "<td class=\"l\">cnA</td>"));
	assert_non_null(strstr(page, "100.0%"));
	assert_non_null(strstr(page, "2 nodes"));
	free(page);
	rp_groups_free(&g);
	rp_run_free(&run);
}

/* A timeline of n samples: total = v[i], split app = v[i] - lib[i], lib:libx.so = lib[i]. */
static FILE *timeline(size_t n, const int64_t *v, const int64_t *lib, bool cut_last)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs("time_s,rank,pid,component,rss_bytes,pss_bytes\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%zu.000,0,7,total,%lld,%lld\n", i, (long long)v[i], (long long)v[i]);
		fprintf(f, "%zu.000,0,7,app,%lld,0\n", i, (long long)(v[i] - lib[i]));
		if (!cut_last || i + 1 < n)
			fprintf(f, "%zu.000,0,7,lib:libx.so,%lld,0\n", i, (long long)lib[i]);
	}
	rewind(f);
	return f;
}

/*
 * Thinning as read: past max_samples, the first and last samples and per
 * slice of time the largest and the smallest total, in time order; the
 * figures the kept samples would understate (a component's own peak, the
 * peak pss, the sampling gaps) come from every sample.
 */
static void test_thin(void **state)
{
	static const int64_t v[10] = { 5, 1, 9, 4, 3, 8, 1, 1, 7, 4 };
	/* lib:libx.so peaks at 3 (sample 3), where the total is small: thinned away. */
	static const int64_t lib[10] = { 0, 0, 1, 3, 0, 0, 0, 0, 0, 0 };
	struct rp_run run = { .max_samples = 6 };
	char err[RP_ERRLEN];
	struct rp_groups g;
	struct rp_pstat st;
	const struct rp_proc *p;
	FILE *f = timeline(10, v, lib, false);
	int x;

	(void)state;
	if (rp_read_proc(&run, f, "rank-0.csv", err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	assert_int_equal(run.nprocs, 1);
	p = &run.procs[0];
	/* 2 slices over 1..8 s (to 4.5 s, then the rest): {1,2,3,4} -> hi 9 at 2, lo 1 at 1; {5..8} -> 8 at 5, 1 at 6. */
	assert_true(p->thinned);
	assert_int_equal(run.thinned, 1);
	assert_int_equal(p->n, 6);
	assert_true(p->t[0] == 0 && p->t[1] == 1 && p->t[2] == 2 && p->t[3] == 5 && p->t[4] == 6 &&
		    p->t[5] == 9);
	assert_int_equal(p->rss[0][2], 9);
	assert_int_equal(p->rss[0][5], 4);
	assert_int_equal(p->pss_total[3], 8);
	x = rp_comp_find(&run, "lib:libx.so");
	assert_true(x > 0);
	assert_int_equal(p->rss_peak[x], 3);
	assert_int_equal(p->pss_peak, 9);
	assert_int_equal(p->ngaps, 5);	/* the first 6 samples' gaps: 1 s each */
	assert_true(fabs(rp_interval(&run) - 1.0) < 1e-9);
	assert_int_equal(rp_groups_make(&run, &g), 0);
	assert_int_equal(rp_groups_apply(&run, &g), 0);
	rp_pstat_of(&run, &g, 0, &st);
	assert_int_equal(st.peak_total, 9);
	assert_true(st.peak_t == 2);
	assert_int_equal(st.final_total, 4);
	assert_int_equal(st.peak_pss, 9);
	/* The library's own peak over every sample, not over the kept ones (1). */
	assert_int_equal(st.gpeak[g.of_comp[x]], 3);
	rp_groups_free(&g);
	rp_run_free(&run);
}

/* At or under max_samples nothing is thinned: every sample, as before. */
static void test_thin_not_needed(void **state)
{
	static const int64_t v[6] = { 5, 1, 9, 2, 3, 8 };
	static const int64_t lib[6] = { 0 };
	struct rp_run run = { .max_samples = 6 };
	char err[RP_ERRLEN];
	FILE *f = timeline(6, v, lib, false);

	(void)state;
	assert_int_equal(rp_read_proc(&run, f, "rank-0.csv", err, sizeof(err)), 0);
	fclose(f);
	assert_false(run.procs[0].thinned);
	assert_int_equal(run.thinned, 0);
	assert_int_equal(run.procs[0].n, 6);
	assert_null(run.procs[0].rss_peak);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(run.procs[0].rss[0][i], v[i]);
	rp_run_free(&run);
}

/* A last sample cut short is left out of the count and of the thinning. */
static void test_thin_cut_last(void **state)
{
	static const int64_t v[8] = { 5, 1, 9, 2, 3, 8, 1, 7 };
	static const int64_t lib[8] = { 1, 0, 0, 0, 0, 0, 0, 2 };
	struct rp_run run = { .max_samples = 6 };
	char err[RP_ERRLEN];
	FILE *f = timeline(8, v, lib, true);

	(void)state;
	assert_int_equal(rp_read_proc(&run, f, "rank-0.csv", err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(run.dropped_samples, 1);
	assert_int_equal(run.procs[0].n, 6);
	/* The last kept sample is the last whole one (6 s, total 1). */
	assert_true(run.procs[0].t[5] == 6);
	assert_int_equal(run.procs[0].rss[0][5], 1);
	rp_run_free(&run);
}

/* A timeline of total v (pss v), app v - lib and lib:libx.so lib (pss libpss). */
static FILE *timeline_pss(size_t n, const int64_t *v, const int64_t *lib, const int64_t *libpss)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs("time_s,rank,pid,component,rss_bytes,pss_bytes\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%zu.000,0,7,total,%lld,%lld\n", i, (long long)v[i], (long long)v[i]);
		fprintf(f, "%zu.000,0,7,app,%lld,0\n", i, (long long)(v[i] - lib[i]));
		fprintf(f, "%zu.000,0,7,lib:libx.so,%lld,%lld\n", i, (long long)lib[i],
			(long long)libpss[i]);
	}
	rewind(f);
	return f;
}

/*
 * Thinning for export: keep_at also keeps the last sample at or before
 * keep_at_t (export --at TIME shows it), in time order among the others;
 * with keep_pss each component's pss peak over every sample is kept too
 * (diff shows it), as rss_peak is. Mutations caught: flush_slice leaving
 * out the sample kept for keep_at (no sample at 3 s); pass 1 not tracking
 * the components' pss peaks (rp_proc_peak's pss 0, not 20).
 */
static void test_thin_keep_at(void **state)
{
	static const int64_t v[10] = { 5, 1, 9, 4, 3, 8, 1, 1, 7, 4 };
	static const int64_t lib[10] = { 0, 0, 1, 3, 0, 0, 0, 0, 0, 0 };
	/* lib's pss peaks at 4 s, a sample thinning drops. */
	static const int64_t libpss[10] = { 0, 0, 0, 0, 20, 0, 0, 0, 0, 0 };
	static const double want[2][7] = { { 0, 1, 2, 3, 5, 6, 9 }, { 0, 1, 2, 4, 5, 6, 9 } };
	static const double at[2] = { 3.5, 4.0 };
	char err[RP_ERRLEN];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct rp_run run = { .max_samples = 6, .keep_pss = true, .keep_at = true,
				      .keep_at_t = at[k] };
		const struct rp_proc *p;
		FILE *f = timeline_pss(10, v, lib, libpss);
		int x;

		if (rp_read_proc(&run, f, "rank-0.csv", err, sizeof(err)))
			fail_msg("%s", err);
		fclose(f);
		p = &run.procs[0];
		assert_true(p->thinned);
		assert_int_equal(p->n, 7);
		for (size_t i = 0; i < 7; i++)
			if (p->t[i] != want[k][i])
				fail_msg("keep_at %.1f: sample %zu at %.1f s, want %.1f s", at[k], i,
					 p->t[i], want[k][i]);
		x = rp_comp_find(&run, "lib:libx.so");
		assert_true(x > 0);
		/* The kept sample's own rows, not a neighbour's. */
		assert_int_equal(p->rss[0][3], v[(size_t)want[k][3]]);
		assert_int_equal(p->rss[x][3], lib[(size_t)want[k][3]]);
		assert_int_equal(rp_proc_peak(p, (size_t)x, false), 3);
		assert_int_equal(rp_proc_peak(p, (size_t)x, true), 20);
		assert_int_equal(rp_proc_peak(p, 0, true), 9);
		rp_run_free(&run);
	}
}

/* A line past RP_MAX_LINE is refused with its line number, not buffered whole. */
static void test_line_too_long(void **state)
{
	struct rp_run run = { 0 };
	char err[RP_ERRLEN];
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	fputs("time_s,rank,pid,component,rss_bytes,pss_bytes\n0.000,0,7,total,1,1\n0.000,0,7,app,", f);
	for (size_t i = 0; i < RP_MAX_LINE; i++)
		fputc('1', f);
	fputs(",1\n", f);
	rewind(f);
	assert_int_equal(rp_read_proc(&run, f, "rank-0.csv", err, sizeof(err)), -1);
	fclose(f);
	assert_non_null(strstr(err, "rank-0.csv:3: cannot read: line longer than 1048576 bytes"));
	rp_run_free(&run);
}

/* A stream holding text. */
static FILE *text_file(const char *text)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs(text, f);
	rewind(f);
	return f;
}

/*
 * bounded (`report`): summary.csv keeps the `total` rows of the timelines
 * read, two at most each (the page only asks whether there is exactly one);
 * mpi_calls.csv one row per function, summed as the page's table sums
 * them; the figures are those of the unbounded read.
 */
static void test_bounded_tables(void **state)
{
	static const int64_t v[3] = { 5, 9, 4 }, lib[3] = { 0 };
	static const char calls[] =
		"rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,peak_bytes,first_growth_s,last_growth_s\n"
		"0,7,MPI_Init,1,100,10,90,100,0.5,0.5\n"
		"1,8,MPI_Init,,50,0,-20,0,,\n"
		"0,7,MPI_Send,4,7,0,7,7,1.0,2.0\n"
		"1,8,MPI_Init,2,25,5,20,60,0.2,3.0\n";
	struct rp_run run = { .bounded = true };
	char err[RP_ERRLEN];
	FILE *f = timeline(3, v, lib, false);
	const struct rp_call_row *init;

	(void)state;
	assert_int_equal(rp_read_proc(&run, f, "rank-0.csv", err, sizeof(err)), 0);
	fclose(f);
	f = text_file("rank,pid,component,peak_rss_bytes,peak_rss_time_s,peak_pss_bytes\n"
		      "0,7,app,1,0,1\n"		/* not total: not kept */
		      "0,7,total,9,1,8\n"
		      "3,99,total,1,0,1\n"	/* no such timeline: not kept */
		      "0,7,total,9,1,8\n0,7,total,9,1,8\n");	/* a third: not kept */
	assert_int_equal(rp_read_summary(&run, f, "summary.csv", err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(run.nsummary, 2);
	assert_string_equal(run.summary[0].component, "total");

	f = text_file(calls);
	assert_int_equal(rp_read_calls(&run, f, "mpi_calls.csv", err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(run.ncalls, 2);
	init = &run.calls[0];
	assert_string_equal(init->function, "MPI_Init");
	assert_int_equal(init->rows, 3);
	assert_int_equal(init->calls, 3);
	assert_int_equal(init->gained, 175);
	assert_int_equal(init->released, 15);
	assert_int_equal(init->net, 90);
	assert_int_equal(init->peak, 100);
	assert_true(init->first_growth == 0.2 && init->last_growth == 3.0);
	assert_int_equal(run.calls[1].rows, 1);
	rp_run_free(&run);
}

/* bounded: more functions than RP_MAX_FUNCS, or run_info lines than RP_MAX_INFO, are refused. */
static void test_bounded_limits(void **state)
{
	struct rp_run run = { .bounded = true };
	char err[RP_ERRLEN];
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	fputs("rank,function,calls,gained_bytes,net_bytes\n", f);
	for (int i = 0; i <= RP_MAX_FUNCS; i++)
		fprintf(f, "0,MPI_F%d,1,1,1\n", i);
	rewind(f);
	assert_int_equal(rp_read_calls(&run, f, "mpi_calls.csv", err, sizeof(err)), -1);
	fclose(f);
	assert_non_null(strstr(err, "more than 4096 MPI functions"));
	assert_null(strchr(err, '\n'));
	f = tmpfile();
	assert_non_null(f);
	for (int i = 0; i <= RP_MAX_INFO; i++)
		fprintf(f, "k%d,%d\n", i, i);
	rewind(f);
	assert_int_equal(rp_read_info(&run, f, "run_info.csv", err, sizeof(err)), -1);
	fclose(f);
	assert_non_null(strstr(err, "more than 65536 keys"));
	rp_run_free(&run);
}

static void test_format(void **state)
{
	char b[32];
	const char *u;

	(void)state;
	rp_fmt_bytes(0, b, sizeof(b));
	assert_string_equal(b, "0 B");
	rp_fmt_bytes(512 * 1024, b, sizeof(b));
	assert_string_equal(b, "512 KiB");
	rp_fmt_bytes(25.9 * 1024 * 1024, b, sizeof(b));
	assert_string_equal(b, "25.9 MiB");
	rp_fmt_bytes(1.5 * 1024 * 1024 * 1024, b, sizeof(b));
	assert_string_equal(b, "1.50 GiB");
	assert_true(rp_nice_step(62, 4) == 20);
	assert_true(rp_nice_step(4.4, 5) == 1);
	assert_true(rp_nice_step(4.4, 10) == 0.5);
	assert_true(rp_nice_step(84, 4) == 20);
	assert_true(fabs(rp_nice_step(0.3, 3) - 0.1) < 1e-12);
	assert_true(rp_byte_unit(3.0 * 1024 * 1024 * 1024, &u) == 1024.0 * 1024 * 1024);
	assert_string_equal(u, "GiB");
	assert_true(rp_byte_unit(3.0 * 1024 * 1024, &u) == 1024.0 * 1024);
	assert_string_equal(u, "MiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_load_good),
		cmocka_unit_test(test_extra_columns),
		cmocka_unit_test(test_in_progress),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test_setup_teardown(test_groups, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_peaks, fx_setup, fx_teardown),
		cmocka_unit_test(test_dist),
		cmocka_unit_test_setup_teardown(test_dist_ranks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_agg, fx_setup, fx_teardown),
		cmocka_unit_test(test_agg_gaps),
		cmocka_unit_test_setup_teardown(test_heat, fx_setup, fx_teardown),
		cmocka_unit_test(test_pick),
		cmocka_unit_test_setup_teardown(test_order, fx_setup, fx_teardown),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_thin),
		cmocka_unit_test(test_thin_not_needed),
		cmocka_unit_test(test_thin_cut_last),
		cmocka_unit_test(test_thin_keep_at),
		cmocka_unit_test(test_line_too_long),
		cmocka_unit_test(test_bounded_tables),
		cmocka_unit_test(test_bounded_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
