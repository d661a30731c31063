// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf diff`: two runs in the tracer's format (fixtures/export/run
 * and fixtures/export/grown: the same program with 16 KiB more held by
 * MPI_Alloc_mem on rank 0, and a rank 2 only B has) matched by rank; each
 * component's own peak and last value, rss and pss; the MPI functions;
 * the gate naming the component (total only when no component alone
 * passed the limit); a run against itself changes nothing and passes any
 * gate; the CSV, difffolded, pprof (-base) and HTML outputs; the command's
 * exit statuses.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "diff_cmd.h"
#include "export.h"
#include "pprof_read.h"

#define RUN	"fixtures/export/run"
#define GROWN	"fixtures/export/grown"

static void load(struct ex_data *d, const char *dir)
{
	char err[EX_ERRLEN];

	if (ex_load(d, dir, NULL, err, sizeof(err)))
		fail_msg("%s", err);
}

static const struct ex_diff_comp *comp(const struct ex_diff_rank *r, const char *name)
{
	for (size_t i = 0; i < r->ncomps; i++)
		if (!strcmp(r->comps[i].name, name))
			return &r->comps[i];
	fail_msg("rank %d has no component %s", r->rank, name);
	return NULL;
}

static const struct ex_diff_fn *fn(const struct ex_diff_rank *r, const char *name)
{
	for (size_t i = 0; i < r->nfns; i++)
		if (!strcmp(r->fns[i].name, name))
			return &r->fns[i];
	fail_msg("rank %d has no function %s", r->rank, name);
	return NULL;
}

/*
 * A timeline ex_load thinned (longer than max_samples) gives the figures
 * of every sample: lib's peak rss (3 s) and peak pss (4 s) are on samples
 * thinning drops. Mutation caught: fig_of taking the peaks from the kept
 * samples (peak rss 1, peak pss 0).
 */
