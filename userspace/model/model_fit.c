// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The arithmetic of `memattr-bpf model`: least squares on a few columns,
 * leave-one-out cross-validation, the choice of terms, and prediction
 * intervals. Pure: numbers in, numbers out.
 *
 * Sizes here are small (a handful of runs, at most three columns), so
 * clarity wins over speed: every leave-one-out fit is a fresh solve.
 * Columns are scaled to a largest value of 1 before the QR factorisation,
 * so P^2 at 4,096 ranks and a constant of 1 sit in one well-conditioned
 * system.
 */
#include <math.h>
#include <string.h>

#include "model.h"

#define MAXK	(MD_MAX_TERMS + 1)

static const char *const term_names[MD_T_NR] = {
	[MD_T_P] = "P", [MD_T_LOG2P] = "log2 P", [MD_T_PLOG2P] = "P log2 P",
	[MD_T_P2] = "P^2", [MD_T_SQRTP] = "sqrt P", [MD_T_N_OVER_P] = "N/P", [MD_T_N] = "N",
};

static const char *const term_meanings[MD_T_NR] = {
	[MD_T_P] = "per peer",
	[MD_T_LOG2P] = "per doubling of the ranks",
	[MD_T_PLOG2P] = "per peer per doubling of the ranks",
	[MD_T_P2] = "per peer squared",
	[MD_T_SQRTP] = "per square root of the ranks",
	[MD_T_N_OVER_P] = "per unit of the rank's share of the problem (N/P)",
	[MD_T_N] = "per unit of problem size (replicated on every rank)",
};

double md_term_value(enum md_term t, double p, double n)
{
	switch (t) {
	case MD_T_P:		return p;
	case MD_T_LOG2P:	return log2(p);
	case MD_T_PLOG2P:	return p * log2(p);
	case MD_T_P2:		return p * p;
	case MD_T_SQRTP:	return sqrt(p);
	case MD_T_N_OVER_P:	return n / p;
	case MD_T_N:		return n;
	default:		return NAN;
	}
}

const char *md_term_name(enum md_term t)
{
	return (unsigned int)t < MD_T_NR ? term_names[t] : "?";
}

const char *md_term_meaning(enum md_term t)
{
	return (unsigned int)t < MD_T_NR ? term_meanings[t] : "?";
}

bool md_term_uses_size(enum md_term t)
{
	return t == MD_T_N_OVER_P || t == MD_T_N;
}

