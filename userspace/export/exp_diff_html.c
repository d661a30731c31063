// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff.html: `memattr-bpf diff -o DIR`'s page, one file with the report's
 * style inline (nothing fetched). Read top down: which ranks and
 * components grew or shrank and by how much (the largest change first),
 * what the MPI functions held, then the allocation stacks (and MPI
 * functions, heap-free) whose resident bytes changed most.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define MAX_STACK_ROWS	30
#define BAR_PX		160.0

static const char diff_css[] =
	".up{color:#b03a2e}.down{color:#2e7d32}td.st{text-align:left;white-space:normal;"
	"font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12.5px}";

static void bytes(FILE *f, int64_t v, bool present)
{
	char s[32];

	if (!present) {
		fputs("&ndash;", f);
		return;
	}
	rp_fmt_bytes((double)v, s, sizeof(s));
	fputs(s, f);
}

/* A change cell: signed, red when it grew, green when it shrank. */
static void change(FILE *f, int64_t v)
{
	char s[32];

	if (!v) {
		fputs("<td>0</td>", f);
		return;
	}
	rp_fmt_bytes((double)(v < 0 ? -v : v), s, sizeof(s));
	fprintf(f, "<td class=\"%s\">%c%s</td>", v > 0 ? "up" : "down", v > 0 ? '+' : '-', s);
}

