// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `memattr-bpf model` prints: per component, the model chosen, each
 * term with what it means in words and units, the prediction in MiB per
 * rank with its interval, and why the fit may be weak; and the same as a
 * CSV (-o FILE), one row per component.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "report.h"

#define MIB	(1024.0 * 1024.0)
/* Weak when: fewer runs, LOO error above this share of the mean, this much extrapolation. */
#define WEAK_RUNS	5
#define WEAK_LOO	0.10
#define WEAK_EXTRAP	4.0
#define WEAK_ALT	0.25	/* the next best model predicts this much apart */

void md_fmt_bytes(double b, char *out, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double a = fabs(b);
	int u = -1;

	if (a < 0.01) {
		snprintf(out, len, "0 B");	/* rounding noise of an exact fit */
		return;
	}
	if (a < 1024) {
		snprintf(out, len, a >= 100 ? "%.0f B" : "%.3g B", b);
		return;
	}
	while (a >= 1024 && u < 3) {
		a /= 1024;
		b /= 1024;
		u++;
	}
	snprintf(out, len, a < 10 ? "%.2f %s" : "%.1f %s", b, unit[u]);
}

/* "a + b*P + c*log2 P" */
static void model_name(const struct md_model *m, char *out, size_t len)
{
	size_t at = (size_t)snprintf(out, len, "a");

	for (size_t j = 0; j < m->nterms && at < len; j++)
		at += (size_t)snprintf(out + at, len - at, " + %c*%s", "bc"[j], md_term_name(m->term[j]));
}