static void test_thinned(void **state)
{
	static const int64_t v[10] = { 5, 1, 9, 4, 3, 8, 1, 1, 7, 4 };
	static const int64_t lib[10] = { 0, 0, 1, 3, 0, 0, 0, 0, 0, 0 };
	static const int64_t libpss[10] = { 0, 0, 0, 0, 20, 0, 0, 0, 0, 0 };
	struct ex_data a = { .run = { .keep_pss = true, .max_samples = 6 } };
	struct ex_data b = { .run = { .keep_pss = true } };
	const struct ex_diff_comp *x;
	char err[EX_ERRLEN];
	struct ex_diff d;
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	fputs("time_s,rank,pid,component,rss_bytes,pss_bytes\n", f);
	for (size_t i = 0; i < 10; i++) {
		fprintf(f, "%zu.000,0,7,total,%lld,%lld\n", i, (long long)v[i], (long long)v[i]);
		fprintf(f, "%zu.000,0,7,app,%lld,0\n", i, (long long)(v[i] - lib[i]));
		fprintf(f, "%zu.000,0,7,lib:libx.so,%lld,%lld\n", i, (long long)lib[i],
			(long long)libpss[i]);
	}
	rewind(f);
	if (rp_read_proc(&a.run, f, "rank-0.csv", err, sizeof(err)))
		fail_msg("%s", err);
	rewind(f);
	if (rp_read_proc(&b.run, f, "rank-0.csv", err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	assert_true(a.run.procs[0].thinned);
	assert_false(b.run.procs[0].thinned);
	assert_int_equal(ex_diff_build(&a, &b, &d), 0);
	assert_int_equal(d.nranks, 1);
	x = comp(&d.ranks[0], "lib:libx.so");
	assert_int_equal(x->a.peak_rss, 3);
	assert_int_equal(x->a.peak_pss, 20);
	assert_int_equal(x->a.peak_rss, x->b.peak_rss);
	assert_int_equal(x->a.peak_pss, x->b.peak_pss);
	assert_int_equal(x->a.final_rss, x->b.final_rss);
	x = comp(&d.ranks[0], "total");
	assert_int_equal(x->a.peak_rss, 9);
	assert_int_equal(x->a.peak_pss, 9);
	assert_int_equal(x->a.final_pss, 4);
	ex_diff_free(&d);
	ex_data_free(&a);
	ex_data_free(&b);
}

static void test_self(void **state)
{
	struct ex_data a, b;
	struct ex_diff d;
	struct ex_growth g;

	(void)state;
	load(&a, RUN);
	load(&b, RUN);
	assert_int_equal(ex_diff_build(&a, &b, &d), 0);
	assert_int_equal(d.nranks, 2);
	for (size_t i = 0; i < d.nranks; i++) {
		for (size_t c = 0; c < d.ranks[i].ncomps; c++) {
			const struct ex_diff_comp *x = &d.ranks[i].comps[c];

			assert_true(x->a.present && x->b.present);
			assert_memory_equal(&x->a, &x->b, sizeof(x->a));
		}
		for (size_t k = 0; k < d.ranks[i].nfns; k++)
			assert_int_equal(d.ranks[i].fns[k].net_a, d.ranks[i].fns[k].net_b);
	}
	/* Against itself nothing grew: not even a gate at 0% fails. */
	assert_false(ex_diff_over(&d, 0, &g));
	ex_diff_free(&d);
	ex_data_free(&a);
	ex_data_free(&b);
}

/* The page of a and b (names na, nb) into a string the caller frees. */
static char *html_of(const struct ex_data *a, const struct ex_data *b, const char *na, const char *nb)
{
	struct ex_select peak = { .at = EX_AT_PEAK }, end = { .at = EX_AT_END };
	struct ex_profile pa, pb, ea, eb;
	char err[EX_ERRLEN], *buf = NULL;
	struct ex_diff d;
	size_t len = 0;
	FILE *f;

	assert_int_equal(ex_diff_build(a, b, &d), 0);
	assert_int_equal(ex_build(a, &peak, &pa, err, sizeof(err)), 0);
	assert_int_equal(ex_build(b, &peak, &pb, err, sizeof(err)), 0);
	assert_int_equal(ex_build(a, &end, &ea, err, sizeof(err)), 0);
	assert_int_equal(ex_build(b, &end, &eb, err, sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(ex_diff_html(f, &d, na, nb, &pa, &pb, &ea, &eb), 0);
	assert_int_equal(fclose(f), 0);
	ex_profile_free(&pa);
	ex_profile_free(&pb);
	ex_profile_free(&ea);
	ex_profile_free(&eb);
	ex_diff_free(&d);
	return buf;
}

/* strstr that must find it. */
static const char *find(const char *hay, const char *needle)
{
	const char *at = strstr(hay, needle);

	if (!at)
		fail_msg("not in the page: %s", needle);
	return at;
}

/*
 * diff.html of run -> grown (16 KiB more held by MPI_Alloc_mem on rank 0,
 * rank 2 only in B): rank 0's table has total first, then mpi (+16 KiB,
 * marked grown) before the unchanged app; the stacks at the end list
 * rank 0's MPI_Alloc_mem (+16 KiB) before rank 2's app (+9000 B), and
 * rank 1's unchanged stacks not at all; run names are escaped. A run
 * against itself: no stack changed.
 */
static void test_html(void **state)
{
	const char *end, *r0, *r1;
	struct ex_data a, b;
	char *page;

	(void)state;
	load(&a, RUN);
	load(&b, GROWN);
	page = html_of(&a, &b, "<a&b>", RUN);
	find(page, "<!DOCTYPE html>");
	find(page, "A: <code>&lt;a&amp;b&gt;</code>");
	find(page, "rank 2: only in B");
	r0 = find(page, "<h3>rank 0");
	r1 = find(page, "<h3>rank 1");
	assert_true(find(r0, ">total<") < find(r0, ">mpi<"));
	assert_true(find(r0, ">mpi<") < find(r0, ">app<"));
	assert_true(find(r0, ">app<") < r1);
	find(find(r0, ">mpi<"), "<td class=\"up\">+16 KiB</td>");
	end = find(page, "Stacks that changed most at the end");
	assert_true(find(end, "rank 0;mpi;MPI_Alloc_mem") < find(end, "rank 2;app"));
	assert_null(strstr(end, "rank 1;"));
	assert_null(strstr(find(page, "Stacks that changed most at each"), "rank 1;"));
	find(page, "</html>");
	free(page);

	page = html_of(&a, &a, RUN, RUN);
	assert_null(strstr(page, "class=\"up\""));
	find(find(page, "Stacks that changed most at the end"), "No stack changed.");
	free(page);
	ex_data_free(&a);
	ex_data_free(&b);
}

static void test_grown(void **state)
{
	struct ex_data a, b;
	struct ex_diff d;
	struct ex_growth g;
	const struct ex_diff_rank *r0;

	(void)state;
	load(&a, RUN);
	load(&b, GROWN);
	assert_int_equal(ex_diff_build(&a, &b, &d), 0);
	assert_int_equal(d.nranks, 3);
	r0 = &d.ranks[0];
	assert_int_equal(r0->pid_a, 100);
	assert_int_equal(r0->pid_b, 200);
	/* total first, then the components in A's order. */
	assert_string_equal(r0->comps[0].name, "total");
	assert_int_equal(comp(r0, "total")->a.peak_rss, 30000);
	assert_int_equal(comp(r0, "total")->b.peak_rss, 46384);
	assert_int_equal(comp(r0, "mpi")->a.peak_rss, 16000);
	assert_int_equal(comp(r0, "mpi")->b.final_rss, 26384);
	assert_int_equal(comp(r0, "mpi")->a.peak_pss, 8000);
	assert_int_equal(comp(r0, "mpi")->b.final_pss, 13192);
	assert_int_equal(comp(r0, "libc")->a.final_rss, 2000);
	assert_int_equal(fn(r0, "MPI_Alloc_mem")->net_a, 3000);
	assert_int_equal(fn(r0, "MPI_Alloc_mem")->net_b, 19384);
	assert_true(fn(r0, "MPI_Free_mem")->in_a);
	assert_false(fn(r0, "MPI_Free_mem")->in_b);
	/* Rank 2 is B's only: shown, never gated. */
	assert_int_equal(d.ranks[2].rank, 2);
	assert_int_equal(d.ranks[2].pid_a, -1);

	/* mpi grew 16384 bytes, 54.6% of rank 0's 30000: named at 50%, not at 60%. */
	assert_true(ex_diff_over(&d, 50, &g));
	assert_int_equal(g.rank, 0);
	assert_string_equal(g.component, "mpi");
	assert_int_equal(g.growth, 16384);
	assert_int_equal(g.base, 30000);
	assert_true(g.pct > 54.6 && g.pct < 54.7);
	assert_false(ex_diff_over(&d, 60, &g));
	ex_diff_free(&d);
	ex_data_free(&a);
	ex_data_free(&b);
}

/* The stack under a grown component that grew most: MPI_Alloc_mem at the end; none at the peak. */
static void test_top_stack(void **state)
{
	struct ex_select end = { .at = EX_AT_END }, peak = { .at = EX_AT_PEAK };
	struct ex_data a, b;
	struct ex_profile pa, pb;
	char err[EX_ERRLEN], stack[256];
	int64_t growth = 0;

	(void)state;
	load(&a, RUN);
	load(&b, GROWN);
	assert_int_equal(ex_build(&a, &end, &pa, err, sizeof(err)), 0);
	assert_int_equal(ex_build(&b, &end, &pb, err, sizeof(err)), 0);
	assert_int_equal(ex_diff_top_stack(&pa, &pb, 0, "mpi", stack, sizeof(stack), &growth), 1);
	assert_string_equal(stack, "MPI_Alloc_mem");
	assert_int_equal(growth, 16384);
	assert_int_equal(ex_diff_top_stack(&pa, &pb, 1, "mpi", stack, sizeof(stack), &growth), 0);
	ex_profile_free(&pa);
	ex_profile_free(&pb);
	/* At the peak mpi is whole: nothing below it to name. */
	assert_int_equal(ex_build(&a, &peak, &pa, err, sizeof(err)), 0);
	assert_int_equal(ex_build(&b, &peak, &pb, err, sizeof(err)), 0);
	assert_int_equal(ex_diff_top_stack(&pa, &pb, 0, "mpi", stack, sizeof(stack), &growth), 0);
	ex_profile_free(&pa);
	ex_profile_free(&pb);
	ex_data_free(&a);
	ex_data_free(&b);
}

static void test_total_named(void **state)
{
	struct ex_diff_comp comps[3] = {
		{ "total", { true, 1000, 0, 0, 0 }, { true, 1400, 0, 0, 0 } },
		{ "app", { true, 500, 0, 0, 0 }, { true, 700, 0, 0, 0 } },
		{ "mpi", { true, 500, 0, 0, 0 }, { true, 700, 0, 0, 0 } },
	};
	struct ex_diff_rank r = { .rank = 3, .pid_a = 1, .pid_b = 2, .comps = comps, .ncomps = 3 };
	struct ex_diff d = { .ranks = &r, .nranks = 1 };
	struct ex_growth g;

	(void)state;
	/* Each part grew 20%, together 40%: at 30% no component alone, so total is named. */
	assert_true(ex_diff_over(&d, 30, &g));
	assert_string_equal(g.component, "total");
	assert_int_equal(g.growth, 400);
	/* At 10% the parts are over too: the part is named, not the sum. */
	assert_true(ex_diff_over(&d, 10, &g));
	assert_string_equal(g.component, "app");
	assert_false(ex_diff_over(&d, 40, &g));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Sum of a profile's samples of type t on rank, and of those whose leaf is function fn (NULL: any). */
static int64_t pprof_sum(const Perftools__Profiles__Profile *p, size_t t, const char *rank,
			 const char *fn)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		bool on_rank = false, is_fn = !fn;

		for (size_t k = 0; k < s->n_label; k++)
			on_rank |= !strcmp(pstr(p, s->label[k]->key), "rank") &&
				   !strcmp(pstr(p, s->label[k]->str), rank);
		for (size_t l = 0; fn && l < p->n_location; l++)
			if (p->location[l]->id == s->location_id[0])
				is_fn = !strcmp(pstr(p, p->function[p->location[l]->line[0]->function_id - 1]->name), fn);
		if (on_rank && is_fn)
			sum += s->value[t];
	}
	return sum;
}

/*
 * The pprof pair `pprof -base DIR/a.pb.gz DIR/b.pb.gz` reads: the same
 * sample types in both (pprof merges nothing else), each rank at its peak
 * summing to its total peak (rank 0: 30000 in A, 46384 in B, the 16 KiB
 * that grew), rank 2 in B only; at the end MPI_Alloc_mem's 3000 and
 * 19384 bytes.
 */
static void check_pprof_pair(const char *out)
{
	Perftools__Profiles__Profile *a, *b;
	char pa[192], pb[192];

	snprintf(pa, sizeof(pa), "%s/a.pb.gz", out);
	snprintf(pb, sizeof(pb), "%s/b.pb.gz", out);
	a = pprof_read_file(pa);
	b = pprof_read_file(pb);
	assert_int_equal(a->n_sample_type, b->n_sample_type);
	for (size_t i = 0; i < a->n_sample_type; i++)
		assert_string_equal(pstr(a, a->sample_type[i]->type), pstr(b, b->sample_type[i]->type));
	assert_string_equal(pstr(a, a->sample_type[EX_RSS]->type), "resident_space");
	assert_int_equal(pprof_sum(a, EX_RSS, "0", NULL), 30000);
	assert_int_equal(pprof_sum(b, EX_RSS, "0", NULL), 46384);
	assert_int_equal(pprof_sum(a, EX_RSS, "1", NULL), pprof_sum(b, EX_RSS, "1", NULL));
	assert_int_equal(pprof_sum(a, EX_RSS, "2", NULL), 0);
	assert_int_equal(pprof_sum(b, EX_RSS, "2", NULL), 9000);
	perftools__profiles__profile__free_unpacked(a, NULL);
	perftools__profiles__profile__free_unpacked(b, NULL);

	snprintf(pa, sizeof(pa), "%s/a-end.pb.gz", out);
	snprintf(pb, sizeof(pb), "%s/b-end.pb.gz", out);
	a = pprof_read_file(pa);
	b = pprof_read_file(pb);
	assert_int_equal(a->n_sample_type, b->n_sample_type);
	assert_int_equal(pprof_sum(a, EX_RSS, "0", "MPI_Alloc_mem"), 3000);
	assert_int_equal(pprof_sum(b, EX_RSS, "0", "MPI_Alloc_mem"), 19384);
	perftools__profiles__profile__free_unpacked(a, NULL);
	perftools__profiles__profile__free_unpacked(b, NULL);
}

static int run_diff(const char *a1, ...)
{
	char *argv[9] = { "diff", (char *)a1 };
	int argc = 2;
	va_list ap;

	va_start(ap, a1);
	while (argc < 8 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return diff_main(argc, argv);
}

static void test_command(void **state)
{
	char dir[] = "/tmp/memattr-diff-XXXXXX", out[128], path[192];
	struct diff_args a;
	char err[EX_ERRLEN], *text;
	char *argv[] = { "diff", RUN, GROWN, "--fail-above", "2.5", "-o", "x", NULL };
	struct stat st;
	int saved, devnull;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/d", dir);
	assert_int_equal(diff_parse_args(7, argv, &a, err, sizeof(err)), 0);
	assert_true(a.gate && a.fail_above == 2.5);
	assert_string_equal(a.out, "x");

	/* Stdout is the terminal's text: out of the test's way, cmocka's back after. */
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && devnull >= 0);
	assert_int_equal(dup2(devnull, STDOUT_FILENO), STDOUT_FILENO);
	close(devnull);
	assert_int_equal(run_diff(RUN, RUN, "--fail-above", "0", NULL), 0);
	assert_int_equal(run_diff(RUN, GROWN, "--fail-above", "50", "-o", out, NULL), 1);
	assert_int_equal(run_diff(RUN, GROWN, "--fail-above", "60", NULL), 0);
	assert_int_equal(run_diff(RUN, GROWN, NULL), 0);

	snprintf(path, sizeof(path), "%s/diff.csv", out);
	text = slurp(path);
	assert_non_null(strstr(text, "\n0,mpi,16000,32384,16384,10000,26384,16384,8000,16192,8192,5000,13192,8192\n"));
	assert_non_null(strstr(text, "\n2,app,0,9000,9000,"));
	free(text);
	snprintf(path, sizeof(path), "%s/mpi_diff.csv", out);
	text = slurp(path);
	assert_non_null(strstr(text, "\n0,MPI_Alloc_mem,3000,19384,16384,4096,20480,16384\n"));
	free(text);
	snprintf(path, sizeof(path), "%s/diff.folded", out);
	text = slurp(path);
	assert_string_equal(text, "rank 0;app 12000 12000\nrank 0;libc 2000 2000\nrank 0;mpi 16000 32384\n"
				  "rank 1;app 4000 4000\nrank 1;mpi 8000 8000\nrank 2;app 0 9000\n");
	free(text);
	/* At the end the leak has its MPI function's name. */
	snprintf(path, sizeof(path), "%s/diff-end.folded", out);
	text = slurp(path);
	assert_non_null(strstr(text, "\nrank 0;mpi;MPI_Alloc_mem 3000 19384\n"));
	free(text);

	check_pprof_pair(out);
	snprintf(path, sizeof(path), "%s/diff.html", out);
	text = slurp(path);
	assert_non_null(strstr(text, "rank 0;mpi;MPI_Alloc_mem"));
	free(text);

	/* Usage: 2. Bad runs: 1, and no directory made. */
	snprintf(path, sizeof(path), "%s/never", dir);
	assert_int_equal(run_diff(RUN, NULL), 2);
	assert_int_equal(run_diff(RUN, GROWN, RUN, NULL), 2);
	assert_int_equal(run_diff(RUN, GROWN, "--fail-above", "-3", NULL), 2);
	assert_int_equal(run_diff(RUN, GROWN, "--fail-above", "lots", NULL), 2);
	assert_int_equal(run_diff(RUN, "fixtures/report/badnum", "-o", path, NULL), 1);
	assert_int_equal(run_diff("fixtures/report/empty", RUN, "-o", path, NULL), 1);
	assert_int_equal(stat(path, &st), -1);
	fflush(stdout);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);

	for (const char *n = "diff.csv\0mpi_diff.csv\0diff.folded\0diff-end.folded\0diff.html\0a.pb.gz\0"
			     "b.pb.gz\0a-end.pb.gz\0b-end.pb.gz\0"; *n; n += strlen(n) + 1) {
		snprintf(path, sizeof(path), "%s/%s", out, n);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(rmdir(out), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_thinned),
		cmocka_unit_test(test_grown),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_total_named),
		cmocka_unit_test(test_top_stack),
		cmocka_unit_test(test_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