int md_lsq(const double *x, size_t n, size_t k, const double *y, double *beta, double *rss,
	   double *cov)
{
	double a[MD_MAX_RUNS * MAXK], b[MD_MAX_RUNS], scale[MAXK], rinv[MAXK * MAXK] = {0};
	double rmax = 0;

	if (k == 0 || k > MAXK || n < k || n > MD_MAX_RUNS)
		return -1;
	for (size_t j = 0; j < k; j++) {
		scale[j] = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isfinite(x[i * k + j]))
				return -1;
			scale[j] = fmax(scale[j], fabs(x[i * k + j]));
		}
		if (scale[j] == 0)
			return -1;
	}
	for (size_t i = 0; i < n; i++) {
		b[i] = y[i];
		for (size_t j = 0; j < k; j++)
			a[i * k + j] = x[i * k + j] / scale[j];
	}
	/* Householder: column j below the diagonal folded onto it, b with it. */
	for (size_t j = 0; j < k; j++) {
		double norm = 0, alpha, vnorm = 0, v[MD_MAX_RUNS];

		for (size_t i = j; i < n; i++)
			norm += a[i * k + j] * a[i * k + j];
		norm = sqrt(norm);
		if (norm == 0)
			return -1;
		alpha = a[j * k + j] > 0 ? -norm : norm;
		for (size_t i = j; i < n; i++)
			v[i] = a[i * k + j];
		v[j] -= alpha;
		for (size_t i = j; i < n; i++)
			vnorm += v[i] * v[i];
		if (vnorm > 0) {
			for (size_t c = j; c < k; c++) {
				double d = 0;

				for (size_t i = j; i < n; i++)
					d += v[i] * a[i * k + c];
				d = 2 * d / vnorm;
				for (size_t i = j; i < n; i++)
					a[i * k + c] -= d * v[i];
			}
			double d = 0;

			for (size_t i = j; i < n; i++)
				d += v[i] * b[i];
			d = 2 * d / vnorm;
			for (size_t i = j; i < n; i++)
				b[i] -= d * v[i];
		}
		rmax = fmax(rmax, fabs(a[j * k + j]));
	}
	/* Columns of largest value 1: a diagonal this small is a column the others make. */
	for (size_t j = 0; j < k; j++)
		if (fabs(a[j * k + j]) <= 1e-9 * rmax)
			return -1;
	for (size_t j = k; j-- > 0;) {
		double s = b[j];

		for (size_t c = j + 1; c < k; c++)
			s -= a[j * k + c] * beta[c];
		beta[j] = s / a[j * k + j];
	}
	if (rss) {
		*rss = 0;
		for (size_t i = k; i < n; i++)
			*rss += b[i] * b[i];
	}
	for (size_t j = 0; j < k; j++)
		beta[j] /= scale[j];
	if (cov) {
		/* R^-1 (upper), then (X^T X)^-1 = S^-1 R^-1 R^-T S^-1. */
		for (size_t c = 0; c < k; c++) {
			rinv[c * k + c] = 1 / a[c * k + c];
			for (size_t r = c; r-- > 0;) {
				double s = 0;

				for (size_t m = r + 1; m <= c; m++)
					s += a[r * k + m] * rinv[m * k + c];
				rinv[r * k + c] = -s / a[r * k + r];
			}
		}
		for (size_t r = 0; r < k; r++)
			for (size_t c = 0; c < k; c++) {
				double s = 0;

				for (size_t m = 0; m < k; m++)
					s += rinv[r * k + m] * rinv[c * k + m];
				cov[r * k + c] = s / (scale[r] * scale[c]);
			}
	}
	return 0;
}

double md_t975(size_t dof)
{
	static const double t[30] = {
		12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};
	const double z = 1.959964;
	double d = (double)dof;

	if (dof == 0)
		return INFINITY;
	if (dof <= 30)
		return t[dof - 1];
	/* Cornish-Fisher expansion: within 0.001 of the table past 30. */
	return z + (z * z * z + z) / (4 * d) +
	       (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

/* The row of the design matrix at (p, n): 1, then the terms. */
static void design_row(const enum md_term *terms, size_t nterms, double p, double n, double *row)
{
	row[0] = 1;
	for (size_t j = 0; j < nterms; j++)
		row[1 + j] = md_term_value(terms[j], p, n);
}

double md_eval(const struct md_model *m, double p, double n)
{
	double v = m->c0;

	for (size_t j = 0; j < m->nterms; j++)
		v += m->coef[j] * md_term_value(m->term[j], p, n);
	return v;
}

double md_interval(const struct md_model *m, double p, double n)
{
	size_t k = m->nterms + 1;
	double row[MAXK], q = 0, s2;

	if (!m->valid || m->n <= k)
		return -1;
	design_row(m->term, m->nterms, p, n, row);
	for (size_t r = 0; r < k; r++)
		for (size_t c = 0; c < k; c++)
			q += row[r] * m->cov[r * k + c] * row[c];
	s2 = m->rss / (double)(m->n - k);
	return md_t975(m->n - k) * sqrt(s2 * (1 + fmax(q, 0)));
}

/* Least squares on the points but skip (skip >= n: none); beta has k values. */
static int fit_points(const struct md_point *pt, size_t n, size_t skip, const enum md_term *terms,
		      size_t nterms, double *beta, double *rss, double *cov)
{
	double x[MD_MAX_RUNS * MAXK], y[MD_MAX_RUNS];
	size_t k = nterms + 1, m = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == skip)
			continue;
		design_row(terms, nterms, pt[i].p, pt[i].n, x + m * k);
		y[m++] = pt[i].y;
	}
	return md_lsq(x, m, k, y, beta, rss, cov);
}

int md_fit_terms(const struct md_point *pt, size_t n, const enum md_term *terms, size_t nterms,
		 struct md_model *m)
{
	double beta[MAXK], sq = 0;
	size_t k = nterms + 1;