/* A's and B's figure (each where its run has it) and the change: three cells. */
static void cells(FILE *f, int64_t a, bool in_a, int64_t b, bool in_b)
{
	fputs("<td>", f);
	bytes(f, a, in_a);
	fputs("</td><td>", f);
	bytes(f, b, in_b);
	fputs("</td>", f);
	change(f, b - a);
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static int64_t peak_change(const struct ex_diff_comp *c)
{
	return c->b.peak_rss - c->a.peak_rss;
}

/* Components after total by the size of their peak's change, largest first. */
static int cmp_comp(const void *x, const void *y)
{
	int64_t a = abs64(peak_change(*(const struct ex_diff_comp *const *)x));
	int64_t b = abs64(peak_change(*(const struct ex_diff_comp *const *)y));

	return a < b ? 1 : a > b ? -1 : 0;
}

static int rank_table(FILE *f, const struct ex_diff_rank *r)
{
	const struct ex_diff_comp **order;

	fprintf(f, "<h3>rank %d", r->rank);
	if (r->pid_a < 0 || r->pid_b < 0) {
		fprintf(f, ": only in %s</h3>\n", r->pid_a < 0 ? "B" : "A");
		return 0;
	}
	fprintf(f, " <span class=\"note\">(A pid %d, B pid %d)</span></h3>\n", r->pid_a, r->pid_b);
	if (!r->ncomps)
		return 0;
	order = malloc(r->ncomps * sizeof(*order));
	if (!order)
		return -1;
	for (size_t c = 0; c < r->ncomps; c++)
		order[c] = &r->comps[c];
	/* total (the first) stays first. */
	if (r->ncomps > 2)
		qsort(order + 1, r->ncomps - 1, sizeof(*order), cmp_comp);
	fputs("<table><tr><th class=\"l\">component</th><th>peak A</th><th>peak B</th><th>change</th>"
	      "<th>final A</th><th>final B</th><th>change</th><th>peak pss change</th>"
	      "<th>final pss change</th></tr>\n", f);
	for (size_t c = 0; c < r->ncomps; c++) {
		const struct ex_diff_comp *x = order[c];

		fputs("<tr><td class=\"l\">", f);
		rp_xml_escape(f, x->name);
		fputs("</td>", f);
		cells(f, x->a.peak_rss, x->a.present, x->b.peak_rss, x->b.present);
		cells(f, x->a.final_rss, x->a.present, x->b.final_rss, x->b.present);
		change(f, x->b.peak_pss - x->a.peak_pss);
		change(f, x->b.final_pss - x->a.final_pss);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(order);
	return 0;
}

static void fn_table(FILE *f, const struct ex_diff *d)
{
	bool any = false;

	for (size_t i = 0; i < d->nranks; i++)
		for (size_t k = 0; k < d->ranks[i].nfns; k++) {
			const struct ex_diff_fn *fn = &d->ranks[i].fns[k];

			if (!any)
				fputs("<h2>MPI functions</h2>\n<p class=\"note\">What each MPI function's "
				      "requests held of the MPI library's memory at the end "
				      "(<code>mpi_calls.csv</code>'s net bytes).</p>\n<table><tr>"
				      "<th>rank</th><th class=\"l\">function</th><th>held A</th>"
				      "<th>held B</th><th>change</th></tr>\n", f);
			any = true;
			fprintf(f, "<tr><td>%d</td><td class=\"l\">", d->ranks[i].rank);
			rp_xml_escape(f, fn->name);
			fputs("</td>", f);
			cells(f, fn->net_a, fn->in_a, fn->net_b, fn->in_b);
			fputs("</tr>\n", f);
		}
	if (any)
		fputs("</table>\n", f);
}

static int cmp_line_change(const void *x, const void *y)
{
	const struct ex_diff_line *a = x, *b = y;
	int64_t ca = abs64(a->b - a->a), cb = abs64(b->b - b->a);

	if (ca != cb)
		return ca < cb ? 1 : -1;
	return strcmp(a->stack, b->stack);
}

/* The stacks of two profiles whose rss changed, largest change first. */
static int stack_table(FILE *f, const char *title, const struct ex_profile *a,
		       const struct ex_profile *b)
{
	struct ex_diff_line *lines;
	size_t n, shown = 0, changed = 0;
	int64_t top;

	if (ex_diff_lines(a, b, EX_RSS, &lines, &n))
		return -1;
	if (n > 1)
		qsort(lines, n, sizeof(*lines), cmp_line_change);
	for (size_t i = 0; i < n; i++)
		changed += lines[i].a != lines[i].b;
	fprintf(f, "<h2>%s</h2>\n", title);
	if (!changed) {
		fputs("<p class=\"ok\">No stack changed.</p>\n", f);
		ex_diff_lines_free(lines, n);
		return 0;
	}
	top = abs64(lines[0].b - lines[0].a);
	fputs("<table><tr><th class=\"l\">stack (rank; component; frames, outermost first)</th>"
	      "<th>A</th><th>B</th><th>change</th><th class=\"l\"></th></tr>\n", f);
	for (size_t i = 0; i < n && shown < MAX_STACK_ROWS; i++) {
		const struct ex_diff_line *l = &lines[i];
		int64_t c = l->b - l->a;

		if (!c)
			continue;
		shown++;
		fputs("<tr><td class=\"st\">", f);
		rp_xml_escape(f, l->stack);
		fputs("</td>", f);
		cells(f, l->a, true, l->b, true);
		fprintf(f, "<td class=\"l\"><span class=\"%s\" style=\"width:%.0fpx\"></span></td></tr>\n",
			c > 0 ? "bar" : "gbar", top > 0 ? BAR_PX * (double)abs64(c) / (double)top : 0.0);
	}
	fputs("</table>\n", f);
	if (changed > shown)
		fprintf(f, "<p class=\"note\">%zu more stacks changed, less: <code>diff.folded</code> "
			"and <code>diff-end.folded</code> hold every one.</p>\n", changed - shown);
	ex_diff_lines_free(lines, n);
	return 0;
}

int ex_diff_html(FILE *f, const struct ex_diff *d, const char *name_a, const char *name_b,
		 const struct ex_profile *peak_a, const struct ex_profile *peak_b,
		 const struct ex_profile *end_a, const struct ex_profile *end_b)
{
	size_t both = 0;

	for (size_t i = 0; i < d->nranks; i++)
		both += d->ranks[i].pid_a >= 0 && d->ranks[i].pid_b >= 0;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
	      "<title>memattr-bpf diff</title>\n", f);
	fprintf(f, "<style>%s%s</style>\n</head><body><main>\n<h1>Memory diff: A &rarr; B</h1>\n"
		"<p class=\"sub\">A: <code>", rp_html_css, diff_css);
	rp_xml_escape(f, name_a);
	fputs("</code><br>B: <code>", f);
	rp_xml_escape(f, name_b);
	fprintf(f, "</code><br>%zu rank%s in both, matched by rank; resident memory (RSS) by owner, "
		"each component's own peak and its last sample", both, both == 1 ? "" : "s");
	if (d->others_a || d->others_b)
		fprintf(f, "; processes that are no rank left out (A %zu, B %zu)", d->others_a,
			d->others_b);
	fputs(".</p>\n<h2>Per rank and component</h2>\n<p class=\"note\">total first, then the "
	      "components whose peak changed most.</p>\n", f);
	for (size_t i = 0; i < d->nranks; i++)
		if (rank_table(f, &d->ranks[i]))
			return -1;
	fn_table(f, d);
	if (stack_table(f, "Stacks that changed most at each rank's peak", peak_a, peak_b) ||
	    stack_table(f, "Stacks that changed most at the end (mpi by MPI function)", end_a, end_b))
		return -1;
	fputs("</main></body></html>\n", f);
	return ferror(f) ? -1 : 0;
}
