// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The nodes of a merged dataset (`memattr-bpf merge`): which node held how
 * much, when. A node's figure is the sum of its processes on the job's
 * sample grid (rp_agg_build over that node), so a node whose ranks peak at
 * different moments is not overstated. Drawn as a node x time heat map
 * (at most MAX_NODE_ROWS rows: the largest nodes, the rest said) and a
 * per-node peak table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define HEAT_COLS	240
#define MAX_NODE_ROWS	256	/* rows of the heat map: the nodes with the largest peaks */
#define MAX_NODE_TABLE	32

struct node_fig {
	size_t node;
	int64_t peak;		/* the node's summed total at its peak */
	double peak_t;
	double mpi_share;	/* mpi / total at that moment */
	size_t procs, ranks;
	size_t top;		/* its process with the largest peak */
	double mean_peak;	/* mean of its ranks' (processes') own peaks */
};

static int cmp_fig(const void *a, const void *b)
{
	const struct node_fig *x = a, *y = b;

	if (x->peak != y->peak)
		return x->peak > y->peak ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* One node's figures, and its row of the heat map (each cell its largest sum). */
static int node_figures(const struct rp_run *run, const struct rp_groups *g,
			const struct rp_pstat *st, double interval, double dur, size_t node,
			struct node_fig *nf, double *row)
{
	struct rp_agg a;
	double sum = 0;
	size_t own = 0;

	memset(nf, 0, sizeof(*nf));
	nf->node = node;
	nf->top = run->nprocs;
	for (size_t i = 0; i < run->nprocs; i++) {
		if (run->procs[i].node != (int)node)
			continue;
		nf->procs++;
		nf->ranks += run->procs[i].rank >= 0;
		if (nf->top == run->nprocs || st[i].peak_total > st[nf->top].peak_total)
			nf->top = i;
		sum += (double)st[i].peak_total;
		own++;
	}
	nf->mean_peak = own ? sum / (double)own : 0;
	if (rp_agg_build(run, interval, (int)node, &a))
		return -1;
	if (a.nb) {
		nf->peak = a.tot[a.peak_b];
		nf->peak_t = (double)a.peak_b * a.interval;
		if (g->mpi >= 0 && nf->peak > 0)
			nf->mpi_share = (double)a.grp[a.peak_b * RP_MAX_GROUPS + (size_t)g->mpi] /
					(double)nf->peak;
	}
	for (size_t k = 0; k < HEAT_COLS; k++)
		row[k] = NAN;
	for (size_t b = a.first_b; b < a.nb; b++) {
		double t = (double)b * a.interval;
		size_t k = dur > 0 ? (size_t)(t / dur * HEAT_COLS) : 0;

		if (k >= HEAT_COLS)
			k = HEAT_COLS - 1;
		if (isnan(row[k]) || (double)a.tot[b] > row[k])
			row[k] = (double)a.tot[b];
	}
	/* Columns narrower than the sample interval: a value holds until the next, up to the node's end. */
	for (size_t k = 1; k < HEAT_COLS; k++)
		if (isnan(row[k]) && (double)k * dur / HEAT_COLS <= (double)(a.nb - 1) * a.interval)
			row[k] = row[k - 1];
	rp_agg_free(&a);
	return 0;
}

static void bytes_cell(FILE *f, double b)
{
	char s[32];

	rp_fmt_bytes(b, s, sizeof(s));
	fprintf(f, "<td>%s</td>", s);
}

static void table(FILE *f, const struct rp_run *run, const struct rp_pstat *st,
		  const struct node_fig *nf, size_t n)
{
	fputs("<table><tr><th class=\"l\">node</th><th>ranks</th><th>processes</th>"
	      "<th>peak (node total)</th><th>at</th><th>MPI share then</th>"
	      "<th>largest process</th><th>its peak</th><th>mean peak per process</th></tr>\n", f);
	for (size_t i = 0; i < n && i < MAX_NODE_TABLE; i++) {
		const struct rp_proc *top = nf[i].top < run->nprocs ? &run->procs[nf[i].top] : NULL;

		fputs("<tr><td class=\"l\">", f);
		rp_xml_escape(f, run->nodes[nf[i].node]);
		fprintf(f, "</td><td>%zu</td><td>%zu</td>", nf[i].ranks, nf[i].procs);
		bytes_cell(f, (double)nf[i].peak);
		fprintf(f, "<td>%.1f s</td><td>%.1f%%</td>", nf[i].peak_t, 100 * nf[i].mpi_share);
		if (top && top->rank >= 0)
			fprintf(f, "<td>rank %d</td>", top->rank);
		else if (top)
			fprintf(f, "<td>pid %d</td>", top->pid);
		else
			fputs("<td>&ndash;</td>", f);
		bytes_cell(f, top ? (double)st[nf[i].top].peak_total : 0);
		bytes_cell(f, nf[i].mean_peak);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (n > MAX_NODE_TABLE)
		fprintf(f, "<p class=\"note\">%zu more nodes with smaller peaks: <code>nodes.csv</code> and "
			"<code>summary.csv</code> have every one.</p>\n", n - MAX_NODE_TABLE);
}

int rp_html_nodes(FILE *f, const struct rp_run *run, const struct rp_groups *g,
		  const struct rp_pstat *st, double interval, double dur, double job_peak_t,
		  double width)
{
	size_t n = run->nnodes, nrow = n < MAX_NODE_ROWS ? n : MAX_NODE_ROWS;
	struct node_fig *nf = calloc(n ? n : 1, sizeof(*nf));
	double *rows = malloc((n ? n : 1) * HEAT_COLS * sizeof(*rows));
	double *shown = malloc((nrow ? nrow : 1) * HEAT_COLS * sizeof(*shown));
	const char **labels = calloc(nrow ? nrow : 1, sizeof(*labels));
	struct rp_heat_chart c = { .width = width, .tmax = dur, .peak_t = job_peak_t,
				   .title = "each node's total resident memory (sum of its processes)" };
	int ret = -1;

	if (!n) {
		ret = 0;
		goto out;
	}
	if (!nf || !rows || !shown || !labels)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (node_figures(run, g, st, interval, dur, i, &nf[i], rows + i * HEAT_COLS))
			goto out;
	qsort(nf, n, sizeof(*nf), cmp_fig);
	/* The heat map in node order (a job's nodes are usually numbered): the largest nrow of them. */
	for (size_t r = 0, k = 0; k < n && r < nrow; k++) {
		bool big = false;

		for (size_t i = 0; i < nrow && !big; i++)
			big = nf[i].node == k;
		if (!big)
			continue;
		labels[r] = run->nodes[k];
		memcpy(shown + r * HEAT_COLS, rows + k * HEAT_COLS, HEAT_COLS * sizeof(*rows));
		r++;
	}
	fprintf(f, "<h2>Nodes</h2>\n<p class=\"note\">%zu nodes, merged from one dataset each. A node's "
		"figure is the sum of its processes at each moment; yellow is much, dark purple little, "
		"grey: no sample.", n);
	if (n > nrow)
		fprintf(f, " The %zu nodes with the largest peaks are drawn.", nrow);
	fputs("</p>\n<div class=\"box\">\n", f);
	if (rp_svg_heat_rows(f, labels, nrow, shown, HEAT_COLS, &c))
		goto out;
	fputs("</div>\n", f);
	table(f, run, st, nf, n);
	ret = 0;
out:
	free(nf);
	free(rows);
	free(shown);
	free(labels);
	return ret;
}
