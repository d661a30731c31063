// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf model`: the solver recovers known coefficients (exact and
 * with noise), cross-validation picks the basis the data was made from
 * and no richer one, under-determined input is refused, the interval
 * behaves; the program's name is found behind launchers; and the command
 * on run directories in the tracer's own format (written here) fits,
 * predicts, writes its CSV whole, and refuses bad input with exit 1 and a
 * line saying why.
 */
#include <fcntl.h>
#include <glob.h>
#include <math.h>
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

#include "model.h"
#include "report_cmd.h"

#define MIB	(1024.0 * 1024.0)

static void assert_close(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fmax(fabs(want), 1e-9))
		fail_msg("got %.9g, want %.9g (within %g)", got, want, rel);
}

/* A fixed "noise" in [-1, 1]: the same on every machine. */
static double wiggle(size_t i)
{
	return sin(2.1 * (double)i + 0.3);
}

static const double ps[] = { 2, 4, 8, 16, 32, 64 };

/* --- the solver ------------------------------------------------------- */

static void test_lsq_exact_linear(void **state)
{
	struct md_point pt[4];
	enum md_term t[1] = { MD_T_P };
	struct md_model m;

	(void)state;
	for (size_t i = 0; i < 4; i++)
		pt[i] = (struct md_point){ ps[i], 0, 5 * MIB + 4096 * ps[i] };
	assert_int_equal(md_fit_terms(pt, 4, t, 1, &m), 0);
	assert_close(m.c0, 5 * MIB, 1e-9);
	assert_close(m.coef[0], 4096, 1e-9);
	assert_true(m.rss < 1e-3);
	/* Exact data: every held-out run predicted exactly. */
	assert_true(m.loo_rmse < 1e-3);
	assert_close(md_eval(&m, 4096, 0), 5 * MIB + 4096.0 * 4096, 1e-9);
}

static void test_lsq_log_with_noise(void **state)
{
	struct md_point pt[6];
	enum md_term t[1] = { MD_T_LOG2P };
	struct md_model m;

	(void)state;
	/* 3 MiB + 200 KiB per doubling, +-10 KiB of noise. */
	for (size_t i = 0; i < 6; i++)
		pt[i] = (struct md_point){ ps[i], 0, 3 * MIB + 200 * 1024 * log2(ps[i]) + 10240 * wiggle(i) };
	assert_int_equal(md_fit_terms(pt, 6, t, 1, &m), 0);
	assert_close(m.c0, 3 * MIB, 0.01);
	assert_close(m.coef[0], 200 * 1024, 0.05);
	assert_true(m.loo_rmse > 0 && m.loo_rmse < 30 * 1024);
}

static void test_lsq_two_terms_and_cov(void **state)
{
	/* y = 1 + 2 P + 3 P^2 exactly, and (X^T X)^-1 against a hand inverse of a 2x2. */
	double x[5 * 3], y[5], beta[3], rss, cov[9];
	double x2[3 * 2] = { 1, 1, 1, 2, 1, 3 }, y2[3] = { 1, 2, 4 }, b2[2], cov2[4];

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		double p = (double)i + 1;

		x[i * 3] = 1;
		x[i * 3 + 1] = p;
		x[i * 3 + 2] = p * p;
		y[i] = 1 + 2 * p + 3 * p * p;
	}
	assert_int_equal(md_lsq(x, 5, 3, y, beta, &rss, cov), 0);
	assert_close(beta[0], 1, 1e-9);
	assert_close(beta[1], 2, 1e-9);
	assert_close(beta[2], 3, 1e-9);
	/* X^T X = [[3, 6], [6, 14]]: inverse [[14, -6], [-6, 3]] / 6; fit 1/3... */
	assert_int_equal(md_lsq(x2, 3, 2, y2, b2, &rss, cov2), 0);
	assert_close(b2[0], -2.0 / 3, 1e-9);
	assert_close(b2[1], 1.5, 1e-9);
	assert_close(rss, 1.0 / 6, 1e-9);
	assert_close(cov2[0], 14.0 / 6, 1e-9);
	assert_close(cov2[1], -1, 1e-9);
	assert_close(cov2[3], 0.5, 1e-9);
}

static void test_underdetermined_refused(void **state)
{
	struct md_point pt[3] = { { 2, 0, 1 }, { 4, 0, 2 }, { 8, 0, 3 } }, same[4];
	enum md_term t2[2] = { MD_T_P, MD_T_LOG2P }, t1[1] = { MD_T_P };
	double x[4] = { 1, 2, 1, 2 }, y[2] = { 1, 1 }, beta[2];
	struct md_model m, ru;
	struct md_fit_opts o = {0};

	(void)state;
	/* 3 parameters from 3 runs: fits, but leaves nothing to cross-validate with. */
	assert_int_equal(md_fit_terms(pt, 3, t2, 2, &m), -1);
	/* A collinear design (two identical rows). */
	assert_int_equal(md_lsq(x, 2, 2, y, beta, NULL, NULL), -1);
	/* Columns the others make, short of exact in floating point (P and P / 10). */
	{
		double xc[4 * 3], yc[4] = { 1, 2, 3, 5 }, bc[3];

		for (size_t i = 0; i < 4; i++) {
			xc[i * 3] = 1;
			xc[i * 3 + 1] = 2 * (double)i + 1;
			xc[i * 3 + 2] = 0.1 * (2 * (double)i + 1);
		}
		assert_int_equal(md_lsq(xc, 4, 3, yc, bc, NULL, NULL), -1);
	}
	/* More unknowns than equations. */
	assert_int_equal(md_lsq(x, 1, 2, y, beta, NULL, NULL), -1);
	/* Every run at one P: the P term is not determined. */
	for (size_t i = 0; i < 4; i++)
		same[i] = (struct md_point){ 8, 0, (double)i };
	assert_int_equal(md_fit_terms(same, 4, t1, 1, &m), -1);
	/* One run: not even the constant can be cross-validated. */
	assert_int_equal(md_choose(pt, 1, &o, &m, &ru), -1);
	/* Three runs: only the one-term models are candidates. */
	assert_int_equal(md_choose(pt, 3, &o, &m, &ru), 0);
	assert_true(m.nterms <= 1);
}

