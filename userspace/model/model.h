/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `memattr-bpf model RUN... [--predict RANKS[,SIZE]]`: from datasets of one
 * application at several rank counts P (and problem sizes N), fit each
 * component's per-rank peak as a function of P and N, and predict it at a
 * scale nobody has run yet.
 *
 * The model of a component is a + sum of at most two terms taken from a
 * small basis (P, log2 P, P log2 P, P^2, sqrt P; N/P and N when the runs
 * differ in size), each with a least-squares coefficient; the terms are
 * chosen by leave-one-out cross-validation over the runs, as Extra-P does
 * for run time (Calotoiu et al., SC13), among those the runs can confirm:
 * a component whose runs differ by less than the measurement noise is a
 * constant, and a model whose leave-one-out fits are exact (as many runs
 * left as it has coefficients: 3 runs for a one-term model) must predict
 * every run left out to within the noise.
 *
 * model_read.c reads a run (report's CSV reader: summary.csv and
 * run_info.csv, or the timelines when there is no summary), model_fit.c is
 * the arithmetic (least squares, cross-validation, intervals; pure),
 * model_print.c writes the text and the CSV, model.c is the command.
 * Nothing here needs root or BPF.
 */
#ifndef MEMATTR_MODEL_H
#define MEMATTR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MD_ERRLEN	(2 * 4096 + 1024)	/* two run directories and words */
#define MD_MAX_TERMS	2	/* non-constant terms of one model */
#define MD_MAX_RUNS	256
#define MD_NAME		128	/* component and application names */
/*
 * What one run's summary.csv may name, read in one pass (model_peaks.c):
 * distinct components and distinct ranks; past either the run is refused.
 */
#define MD_MAX_COMPS	4096
#define MD_MAX_COMPS_TEXT "4096"
#define MD_MAX_RANKS	(1 << 22)

/* The basis: functions of ranks P and size N. */
enum md_term {
	MD_T_P,		/* P: per-peer state */
	MD_T_LOG2P,	/* log2 P: trees, per doubling */
	MD_T_PLOG2P,	/* P log2 P */
	MD_T_P2,	/* P^2 */
	MD_T_SQRTP,	/* sqrt P: 2-D decompositions' halos */
	MD_T_N_OVER_P,	/* N / P: the rank's share of the problem */
	MD_T_N,		/* N: replicated on every rank */
	MD_T_NR,
};

/* Which statistic over a run's ranks is fitted. */
enum md_stat { MD_STAT_MAX, MD_STAT_MEAN };

/* One component of one run. */
struct md_comp {
	char name[MD_NAME];
	double value;		/* the statistic over ranks of the per-rank peak, bytes */
	size_t nranks;		/* ranks that had it */
};

/* One run (a dataset directory). */
struct md_run {
	char dir[4096];
	char app[MD_NAME];	/* program name from run_info's command_line; "" when unknown */
	int ranks;		/* P: distinct ranks in the run */
	double size;		/* N; < 0: not given */
	struct md_comp *comp;
	size_t ncomp;
	bool from_timelines;	/* no summary.csv: peaks read from the timelines */
};

/* model_read.c ---------------------------------------------------------- */

/*
 * Read the run in dir: per component, stat over ranks of each rank's peak
 * (rss, or pss when use_pss). size < 0: from run_info's problem_size key,
 * if any. 0, or -1 with "DIR: why" in err.
 */
int md_read_run(struct md_run *run, const char *dir, double size, enum md_stat stat,
		bool use_pss, char *err, size_t errlen);
void md_run_free(struct md_run *run);

/* model_peaks.c --------------------------------------------------------- */

/* Per component while reading: the sum over ranks of their peaks (parallel to run->comp). */
struct md_acc {
	double *sum;
	size_t nsum;
};

/*
 * A rank's peak v of component name: the component's largest and its sum
 * (the component made when new). 0, or -1 (out of memory, or past
 * MD_MAX_COMPS components).
 */
int md_add_peak(struct md_run *run, struct md_acc *a, const char *name, double v);
/*
 * Every rank's peaks from summary.csv (open as f, path for messages), in
 * one pass and bounded memory: rss, or pss when use_pss; processes that
 * are no rank left out; run->ranks the distinct ranks. 0, or -1 with
 * "PATH[:LINE]: why" in err (past MD_MAX_COMPS components or MD_MAX_RANKS
 * ranks included).
 */
int md_summary_peaks(struct md_run *run, struct md_acc *a, FILE *f, const char *path,
		     bool use_pss, char *err, size_t errlen);

/*
 * The program a run traced, from its command line as run_info.csv records
 * it ("memattr-bpf --output d -- mpirun -np 8 ./lulesh2.0 -s 30" ->
 * "lulesh2.0"): launchers and their options skipped. "" when the run
 * attached to a job or to PIDs (the command does not name the program).
 */
void md_app_name(const char *cmdline, char *out, size_t len);

/* "DIR:N" -> dir and N when N is a plain positive number and DIR exists; else the whole arg. */
int md_split_run_arg(const char *arg, char *dir, size_t dirlen, double *size);

/* model_fit.c ----------------------------------------------------------- */

/* The value of a term at P ranks and size N. */
double md_term_value(enum md_term t, double p, double n);
/* "P", "log2 P", "P log2 P", "P^2", "sqrt P", "N/P", "N". */
const char *md_term_name(enum md_term t);
/* What a coefficient of the term means, after "+4.1 KiB per rank ": "per peer". */
const char *md_term_meaning(enum md_term t);
/* Whether the term involves N. */
bool md_term_uses_size(enum md_term t);

/*
 * Least squares: beta (k values) minimising |X beta - y| for X n x k, row
 * major. Householder QR on unit-scaled columns. 0; -1 when X is rank
 * deficient (or k > n). rss, if not NULL, gets the residual sum of
 * squares; cov, if not NULL (k x k), gets (X^T X)^-1.
 */