	memset(m, 0, sizeof(*m));
	if (nterms > MD_MAX_TERMS || n > MD_MAX_RUNS || n < k + 1)
		return -1;
	m->nterms = nterms;
	if (nterms)
		memcpy(m->term, terms, nterms * sizeof(*terms));
	m->n = n;
	if (fit_points(pt, n, n, terms, nterms, beta, &m->rss, m->cov))
		return -1;
	m->c0 = beta[0];
	for (size_t j = 0; j < nterms; j++)
		m->coef[j] = beta[1 + j];
	for (size_t i = 0; i < n; i++) {
		double row[MAXK], pred = 0, e;

		m->mean_y += pt[i].y / (double)n;
		/* Every held-out fit must be determined, or the model is not cross-validated. */
		if (fit_points(pt, n, i, terms, nterms, beta, NULL, NULL))
			return -1;
		design_row(terms, nterms, pt[i].p, pt[i].n, row);
		for (size_t j = 0; j < k; j++)
			pred += beta[j] * row[j];
		e = pred - pt[i].y;
		sq += e * e;
		m->loo_max = fmax(m->loo_max, fabs(e));
	}
	m->loo_rmse = sqrt(sq / (double)n);
	m->valid = true;
	return 0;
}

double md_noise(const struct md_point *pt, size_t n)
{
	double ymax = 0;

	for (size_t i = 0; i < n; i++)
		ymax = fmax(ymax, fabs(pt[i].y));
	return fmax(MD_NOISE_BYTES, MD_NOISE_REL * ymax);
}

/* Lower is better; errors below floor are all floor (the noise: no model can tell them apart). */
static double score(const struct md_model *m, double floor)
{
	return fmax(m->loo_rmse, floor);
}

static bool same_terms(const struct md_model *a, const struct md_model *b)
{
	return a->nterms == b->nterms && !memcmp(a->term, b->term, a->nterms * sizeof(a->term[0]));
}

/*
 * The winner among the admitted candidates: the best of each number of
 * terms (the first of equals: the candidates' order), and a term more
 * only when its error is below prefer x the simpler one's.
 */
static const struct md_model *pick(const struct md_model *cand, const bool *admitted, size_t nc,
				   double floor, double prefer)
{
	const struct md_model *level[MD_MAX_TERMS + 1] = {0}, *win = NULL;

	for (size_t c = 0; c < nc; c++) {
		const struct md_model **l = &level[cand[c].nterms];

		if (admitted[c] && (!*l || score(&cand[c], floor) < score(*l, floor)))
			*l = &cand[c];
	}
	for (size_t lvl = 0; lvl <= MD_MAX_TERMS; lvl++)
		if (level[lvl] && (!win || score(level[lvl], floor) < prefer * score(win, floor)))
			win = level[lvl];
	return win;
}

/* "a + b*P^2" */
static void terms_text(const struct md_model *m, char *out, size_t len)
{
	size_t at = (size_t)snprintf(out, len, "a");

	for (size_t j = 0; j < m->nterms && at < len; j++)
		at += (size_t)snprintf(out + at, len - at, " + %c*%s", "bc"[j], md_term_name(m->term[j]));
}

/* Why the model cross-validation alone would have chosen (lost) is not the one chosen (won). */
static void explain(struct md_model *won, const struct md_model *lost, size_t n, double spread,
		    double noise, bool exact)
{
	char name[96], b1[48], b2[48], b3[48];

	terms_text(lost, name, sizeof(name));
	md_fmt_bytes(noise, b2, sizeof(b2));
	if (spread < noise) {
		md_fmt_bytes(spread, b1, sizeof(b1));
		snprintf(won->why, sizeof(won->why),
			 "%s refused: the runs differ by %s, within the noise (%s): a constant", name, b1, b2);
	} else if (exact) {
		md_fmt_bytes(lost->loo_max, b1, sizeof(b1));
		snprintf(won->why, sizeof(won->why),
			 "%s refused: %zu runs leave no run to check its %zu-run fits, and they miss a run by %s, above the noise (%s): more rank counts could confirm it",
			 name, n, n - 1, b1, b2);
	} else {
		md_fmt_bytes(lost->loo_rmse, b1, sizeof(b1));
		md_fmt_bytes(won->loo_rmse, b3, sizeof(b3));
		snprintf(won->why, sizeof(won->why),
			 "%s refused: its leave-one-out error (%s) beats this one's (%s) by less than the noise (%s)",
			 name, b1, b3, b2);
	}
}