/* --- the choice by cross-validation ----------------------------------- */

static void test_choose_linear(void **state)
{
	struct md_point pt[5];
	struct md_model m, ru;
	struct md_fit_opts o = {0};

	(void)state;
	for (size_t i = 0; i < 5; i++)
		pt[i] = (struct md_point){ ps[i], 0, 5 * MIB + 4096 * ps[i] };
	assert_int_equal(md_choose(pt, 5, &o, &m, &ru), 0);
	/* a + b*P, not a richer model that fits as well (b*P + 0*log2 P). */
	assert_int_equal(m.nterms, 1);
	assert_int_equal(m.term[0], MD_T_P);
	assert_close(m.coef[0], 4096, 1e-6);
	assert_true(ru.valid);
	assert_true(ru.loo_rmse > m.loo_rmse);
}

static void test_choose_log_with_noise(void **state)
{
	struct md_point pt[6];
	struct md_model m, ru;
	struct md_fit_opts o = {0};

	(void)state;
	for (size_t i = 0; i < 6; i++)
		pt[i] = (struct md_point){ ps[i], 0, 3 * MIB + 200 * 1024 * log2(ps[i]) + 10240 * wiggle(i) };
	assert_int_equal(md_choose(pt, 6, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 1);
	assert_int_equal(m.term[0], MD_T_LOG2P);
	assert_close(m.coef[0], 200 * 1024, 0.05);
}

static void test_choose_constant(void **state)
{
	struct md_point pt[5];
	struct md_model m, ru;
	struct md_fit_opts o = {0};

	(void)state;
	/* libc: 2 MiB whatever P, +-4 KiB. */
	for (size_t i = 0; i < 5; i++)
		pt[i] = (struct md_point){ ps[i], 0, 2 * MIB + 4096 * wiggle(i) };
	assert_int_equal(md_choose(pt, 5, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 0);
	assert_close(m.c0, 2 * MIB, 0.01);
}

static void test_choose_two_terms(void **state)
{
	struct md_point pt[6];
	struct md_model m, ru;
	struct md_fit_opts o = {0};

	(void)state;
	for (size_t i = 0; i < 6; i++)
		pt[i] = (struct md_point){ ps[i], 0, 1e6 + 5000 * ps[i] + 2e5 * log2(ps[i]) };
	assert_int_equal(md_choose(pt, 6, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 2);
	assert_int_equal(m.term[0], MD_T_P);
	assert_int_equal(m.term[1], MD_T_LOG2P);
	assert_close(m.c0, 1e6, 1e-6);
	assert_close(m.coef[0], 5000, 1e-6);
	assert_close(m.coef[1], 2e5, 1e-6);
}

/*
 * Three runs (2, 4, 8 ranks) cannot confirm what more could: a constant
 * component (+-5 KiB), one near zero that wobbles upward by 12 KiB (the
 * naive choice: a P^2 or P log2 P term), and one of 64 KiB per peer. The
 * first two stay constants, with why; the third is a + b*P; a curve no
 * one-term model predicts from two of its runs is refused whole.
 */
static void test_choose_three_runs_confirmed_only(void **state)
{
	static const double jitter[3] = { 3072, -2048, 5120 };
	struct md_point c[3], z[3], lin[3], curve[3];
	struct md_model m, ru;
	struct md_fit_opts o = {0};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		c[i] = (struct md_point){ ps[i], 0, 2 * MIB + jitter[i] };
		lin[i] = (struct md_point){ ps[i], 0, 5 * MIB + 65536 * ps[i] + jitter[i] / 5 };
	}
	z[0] = (struct md_point){ 2, 0, 40960 };
	z[1] = (struct md_point){ 4, 0, 43008 };
	z[2] = (struct md_point){ 8, 0, 53248 };
	curve[0] = (struct md_point){ 2, 0, MIB };
	curve[1] = (struct md_point){ 4, 0, MIB + 100 * 1024 };
	curve[2] = (struct md_point){ 8, 0, MIB + 700 * 1024 };

	assert_true(md_noise(c, 3) == MD_NOISE_BYTES);
	assert_int_equal(md_choose(c, 3, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 0);
	assert_close(m.c0, 2 * MIB, 0.01);

	assert_int_equal(md_choose(z, 3, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 0);
	/* Why: the term the runs alone would have given, and the noise it is within. */
	assert_non_null(strstr(m.why, "refused: the runs differ by 12.0 KiB, within the noise (16.0 KiB): a constant"));
	assert_false(ru.valid && ru.nterms > 0);

	assert_int_equal(md_choose(lin, 3, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 1);
	assert_int_equal(m.term[0], MD_T_P);
	assert_close(m.coef[0], 65536, 0.02);

	assert_int_equal(md_choose(curve, 3, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 0);
	assert_non_null(strstr(m.why, "3 runs leave no run to check its 2-run fits"));
	assert_non_null(strstr(m.why, "above the noise (16.0 KiB): more rank counts could confirm it"));

	/* More runs of the same curve: a term, confirmed (P^2, the truth here). */
	{
		struct md_point more[5];

		for (size_t i = 0; i < 5; i++)
			more[i] = (struct md_point){ ps[i], 0, MIB + 1024 * (ps[i] * ps[i]) + jitter[i % 3] / 5 };
		assert_int_equal(md_choose(more, 5, &o, &m, &ru), 0);
		assert_int_equal(m.nterms, 1);
		assert_int_equal(m.term[0], MD_T_P2);
		/* A second term it would take only for an error within the noise: said so. */
		assert_non_null(strstr(m.why, "a + b*P + c*P^2 refused: its leave-one-out error"));
		assert_non_null(strstr(m.why, "by less than the noise (16.0 KiB)"));
	}
}

static void test_choose_size(void **state)
{
	static const double pn[][2] = { { 2, 100 }, { 4, 100 }, { 8, 100 }, { 2, 200 },
					{ 4, 200 }, { 8, 200 }, { 16, 400 } };
	struct md_point pt[7];
	struct md_model m, ru;
	struct md_fit_opts o = { .use_size = true };

	(void)state;
	/* The rank's share of an N-cell problem: 80,000 bytes per cell. */
	for (size_t i = 0; i < 7; i++)
		pt[i] = (struct md_point){ pn[i][0], pn[i][1], 1e6 + 8e4 * pn[i][1] / pn[i][0] };
	assert_int_equal(md_choose(pt, 7, &o, &m, &ru), 0);
	assert_int_equal(m.nterms, 1);
	assert_int_equal(m.term[0], MD_T_N_OVER_P);
	assert_close(m.coef[0], 8e4, 1e-6);
	/* Without size terms, N/P is not a candidate. */
	o.use_size = false;
	assert_int_equal(md_choose(pt, 7, &o, &m, &ru), 0);
	for (size_t j = 0; j < m.nterms; j++)
		assert_false(md_term_uses_size(m.term[j]));
}

static void test_interval(void **state)
{
	struct md_point pt[6];
	enum md_term t[1] = { MD_T_LOG2P };
	struct md_model m;
	double truth, pred, half, half_near;

	(void)state;
	assert_close(md_t975(1), 12.706, 1e-4);
	assert_close(md_t975(10), 2.228, 1e-4);
	assert_close(md_t975(60), 2.000, 2e-3);
	assert_close(md_t975(100000), 1.960, 1e-3);
	for (size_t i = 0; i < 6; i++)
		pt[i] = (struct md_point){ ps[i], 0, 3 * MIB + 200 * 1024 * log2(ps[i]) + 10240 * wiggle(i) };
	assert_int_equal(md_fit_terms(pt, 6, t, 1, &m), 0);
	truth = 3 * MIB + 200 * 1024 * 12;
	pred = md_eval(&m, 4096, 0);
	half = md_interval(&m, 4096, 0);
	half_near = md_interval(&m, 8, 0);
	assert_true(half > 0);
	assert_true(fabs(pred - truth) <= half);
	/* Farther from the runs, wider. */
	assert_true(half > half_near);
	/* Exact data: no spread to speak of. */
	for (size_t i = 0; i < 6; i++)
		pt[i].y = 3 * MIB + 200 * 1024 * log2(ps[i]);
	assert_int_equal(md_fit_terms(pt, 6, t, 1, &m), 0);
	assert_true(md_interval(&m, 4096, 0) < 1);
	/* No degree of freedom left: no interval. */
	m.n = 2;
	assert_true(md_interval(&m, 4096, 0) < 0);
}

/* --- names and arguments ---------------------------------------------- */

static void test_app_name(void **state)
{
	char out[MD_NAME];

	(void)state;
	md_app_name("/bin/memattr-bpf --output d -- mpirun.openmpi --oversubscribe -np 8 /x/lulesh2.0 -s 30 -i 30",
		    out, sizeof(out));
	assert_string_equal(out, "lulesh2.0");
	md_app_name("memattr-bpf -- mpirun -np 4 -x FOO --mca btl self,vader ./a.out", out, sizeof(out));
	assert_string_equal(out, "a.out");
	md_app_name("memattr-bpf -- env OMP_NUM_THREADS=1 srun -n 16 --mpi=pmix '/opt/my app/cg' 1", out,
		    sizeof(out));
	assert_string_equal(out, "cg");
	md_app_name("memattr-bpf -- ./solver", out, sizeof(out));
	assert_string_equal(out, "solver");
	/* Attached to a job: the command line does not name the program. */
	md_app_name("memattr-bpf --output d --job 1234", out, sizeof(out));
	assert_string_equal(out, "");
	md_app_name("", out, sizeof(out));
	assert_string_equal(out, "");
}

static void test_split_run_arg(void **state)
{
	char dir[64];
	double n;

	(void)state;
	assert_int_equal(md_split_run_arg("runs/np4:1e6", dir, sizeof(dir), &n), 0);
	assert_string_equal(dir, "runs/np4");
	assert_close(n, 1e6, 1e-12);
	assert_int_equal(md_split_run_arg("runs/np4", dir, sizeof(dir), &n), 0);
	assert_string_equal(dir, "runs/np4");
	assert_true(n < 0);
	/* Not a positive number after the colon: all of it is the directory. */
	assert_int_equal(md_split_run_arg("host:dir", dir, sizeof(dir), &n), 0);
	assert_string_equal(dir, "host:dir");
	assert_int_equal(md_split_run_arg("d:-3", dir, sizeof(dir), &n), 0);
	assert_string_equal(dir, "d:-3");
	assert_true(n < 0);
}

static void test_fmt_bytes(void **state)
{
	char b[48];

	(void)state;
	md_fmt_bytes(4096, b, sizeof(b));
	assert_string_equal(b, "4.00 KiB");
	md_fmt_bytes(13.7 * MIB, b, sizeof(b));
	assert_string_equal(b, "13.7 MiB");
	md_fmt_bytes(-512, b, sizeof(b));
	assert_string_equal(b, "-512 B");
	md_fmt_bytes(0.25, b, sizeof(b));
	assert_string_equal(b, "0.25 B");
}

/* --- run directories in the tracer's format --------------------------- */

struct fixture {
	char root[64];
};

/* Per rank of a P-rank run of size N: app, mpi, libc (and total, their sum). */
typedef void (*values_fn)(double p, double n, int rank, double *app, double *mpi, double *libc);

static void lulesh_like(double p, double n, int rank, double *app, double *mpi, double *libc)
{
	(void)n;
	*app = 20 * MIB + 16384.0 * rank;	/* the largest rank holds most (pages: above the noise) */
	*mpi = 5 * MIB + 4096 * p;		/* per-peer state */
	*libc = 2 * MIB;
}

static void sized(double p, double n, int rank, double *app, double *mpi, double *libc)
{
	(void)rank;
	*app = 1 * MIB + 65536 * n / p;
	*mpi = 5 * MIB + 4096 * p;
	*libc = 2 * MIB;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * dir as `memattr-bpf -- mpirun -np P PROG` leaves it: rank-<R>.csv (two
 * samples, the second the peak), summary.csv and run_info.csv (with
 * problem_size when n > 0); extra, if not NULL, is one more component of
 * extra_bytes on every rank.
 */
static void make_run(const char *dir, int p, double n, const char *prog, values_fn fn,
		     const char *extra, double extra_bytes)
{
	char name[64], *sum = NULL, *tl = NULL;
	size_t sumlen = 0, tllen = 0;
	FILE *s, *t;

	assert_int_equal(mkdir(dir, 0755), 0);
	s = open_memstream(&sum, &sumlen);
	fputs("rank,pid,component,peak_rss_bytes,peak_rss_time_s,peak_pss_bytes,peak_pss_time_s,final_rss_bytes,final_pss_bytes\n",
	      s);
	for (int r = 0; r < p; r++) {
		double app, mpi, libc, tot;
		const char *comp[4] = { "app", "mpi", "libc", extra };
		double v[4];

		fn(p, n, r, &app, &mpi, &libc);
		v[0] = app;
		v[1] = mpi;
		v[2] = libc;
		v[3] = extra_bytes;
		tot = app + mpi + libc + (extra ? extra_bytes : 0);
		t = open_memstream(&tl, &tllen);
		fputs("time_s,rank,pid,component,rss_bytes,pss_bytes\n", t);
		for (int k = 1; k <= 2; k++) {
			fprintf(t, "%d.100,%d,%d,total,%.0f,%.0f\n", k, r, 100 + r, tot * k / 2, tot * k / 4);
			for (int c = 0; c < (extra ? 4 : 3); c++)
				fprintf(t, "%d.100,%d,%d,%s,%.0f,%.0f\n", k, r, 100 + r, comp[c], v[c] * k / 2,
					v[c] * k / 4);
		}
		fclose(t);
		snprintf(name, sizeof(name), "rank-%d.csv", r);
		put(dir, name, tl);
		free(tl);
		fprintf(s, "%d,%d,total,%.0f,2.100,%.0f,2.100,%.0f,%.0f\n", r, 100 + r, tot, tot / 2, tot, tot / 2);
		for (int c = 0; c < (extra ? 4 : 3); c++)
			fprintf(s, "%d,%d,%s,%.0f,2.100,%.0f,2.100,%.0f,%.0f\n", r, 100 + r, comp[c], v[c],
				v[c] / 2, v[c], v[c] / 2);
	}
	/* A launcher that is no rank: left out of the model. */
	fputs(",99,total,999999999,0.100,1,0.100,1,1\n", s);
	fclose(s);
	put(dir, "summary.csv", sum);
	free(sum);
	s = open_memstream(&sum, &sumlen);
	fprintf(s, "key,value\ninterval_ms,100\nfinished,1\ncommand_line,memattr-bpf --output %s -- mpirun -np %d /opt/bin/%s -s 30\n",
		dir, p, prog);
	if (n > 0)
		fprintf(s, "problem_size,%g\n", n);
	fclose(s);
	put(dir, "run_info.csv", sum);
	free(sum);
}

static int fx_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	snprintf(fx->root, sizeof(fx->root), "/tmp/memattr-model-test.XXXXXX");
	if (!mkdtemp(fx->root))
		return -1;
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->root);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

/* model_main with stdout and stderr into out and err (NUL-terminated); its exit status. */
static int run_model(char *out, size_t outlen, char *err, size_t errlen, ...)
{
	char *argv[32];
	int argc = 0, ret, so, se;
	FILE *fo = tmpfile(), *fe = tmpfile();
	size_t k;
	va_list ap;

	argv[argc++] = "model";
	va_start(ap, errlen);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	assert_true(fo && fe);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	ret = model_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	rewind(fo);
	rewind(fe);
	k = fread(out, 1, outlen - 1, fo);
	out[k] = '\0';
	k = fread(err, 1, errlen - 1, fe);
	err[k] = '\0';
	fclose(fo);
	fclose(fe);
	return ret;
}

static char *path(const struct fixture *fx, const char *name)
{
	static char buf[8][256];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", fx->root, name);
	return buf[i];
}

static void slurp(const char *p, char *buf, size_t len)
{
	FILE *f = fopen(p, "r");
	size_t k;

	assert_non_null(f);
	k = fread(buf, 1, len - 1, f);
	buf[k] = '\0';
	fclose(f);
}

/* The CSV line of a component, or NULL. */
static const char *csv_line(const char *csv, const char *comp)
{
	char key[80];
	const char *l;

	snprintf(key, sizeof(key), "\n%s,", comp);
	l = strstr(csv, key);
	return l ? l + 1 : NULL;
}

/* A summary.csv's text as a stream for md_summary_peaks. */
static FILE *text_stream(const char *text)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs(text, f);
	rewind(f);
	return f;
}

/*
 * summary.csv read in one pass gives what the sorted whole read gave:
 * components in the order of their first row by rank, pid, line (mpi,
 * first in the file but first for rank 2, comes after rank 0's app and
 * total); a rank whose rows are apart counted once, also across the rank
 * set's compactions (3,000 rows alternating two ranks); non-rank rows
 * left out. Mutations: order_comps not called (components in file order:
 * mpi first); the final rank_set_unique dropped (the rows since the last
 * compaction counted as ranks).
 */
static void test_summary_one_pass(void **state)
{
	struct md_run run = { 0 };
	struct md_acc a = { 0 };
	char err[MD_ERRLEN];
	char *text;
	size_t len = 0;
	FILE *f, *mem = open_memstream(&text, &len);

	(void)state;
	assert_non_null(mem);
	fputs("rank,pid,component,peak_rss_bytes,peak_rss_time_s\n"
	      "2,30,mpi,300,1\n"
	      "0,10,app,100,1\n"
	      "0,10,total,150,1\n"
	      ",99,foo,999,1\n"
	      "1,20,total,250,1\n"
	      "0,10,mpi,50,1\n", mem);
	for (int i = 0; i < 3000; i++)
		fprintf(mem, "%d,%d,total,10,1\n", i % 2, 10 + 10 * (i % 2));
	fclose(mem);
	f = text_stream(text);
	free(text);
	assert_int_equal(md_summary_peaks(&run, &a, f, "summary.csv", false, err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(run.ranks, 3);
	assert_int_equal(run.ncomp, 3);
	assert_string_equal(run.comp[0].name, "app");
	assert_string_equal(run.comp[1].name, "total");
	assert_string_equal(run.comp[2].name, "mpi");
	assert_true(run.comp[1].value == 250 && a.sum[1] == 150 + 250 + 3000 * 10);
	assert_true(run.comp[2].value == 300 && a.sum[2] == 350);
	assert_int_equal(run.comp[0].nranks, 1);
	free(a.sum);
	md_run_free(&run);
}

/*
 * Past MD_MAX_COMPS components the run is refused in one line naming
 * the file and line; --pss without the column too. Mutation: comp_get
 * without its MD_MAX_COMPS check (4,097 components kept, 0 returned).
 */
static void test_summary_limits(void **state)
{
	struct md_run run = { 0 };
	struct md_acc a = { 0 };
	char err[MD_ERRLEN];
	char *text;
	size_t len = 0;
	FILE *f, *mem = open_memstream(&text, &len);

	(void)state;
	assert_non_null(mem);
	fputs("rank,pid,component,peak_rss_bytes,peak_rss_time_s\n", mem);
	for (int i = 0; i <= MD_MAX_COMPS; i++)
		fprintf(mem, "0,10,lib:l%d,10,1\n", i);
	fclose(mem);
	f = text_stream(text);
	free(text);
	assert_int_equal(md_summary_peaks(&run, &a, f, "summary.csv", false, err, sizeof(err)), -1);
	fclose(f);
	assert_string_equal(err, "summary.csv:4098: more than " MD_MAX_COMPS_TEXT " components");
	free(a.sum);
	md_run_free(&run);

	memset(&a, 0, sizeof(a));
	f = text_stream("rank,pid,component,peak_rss_bytes,peak_rss_time_s\n0,10,total,1,1\n");
	assert_int_equal(md_summary_peaks(&run, &a, f, "summary.csv", true, err, sizeof(err)), -1);
	fclose(f);
	assert_string_equal(err, "summary.csv: no peak_pss_bytes column (--pss needs it)");
	free(a.sum);
	md_run_free(&run);
}

static void test_read_run_formats(void **state)
{
	struct fixture *fx = *state;
	struct md_run run;
	char err[MD_ERRLEN];

	/* The report's fixture: ranks 0 and 1, a process that is no rank, app on rank 0 only. */
	assert_int_equal(md_read_run(&run, "fixtures/report/good", -1, MD_STAT_MAX, false, err, sizeof(err)), 0);
	assert_int_equal(run.ranks, 2);
	for (size_t i = 0; i < run.ncomp; i++) {
		if (!strcmp(run.comp[i].name, "total"))
			assert_close(run.comp[i].value, 5000, 0);
		if (!strcmp(run.comp[i].name, "app"))
			assert_close(run.comp[i].value, 2000, 0);
	}
	md_run_free(&run);
	assert_int_equal(md_read_run(&run, "fixtures/report/good", -1, MD_STAT_MEAN, false, err, sizeof(err)), 0);
	for (size_t i = 0; i < run.ncomp; i++)
		if (!strcmp(run.comp[i].name, "app"))
			assert_close(run.comp[i].value, 1000, 0);	/* rank 1 has none */
	md_run_free(&run);
	/* Ours, with and without summary.csv: the same peaks. */
	make_run(path(fx, "p4"), 4, 0, "lulesh2.0", lulesh_like, NULL, 0);
	assert_int_equal(md_read_run(&run, path(fx, "p4"), -1, MD_STAT_MAX, false, err, sizeof(err)), 0);
	assert_int_equal(run.ranks, 4);
	assert_string_equal(run.app, "lulesh2.0");
	assert_false(run.from_timelines);
	for (size_t i = 0; i < run.ncomp; i++)
		if (!strcmp(run.comp[i].name, "mpi"))
			assert_close(run.comp[i].value, 5 * MIB + 4096 * 4, 0);
	md_run_free(&run);
	assert_int_equal(unlink(path(fx, "p4/summary.csv")), 0);
	assert_int_equal(md_read_run(&run, path(fx, "p4"), -1, MD_STAT_MAX, false, err, sizeof(err)), 0);
	assert_true(run.from_timelines);
	assert_int_equal(run.ranks, 4);
	for (size_t i = 0; i < run.ncomp; i++)
		if (!strcmp(run.comp[i].name, "mpi"))
			assert_close(run.comp[i].value, 5 * MIB + 4096 * 4, 0);
	md_run_free(&run);
	/* --pss needs summary.csv's peak_pss_bytes. */
	assert_int_equal(md_read_run(&run, path(fx, "p4"), -1, MD_STAT_MAX, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--pss"));
}

static void test_model_on_runs(void **state)
{
	struct fixture *fx = *state;
	char out[16384], err[4096], csv[8192];
	const char *l;
	struct stat st;
	glob_t g;

	make_run(path(fx, "p2"), 2, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "p4"), 4, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "p8"), 8, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "p16"), 16, 0, "lulesh2.0", lulesh_like, NULL, 0);
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "p2"), path(fx, "p4"),
				   path(fx, "p8"), path(fx, "p16"), "--predict", "64", "-o",
				   path(fx, "model.csv"), NULL), 0);
	assert_string_equal(err, "");
	/* Each term in words and units; the prediction in MiB with its interval. */
	assert_non_null(strstr(out, "lulesh2.0, 4 runs at 2, 4, 8, 16 ranks"));
	assert_non_null(strstr(out, "mpi: 5.00 MiB per rank (constant)"));
	assert_non_null(strstr(out, "mpi: +4.00 KiB per rank per peer (P term)"));
	assert_non_null(strstr(out, "libc: 2.00 MiB per rank (constant)"));
	assert_non_null(strstr(out, "at 64 ranks: 5.25 MiB per rank, 95% interval 5.25 .. 5.25 MiB"));
	assert_null(strstr(out, "extrapolates"));	/* 64 / 16 is not past 4x */
	assert_non_null(strstr(out, "only 4 runs"));
	slurp(path(fx, "model.csv"), csv, sizeof(csv));
	assert_true(!strncmp(csv, "component,statistic,model,runs,", 31));
	l = csv_line(csv, "mpi");
	assert_non_null(l);
	/* 5 MiB + 4096 * 64 = 5505024 bytes. */
	assert_true(!strncmp(l, "mpi,max_rss,a + b*P,4,0,0.0000,5242880,P,4096,,,16,5308416,64,,5505024,5505024,5505024,t95,4.00,",
			     strlen("mpi,max_rss,a + b*P,4,0,0.0000,5242880,P,4096,,,16,5308416,64,,5505024,5505024,5505024,t95,4.00,")));
	l = csv_line(csv, "total");
	assert_non_null(l);
	assert_ptr_equal(l, csv + strlen("component,statistic,model,runs,loo_rmse_bytes,loo_relative_error,constant_bytes,term1,coefficient1,term2,coefficient2,largest_run_ranks,largest_run_bytes,predict_ranks,predict_size,predict_bytes,interval_low_bytes,interval_high_bytes,interval,extrapolation,weak,prediction_from,fitted_alone_bytes,refused\n"));
	/* total: the components' predictions summed (20 MiB + 16 KiB * 63, 5 MiB + 4096 * 64, 2 MiB). */
	assert_true(strstr(l, ",64,,29605888,29605888,29605888,t95_quadrature,") != NULL);
	assert_non_null(strstr(l, ",sum_of_components,29605888,"));
	assert_non_null(strstr(out, "the sum of the components' predictions"));
	/* No temporary left beside it. */
	assert_int_equal(glob(path(fx, "model.csv.tmp.*"), 0, NULL, &g), GLOB_NOMATCH);
	globfree(&g);
	/* The largest rank's peak (default) and the mean differ for app, where ranks differ. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "p2"), path(fx, "p4"),
				   path(fx, "p8"), "--stat", "mean", "--all", NULL), 0);
	assert_non_null(strstr(out, "the ranks' mean peak rss"));
	assert_null(strstr(out, "at 64 ranks"));
	/* A CSV that cannot be written: exit 1, nothing half-written. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "p2"), path(fx, "p4"),
				   path(fx, "p8"), "-o", path(fx, "nodir/model.csv"), NULL), 1);
	assert_non_null(strstr(err, "cannot write"));
	assert_int_not_equal(stat(path(fx, "nodir"), &st), 0);
}

/* Per rank, at 2, 4 and 8 ranks: app constant, mpi 64 KiB per peer, libc near constant but drifting up. */
static void three_runs(double p, double n, int rank, double *app, double *mpi, double *libc)
{
	(void)n, (void)rank;
	*app = 20 * MIB;
	*mpi = 5 * MIB + 65536 * p;
	*libc = 2 * MIB + (p == 8 ? 12288 : p == 4 ? 2048 : 0);
}

/* The command on three runs: no P^2 anywhere, mpi's P term kept, libc's refusal printed and in the CSV. */
static void test_model_three_runs(void **state)
{
	struct fixture *fx = *state;
	char out[16384], err[4096], csv[8192];
	const char *l;

	make_run(path(fx, "q2"), 2, 0, "lulesh2.0", three_runs, NULL, 0);
	make_run(path(fx, "q4"), 4, 0, "lulesh2.0", three_runs, NULL, 0);
	make_run(path(fx, "q8"), 8, 0, "lulesh2.0", three_runs, NULL, 0);
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "q2"), path(fx, "q4"),
				   path(fx, "q8"), "--predict", "32", "--all", "-o", path(fx, "q.csv"), NULL), 0);
	assert_string_equal(err, "");
	assert_null(strstr(out, "P^2 term"));
	assert_null(strstr(out, "P log2 P term"));
	assert_non_null(strstr(out, "mpi: +64.0 KiB per rank per peer (P term)"));
	assert_non_null(strstr(out, "app: 20.0 MiB per rank (constant)"));
	assert_non_null(strstr(out, "\nlibc: "));
	assert_non_null(strstr(out, "refused: the runs differ by 12.0 KiB, within the noise (16.0 KiB): a constant\n  libc: "));
	slurp(path(fx, "q.csv"), csv, sizeof(csv));
	l = csv_line(csv, "libc");
	assert_non_null(l);
	assert_true(!strncmp(l, "libc,max_rss,a,3,", 17));
	assert_non_null(strstr(l, "refused: the runs differ by 12.0 KiB"));
	l = csv_line(csv, "mpi");
	assert_non_null(l);
	assert_true(!strncmp(l, "mpi,max_rss,a + b*P,3,", 22));
}

/*
 * `report DIR RUN RUN`: DIR's page with the model of the three runs (the
 * same as the text's: mpi's P term, libc's refusal said, escaped); a model
 * that cannot be fitted (2 runs) fails in one line and writes no page.
 */
static void test_report_with_model(void **state)
{
	struct fixture *fx = *state;
	char out[4096], err[4096], page[262144];
	char *argv[4] = { "report", path(fx, "q8"), path(fx, "q2"), path(fx, "q4") };
	const char *sec;
	struct stat st;
	int so, se;
	FILE *fo = tmpfile(), *fe = tmpfile();
	size_t k;
	int rc, rc2;

	make_run(path(fx, "q2"), 2, 0, "lulesh2.0", three_runs, NULL, 0);
	make_run(path(fx, "q4"), 4, 0, "lulesh2.0", three_runs, NULL, 0);
	make_run(path(fx, "q8"), 8, 0, "lulesh2.0", three_runs, NULL, 0);
	assert_true(fo && fe);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	rc = report_cmd_main(4, argv);
	/* Two runs: no model, no page. */
	rc2 = report_cmd_main(3, (char *[]){ "report", path(fx, "q2"), path(fx, "q4"), NULL });
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	rewind(fo);
	k = fread(out, 1, sizeof(out) - 1, fo);
	out[k] = '\0';
	rewind(fe);
	k = fread(err, 1, sizeof(err) - 1, fe);
	err[k] = '\0';
	fclose(fo);
	fclose(fe);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "report.html (with the memory model)"));
	slurp(path(fx, "q8/report.html"), page, sizeof(page));
	sec = strstr(page, "<h2 id=\"model\">Memory model</h2>");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "lulesh2.0: 3 runs at 8, 2, 4 ranks"));
	assert_non_null(strstr(sec, "a + b*P</td><td class=\"l\">a = 5.00 MiB per rank<br>b: +64.0 KiB per rank per peer (P)"));
	assert_non_null(strstr(sec, "a + b*P^2 refused: the runs differ by 12.0 KiB, within the noise (16.0 KiB): a constant"));
	assert_null(strstr(sec, "</td><td class=\"l\">a + b*P^2</td>"));
	assert_int_equal(rc2, 1);
	assert_string_equal(err, "memattr-bpf report: the model of 2 runs: 2 runs given: a model in P needs at least 3, at 3 or more rank counts (one is left out in turn to cross-validate)\n");
	assert_int_not_equal(stat(path(fx, "q2/report.html"), &st), 0);
}