static void add_weak(struct md_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_weak(struct md_result *r, const char *fmt, ...)
{
	size_t at = strlen(r->weak);
	char part[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(part, sizeof(part), fmt, ap);
	va_end(ap);
	snprintf(r->weak + at, sizeof(r->weak) - at, "%s%s", at ? "; " : "", part);
}

void md_assess(struct md_result *r, size_t nruns, double pred_p, double pred_n)
{
	const struct md_model *m = &r->m;
	double rel = m->loo_rmse / fmax(fabs(m->mean_y), 1);
	char name[96];

	r->weak[0] = '\0';
	if (nruns < WEAK_RUNS)
		add_weak(r, "only %zu runs", nruns);
	if (rel > WEAK_LOO)
		add_weak(r, "leave-one-out error %.0f%% of the mean", 100 * rel);
	if (!r->predict)
		return;
	if (r->extrap > WEAK_EXTRAP)
		add_weak(r, "extrapolates %.0fx beyond the largest run", r->extrap);
	if (r->pred < 0)
		add_weak(r, "the model is negative there (%.0f B: shown as 0)", r->pred);
	if (r->half >= 0 && r->pred > 0 && r->half > 0.5 * r->pred)
		add_weak(r, "the interval is wider than half the prediction");
	if (r->summed) {
		if (fabs(r->alone_pred - r->pred) > WEAK_ALT * fmax(fabs(r->pred), 1))
			add_weak(r, "fitted on its own, the total predicts %.1f MiB: the components grow by laws one model of their sum does not follow",
				 r->alone_pred / MIB);
		return;
	}
	if (r->runner_up.valid) {
		double alt = md_eval(&r->runner_up, pred_p, pred_n);

		if (fabs(alt - r->pred) > WEAK_ALT * fmax(fabs(r->pred), 1)) {
			model_name(&r->runner_up, name, sizeof(name));
			add_weak(r, "the next best model (%s) predicts %.1f MiB", name, alt / MIB);
		}
	}
}

static const char *stat_words(const struct md_report *rep)
{
	if (rep->stat == MD_STAT_MEAN)
		return rep->use_pss ? "the ranks' mean peak pss" : "the ranks' mean peak rss";
	return rep->use_pss ? "the largest rank's peak pss" : "the largest rank's peak rss";
}

static int largest_ranks(const struct md_report *rep)
{
	int p = 0;

	for (size_t i = 0; i < rep->nruns; i++)
		if (rep->runs[i].ranks > p)
			p = rep->runs[i].ranks;
	return p;
}

static void print_header(FILE *f, const struct md_report *rep)
{
	fprintf(f, "memattr-bpf model: %s, %zu runs at ", rep->app && rep->app[0] ? rep->app : "(program not named)",
		rep->nruns);
	for (size_t i = 0; i < rep->nruns; i++) {
		fprintf(f, "%s%d", i ? ", " : "", rep->runs[i].ranks);
		if (rep->use_size)
			fprintf(f, " (N=%g)", rep->runs[i].size);
	}
	fprintf(f, " ranks; fitting %s per component\n", stat_words(rep));
	fprintf(f, "models: a + at most 2 terms of P, log2 P, P log2 P, P^2, sqrt P%s, chosen by leave-one-out cross-validation\n",
		rep->use_size ? ", N/P, N" : "");
	if (rep->pred_p > 0) {
		fprintf(f, "prediction at %.0f ranks", rep->pred_p);
		if (rep->use_size)
			fprintf(f, ", N=%g", rep->pred_n);
		fputs(", per rank: 95% prediction interval (Student t on the fit's residuals, runs - terms - 1 degrees of freedom)\n", f);
	}
}

static void print_result(FILE *f, const struct md_report *rep, const struct md_result *r)
{
	const struct md_model *m = &r->m;
	char b1[48], b2[48], name[96];

	md_fmt_bytes(r->largest, b1, sizeof(b1));
	fprintf(f, "\n%s: %s per rank at %d ranks\n", r->name, b1, largest_ranks(rep));
	model_name(m, name, sizeof(name));
	md_fmt_bytes(m->loo_rmse, b1, sizeof(b1));
	fprintf(f, "  model %s: leave-one-out error %s (%.1f%% of the mean)", name, b1,
		100 * m->loo_rmse / fmax(fabs(m->mean_y), 1));
	if (r->runner_up.valid) {
		model_name(&r->runner_up, name, sizeof(name));
		md_fmt_bytes(r->runner_up.loo_rmse, b2, sizeof(b2));
		fprintf(f, "; next best %s: %s", name, b2);
	}
	fputc('\n', f);
	if (m->why[0])
		fprintf(f, "  %s\n", m->why);
	md_fmt_bytes(m->c0, b1, sizeof(b1));
	fprintf(f, "  %s: %s per rank (constant)\n", r->name, b1);
	for (size_t j = 0; j < m->nterms; j++) {
		md_fmt_bytes(m->coef[j], b1, sizeof(b1));
		fprintf(f, "  %s: %s%s per rank %s (%s term)\n", r->name, m->coef[j] >= 0 ? "+" : "", b1,
			md_term_meaning(m->term[j]), md_term_name(m->term[j]));
	}
	if (r->predict) {
		fprintf(f, "  at %.0f ranks: %.2f MiB per rank", rep->pred_p, fmax(r->pred, 0) / MIB);
		if (r->half >= 0)
			fprintf(f, ", 95%% interval %.2f .. %.2f MiB", fmax(r->pred - r->half, 0) / MIB,
				fmax(r->pred + r->half, 0) / MIB);
		else
			fputs(", no interval (no degree of freedom left)", f);
		fputc('\n', f);
	}
	if (r->summed)
		fprintf(f, "  (the sum of the components' predictions, each its largest rank's: a bound when they peak apart;\n"
			"   the total's own model above predicts %.2f MiB)\n", fmax(r->alone_pred, 0) / MIB);
	if (r->weak[0])
		fprintf(f, "  weak: %s\n", r->weak);
}

int md_print_text(FILE *f, const struct md_report *rep)
{
	char b[48];
	size_t shown = 0;

	print_header(f, rep);
	for (size_t i = 0; i < rep->nres; i++) {
		if (i && rep->res[i].largest < rep->small_below)
			continue;
		print_result(f, rep, &rep->res[i]);
		shown++;
	}
	if (rep->nres > shown) {
		md_fmt_bytes(rep->small_below, b, sizeof(b));
		fprintf(f, "\n(%zu smaller component%s, under %s per rank, %s in the CSV (-o FILE), or shown with --all)\n",
			rep->nres - shown, rep->nres - shown == 1 ? "" : "s", b,
			rep->nres - shown == 1 ? "is" : "are");
	}
	return ferror(f) ? -1 : 0;
}

/* A CSV field: quoted when it holds a comma, quote or line break. */
static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

#define CSV_HEADER_MODEL "component,statistic,model,runs,loo_rmse_bytes,loo_relative_error," \
	"constant_bytes,term1,coefficient1,term2,coefficient2,largest_run_ranks,largest_run_bytes," \
	"predict_ranks,predict_size,predict_bytes,interval_low_bytes,interval_high_bytes," \
	"interval,extrapolation,weak,prediction_from,fitted_alone_bytes,refused"

int md_print_csv(FILE *f, const struct md_report *rep)
{
	char name[96];

	fputs(CSV_HEADER_MODEL "\n", f);
	for (size_t i = 0; i < rep->nres; i++) {
		const struct md_result *r = &rep->res[i];
		const struct md_model *m = &r->m;

		csv_str(f, r->name);
		fprintf(f, ",%s_%s,", rep->stat == MD_STAT_MEAN ? "mean" : "max", rep->use_pss ? "pss" : "rss");
		model_name(m, name, sizeof(name));
		csv_str(f, name);
		fprintf(f, ",%zu,%.0f,%.4f,%.0f", m->n, m->loo_rmse,
			m->loo_rmse / fmax(fabs(m->mean_y), 1), m->c0);
		for (size_t j = 0; j < MD_MAX_TERMS; j++) {
			if (j < m->nterms)
				fprintf(f, ",%s,%.6g", md_term_name(m->term[j]), m->coef[j]);
			else
				fputs(",,", f);
		}
		fprintf(f, ",%d,%.0f", largest_ranks(rep), r->largest);
		if (r->predict) {
			fprintf(f, ",%.0f,", rep->pred_p);
			if (rep->use_size)
				fprintf(f, "%g", rep->pred_n);
			fprintf(f, ",%.0f", r->pred);
			if (r->half >= 0)
				fprintf(f, ",%.0f,%.0f,%s", r->pred - r->half, r->pred + r->half,
					r->summed ? "t95_quadrature" : "t95");
			else
				fputs(",,,", f);
			fprintf(f, ",%.2f,", r->extrap);
		} else {
			fputs(",,,,,,,,", f);
		}
		csv_str(f, r->weak);
		if (r->summed)
			fprintf(f, ",sum_of_components,%.0f,", r->alone_pred);
		else
			fputs(r->predict ? ",model,," : ",,,", f);
		csv_str(f, m->why);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

int md_print_html(FILE *f, const struct md_report *rep)
{
	char b[48], name[96];
	size_t hidden = 0;

	fputs("<h2 id=\"model\">Memory model</h2>\n<p>", f);
	rp_xml_escape(f, rep->app && rep->app[0] ? rep->app : "(program not named)");
	fprintf(f, ": %zu runs at ", rep->nruns);
	for (size_t i = 0; i < rep->nruns; i++) {
		fprintf(f, "%s%d", i ? ", " : "", rep->runs[i].ranks);
		if (rep->use_size)
			fprintf(f, " (N=%g)", rep->runs[i].size);
	}
	fprintf(f, " ranks (");
	for (size_t i = 0; i < rep->nruns; i++) {
		fputs(i ? ", " : "", f);
		fputs("<code>", f);
		rp_xml_escape(f, rep->runs[i].dir);
		fputs("</code>", f);
	}
	fprintf(f, "); %s per component, fitted as a + at most 2 terms of P, log2 P, P log2 P, P^2, sqrt P%s, "
		"chosen by leave-one-out cross-validation among the terms the runs can confirm "
		"(<code>memattr-bpf model</code> predicts at a scale: <code>--predict RANKS</code>).</p>\n",
		stat_words(rep), rep->use_size ? ", N/P, N" : "");
	fputs("<table>\n<tr><th class=\"l\">component</th><th>at the largest run</th><th class=\"l\">model</th>"
	      "<th class=\"l\">terms</th><th>leave-one-out error</th><th class=\"l\">notes</th></tr>\n", f);
	for (size_t i = 0; i < rep->nres; i++) {
		const struct md_result *r = &rep->res[i];
		const struct md_model *m = &r->m;

		if (i && r->largest < rep->small_below) {
			hidden++;
			continue;
		}
		fputs("<tr><td class=\"l\">", f);
		rp_xml_escape(f, r->name);
		md_fmt_bytes(r->largest, b, sizeof(b));
		fprintf(f, "</td><td>%s</td><td class=\"l\">", b);
		model_name(m, name, sizeof(name));
		rp_xml_escape(f, name);
		md_fmt_bytes(m->c0, b, sizeof(b));
		fprintf(f, "</td><td class=\"l\">a = %s per rank", b);
		for (size_t j = 0; j < m->nterms; j++) {
			md_fmt_bytes(m->coef[j], b, sizeof(b));
			fprintf(f, "<br>%c: %s%s per rank ", "bc"[j], m->coef[j] >= 0 ? "+" : "", b);
			rp_xml_escape(f, md_term_meaning(m->term[j]));
			fputs(" (", f);
			rp_xml_escape(f, md_term_name(m->term[j]));
			fputs(")", f);
		}
		md_fmt_bytes(m->loo_rmse, b, sizeof(b));
		fprintf(f, "</td><td>%s (%.1f%%)</td><td class=\"l\">", b, 100 * m->loo_rmse / fmax(fabs(m->mean_y), 1));
		if (r->weak[0]) {
			fputs("weak: ", f);
			rp_xml_escape(f, r->weak);
		}
		if (m->why[0]) {
			fputs(r->weak[0] ? "<br>" : "", f);
			rp_xml_escape(f, m->why);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (hidden) {
		md_fmt_bytes(rep->small_below, b, sizeof(b));
		fprintf(f, "<p class=\"note\">%zu smaller component%s (under %s per rank) not shown: "
			"<code>memattr-bpf model --all</code> lists them.</p>\n", hidden, hidden == 1 ? "" : "s", b);
	}
	return ferror(f) ? -1 : 0;
}