int md_lsq(const double *x, size_t n, size_t k, const double *y, double *beta, double *rss,
	   double *cov);

/* Two-sided 95% quantile of Student's t with dof degrees of freedom (dof >= 1). */
double md_t975(size_t dof);

/* A data point: a run's P, N and value. */
struct md_point {
	double p, n, y;
};

/* A fitted model. */
struct md_model {
	size_t nterms;				/* non-constant terms */
	enum md_term term[MD_MAX_TERMS];
	double c0;				/* constant, bytes */
	double coef[MD_MAX_TERMS];		/* bytes per unit of the term */
	double cov[(MD_MAX_TERMS + 1) * (MD_MAX_TERMS + 1)];	/* (X^T X)^-1 */
	double rss;				/* residual sum of squares of the fit */
	size_t n;				/* points fitted */
	double loo_rmse;			/* root mean square leave-one-out error, bytes */
	double loo_max;				/* largest |leave-one-out error|, bytes */
	double mean_y;
	bool valid;
	/* md_choose: why a term that fitted the runs better was not taken, "" when none was. */
	char why[512];
};

/* Which terms may be used: all the P terms, the N terms only when sizes differ. */
struct md_fit_opts {
	bool use_size;
	double prefer_simpler;	/* a model with more terms must beat the best simpler LOO by this factor (0.9) */
	double noise;		/* bytes two runs may differ by with no cause; 0: md_noise() */
};

/*
 * What a per-rank peak varies by between runs of one program at one scale
 * (page-granular RSS, allocator trimming, the kernel's own timing):
 * MD_NOISE_BYTES, or MD_NOISE_REL of the largest value when that is more.
 */
#define MD_NOISE_BYTES	(16.0 * 1024)
#define MD_NOISE_REL	0.001
/* A term 3 runs cannot check exactly: admitted if it predicts each left-out run this many times better than none. */
#define MD_CONFIRM	10.0
double md_noise(const struct md_point *pt, size_t n);

/* Fit a + the given terms to the points, with its leave-one-out errors. 0, or -1 if under-determined. */
int md_fit_terms(const struct md_point *pt, size_t n, const enum md_term *terms, size_t nterms,
		 struct md_model *m);

/*
 * The model chosen by cross-validation: every set of at most MD_MAX_TERMS
 * terms whose leave-one-out fits are all determined; the lowest LOO error
 * wins, errors below the noise counting as the noise (so that within it
 * the simpler model, and the slower-growing term, win), a simpler model
 * winning unless a more complex one's LOO error is below
 * o->prefer_simpler times it. Refused, with the reason in best->why: every
 * term when the points' spread is below the noise (a constant), and a model
 * whose leave-one-out fits are exact (n - 1 points, n - 1 coefficients:
 * nothing left to check them) that misses a point left out by more than
 * the noise. runner_up, if not NULL, gets the best other model admitted
 * (valid false when none). 0, or -1 when not even the constant can be
 * cross-validated (fewer than 2 points).
 */
int md_choose(const struct md_point *pt, size_t n, const struct md_fit_opts *o, struct md_model *best,
	      struct md_model *runner_up);

/* The model's value at (p, n). */
double md_eval(const struct md_model *m, double p, double n);

/*
 * 95% prediction interval half-width at (p, n) from the fit's residuals
 * (Student t, n - k degrees of freedom): t * s * sqrt(1 + x0^T (X^T X)^-1 x0).
 * Returns -1 when there is no degree of freedom left.
 */
double md_interval(const struct md_model *m, double p, double n);

/* model_print.c --------------------------------------------------------- */

/* One component's result, as printed. */
struct md_result {
	char name[MD_NAME];
	struct md_model m, runner_up;
	double largest;		/* its value at the largest run, bytes */
	bool predict;		/* a prediction was asked for */
	double pred, half;	/* prediction and interval half-width (< 0: none), bytes */
	double extrap;		/* predicted P / largest P fitted */
	/*
	 * total only: pred and half are the sum of the components' (halves in
	 * quadrature); the total's own model predicted alone_pred +- alone_half.
	 */
	bool summed;
	double alone_pred, alone_half;
	char weak[512];		/* why the fit is weak, "" if not */
};

struct md_report {
	const struct md_run *runs;
	size_t nruns;
	const char *app;
	enum md_stat stat;
	bool use_pss;
	bool use_size;
	double pred_p, pred_n;	/* pred_p <= 0: no prediction */
	struct md_result *res;	/* total first, then by size at the largest run */
	size_t nres;
	size_t nsmall;		/* components not printed in text (too small) */
	double small_below;	/* their threshold, bytes */
};

/* Why the fit is weak, into r->weak (r's model, prediction and extrapolation set). */
void md_assess(struct md_result *r, size_t nruns, double pred_p, double pred_n);

/* "12.3 MiB", "4.1 KiB", "512 B", signed. */
void md_fmt_bytes(double b, char *out, size_t len);

int md_print_text(FILE *f, const struct md_report *rep);
int md_print_csv(FILE *f, const struct md_report *rep);
/* A section of an HTML page (the report's): the runs, then per component its model, as the text says it. */
int md_print_html(FILE *f, const struct md_report *rep);

/* model.c --------------------------------------------------------------- */

int model_main(int argc, char **argv);

/*
 * `memattr-bpf report DIR RUN...`: the model of the runs dirs (as `model`
 * takes them: RUN or RUN:SIZE; no prediction) as an HTML section into f.
 * 0, or -1 with the reason in err (too few runs, different programs, ...).
 */
int md_model_html(FILE *f, char *const *dirs, size_t n, char *err, size_t errlen);

#endif