static void test_model_sizes(void **state)
{
	struct fixture *fx = *state;
	char out[16384], err[4096], a[300], b[300];

	make_run(path(fx, "s2"), 2, 100, "cg", sized, NULL, 0);
	make_run(path(fx, "s4"), 4, 400, "cg", sized, NULL, 0);
	make_run(path(fx, "s8"), 8, 200, "cg", sized, NULL, 0);
	/* Size from the command line, overriding run_info's. */
	make_run(path(fx, "s16"), 16, 400, "cg", sized, NULL, 0);
	put(path(fx, "s16"), "run_info.csv", "key,value\ncommand_line,memattr-bpf -- mpirun -np 16 ./cg\nproblem_size,123\n");
	make_run(path(fx, "s32"), 32, 800, "cg", sized, NULL, 0);
	snprintf(a, sizeof(a), "%s:400", path(fx, "s16"));
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "s2"), path(fx, "s4"),
				   path(fx, "s8"), a, path(fx, "s32"), "--predict", "64,1600", NULL), 0);
	/* ... 123 with 16 ranks would not fit N/P exactly: 400 was used. */
	assert_non_null(strstr(out, "16 (N=400)"));
	/* total = 8 MiB + 64 KiB N/P + 4 KiB P: both terms found. */
	assert_non_null(strstr(out, "model a + b*P + c*N/P: leave-one-out error 0 B"));
	assert_non_null(strstr(out, "app: +64.0 KiB per rank per unit of the rank's share of the problem (N/P) (N/P term)"));
	assert_non_null(strstr(out, "mpi: +4.00 KiB per rank per peer (P term)"));
	/* 1 MiB + 64 KiB * 1600 / 64 = 2.5625 MiB */
	assert_non_null(strstr(out, "at 64 ranks: 2.56 MiB per rank"));
	/* Runs that differ in size need SIZE. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "s2"), path(fx, "s4"),
				   path(fx, "s8"), "--predict", "64", NULL), 1);
	assert_non_null(strstr(err, "give RANKS,SIZE"));
	/* Some runs sized, one not. */
	snprintf(b, sizeof(b), "%s", path(fx, "n8"));
	make_run(b, 8, 0, "cg", sized, NULL, 0);
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "s2"), path(fx, "s4"), b,
				   NULL), 1);
	assert_non_null(strstr(err, "has no problem size"));
}