int md_choose(const struct md_point *pt, size_t n, const struct md_fit_opts *o, struct md_model *best,
	      struct md_model *runner_up)
{
	/*
	 * The basis in the order ties go: the slower-growing terms first (a
	 * steeper one that fits no better predicts more at scale, on nothing).
	 */
	static const enum md_term order[MD_T_NR] = {
		MD_T_P, MD_T_LOG2P, MD_T_SQRTP, MD_T_N_OVER_P, MD_T_N, MD_T_PLOG2P, MD_T_P2,
	};
	enum md_term allowed[MD_T_NR];
	/* 1 + 7 + 21 candidates at most. */
	struct md_model cand[1 + MD_T_NR + MD_T_NR * (MD_T_NR - 1) / 2];
	bool all[sizeof(cand) / sizeof(cand[0])], admitted[sizeof(cand) / sizeof(cand[0])];
	const struct md_model *win, *naive;
	size_t na = 0, nc = 0;
	double ymax = 0, ymin = INFINITY, floor, noise, spread;
	double prefer = o && o->prefer_simpler > 0 ? o->prefer_simpler : 0.9;

	for (size_t i = 0; i < n; i++) {
		ymax = fmax(ymax, pt[i].y);
		ymin = fmin(ymin, pt[i].y);
	}
	spread = n ? ymax - ymin : 0;
	noise = o && o->noise > 0 ? o->noise : md_noise(pt, n);
	/* Exact data: errors of rounding only. */
	floor = 1e-9 * fmax(fabs(ymax), fabs(ymin)) + 1e-6;
	for (size_t t = 0; t < MD_T_NR; t++)
		if (!md_term_uses_size(order[t]) || (o && o->use_size))
			allowed[na++] = order[t];
	if (runner_up)
		memset(runner_up, 0, sizeof(*runner_up));
	if (!md_fit_terms(pt, n, NULL, 0, &cand[nc]))
		nc++;
	for (size_t a = 0; a < na; a++) {
		enum md_term t1[1] = { allowed[a] };

		if (!md_fit_terms(pt, n, t1, 1, &cand[nc]))
			nc++;
		for (size_t b = a + 1; b < na; b++) {
			enum md_term t2[2] = { allowed[a], allowed[b] };

			if (!md_fit_terms(pt, n, t2, 2, &cand[nc]))
				nc++;
		}
	}
	/*
	 * What the runs can support: a term at all only if they differ by more
	 * than the noise; a model whose leave-one-out fits are exact only if
	 * each predicts the run left out to within the noise, or at least
	 * MD_CONFIRM times better than no term does (4 MiB per peer is not
	 * exactly linear in a real MPI job, but far from constant).
	 */
	for (size_t c = 0; c < nc; c++) {
		bool exact = n - 1 == cand[c].nterms + 1;
		bool confirmed = cand[c].loo_max <= noise ||
				 (!cand[0].nterms && cand[c].loo_max * MD_CONFIRM <= cand[0].loo_max);

		all[c] = true;
		admitted[c] = !cand[c].nterms || (spread >= noise && (!exact || confirmed));
	}
	naive = pick(cand, all, nc, floor, prefer);
	win = pick(cand, admitted, nc, noise, prefer);
	if (!win)
		return -1;
	*best = *win;
	best->why[0] = '\0';
	if (naive && !same_terms(naive, win))
		explain(best, naive, n, spread, noise, n - 1 == naive->nterms + 1);
	if (runner_up)
		for (size_t c = 0; c < nc; c++)
			if (admitted[c] && !same_terms(&cand[c], win) &&
			    (!runner_up->valid || score(&cand[c], noise) < score(runner_up, noise)))
				*runner_up = cand[c];
	return 0;
}