/*
 * Components that grow by different laws: app linear in P, mpi with log2 P,
 * their sum fitted as one model extrapolates otherwise. The prediction of
 * total is the sum of the components', and says how far apart its own
 * model is.
 */
static void mixed_laws(double p, double n, int rank, double *app, double *mpi, double *libc)
{
	(void)n;
	(void)rank;
	*app = 4 * MIB * p;
	*mpi = 8 * MIB * log2(p);
	*libc = 2 * MIB;
}

static void test_model_total_is_the_sum(void **state)
{
	struct fixture *fx = *state;
	char out[16384], err[4096], csv[8192], want[64];
	const char *l;

	make_run(path(fx, "p2"), 2, 0, "alltoall", mixed_laws, NULL, 0);
	make_run(path(fx, "p4"), 4, 0, "alltoall", mixed_laws, NULL, 0);
	make_run(path(fx, "p8"), 8, 0, "alltoall", mixed_laws, NULL, 0);
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "p2"), path(fx, "p4"),
				   path(fx, "p8"), "--predict", "1024", "-o", path(fx, "model.csv"), NULL), 0);
	slurp(path(fx, "model.csv"), csv, sizeof(csv));
	l = csv_line(csv, "total");
	assert_non_null(l);
	/* 4 GiB + 80 MiB + 2 MiB per rank at 1024 ranks, exactly: every component is exact. */
	snprintf(want, sizeof(want), ",%.0f,", 4096 * MIB + 80 * MIB + 2 * MIB);
	assert_non_null(strstr(l, want));
	assert_non_null(strstr(l, ",sum_of_components,"));
	/* Three points fit by one model of two terms at most: not the sum's law. */
	assert_non_null(strstr(out, "fitted on its own, the total predicts"));
}

static void test_model_refusals(void **state)
{
	struct fixture *fx = *state;
	char out[16384], err[4096];

	make_run(path(fx, "r2"), 2, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "r2b"), 2, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "r4"), 4, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "r8"), 8, 0, "lulesh2.0", lulesh_like, NULL, 0);
	make_run(path(fx, "h8"), 8, 0, "test_HPCCG", lulesh_like, NULL, 0);
	make_run(path(fx, "m8"), 8, 0, "lulesh2.0", lulesh_like, "lib:libmpich.so", 10 * MIB);
	make_run(path(fx, "t8"), 8, 0, "lulesh2.0", lulesh_like, "lib:libtiny.so", 4096);

	/* Too few runs. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"), NULL), 1);
	assert_non_null(strstr(err, "2 runs given: a model in P needs at least 3"));
	/* Three runs at two rank counts. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r2b"),
				   path(fx, "r4"), NULL), 1);
	assert_non_null(strstr(err, "2 rank counts (2, 4)"));
	/* Another program. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "h8"), NULL), 1);
	assert_non_null(strstr(err, "runs of different programs: lulesh2.0"));
	assert_non_null(strstr(err, "test_HPCCG"));
	/* A sizeable component only one run has: another MPI library. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "m8"), NULL), 1);
	assert_non_null(strstr(err, "component lib:libmpich.so"));
	/* A tiny one is fine: 0 bytes where absent. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "t8"), NULL), 0);
	/* Unreadable or missing directories. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "nothere"), NULL), 1);
	assert_non_null(strstr(err, "nothere: No such file or directory"));
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "r8/summary.csv"), NULL), 1);
	assert_non_null(strstr(err, "not a directory"));
	/* A directory that is no run. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   "fixtures/report/empty", NULL), 1);
	assert_non_null(strstr(err, "not a memattr-bpf output directory"));
	/* Bad --predict. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "r8"), "--predict", "0", NULL), 1);
	assert_non_null(strstr(err, "--predict '0': RANKS must be a whole number"));
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "r8"), "--predict", "12x", NULL), 1);
	assert_non_null(strstr(err, "--predict '12x'"));
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "r8"), "--predict", "64,-1", NULL), 1);
	assert_non_null(strstr(err, "SIZE must be a positive number"));
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), path(fx, "r2"), path(fx, "r4"),
				   path(fx, "r8"), "--predict", "64,100", NULL), 1);
	assert_non_null(strstr(err, "no problem size"));
	/* Each message is one line. */
	assert_non_null(strchr(err, '\n'));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
	/* Usage errors: 2. */
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), "--bogus", NULL), 2);
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), NULL), 2);
	assert_int_equal(run_model(out, sizeof(out), err, sizeof(err), "--help", NULL), 0);
	assert_non_null(strstr(out, "usage: memattr-bpf model"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lsq_exact_linear),
		cmocka_unit_test(test_lsq_log_with_noise),
		cmocka_unit_test(test_lsq_two_terms_and_cov),
		cmocka_unit_test(test_underdetermined_refused),
		cmocka_unit_test(test_choose_linear),
		cmocka_unit_test(test_choose_log_with_noise),
		cmocka_unit_test(test_choose_constant),
		cmocka_unit_test(test_choose_two_terms),
		cmocka_unit_test(test_choose_three_runs_confirmed_only),
		cmocka_unit_test(test_choose_size),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_app_name),
		cmocka_unit_test(test_split_run_arg),
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_summary_one_pass),
		cmocka_unit_test(test_summary_limits),
		cmocka_unit_test_setup_teardown(test_read_run_formats, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_on_runs, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_three_runs, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_report_with_model, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_sizes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_total_is_the_sum, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_model_refusals, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
