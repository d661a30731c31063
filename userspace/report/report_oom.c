// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report's OOM post-mortem: each kill run_info.csv records (its oom_*
 * keys, columns.h), first on the page, since a killed job's figures are
 * read for why it died before anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "report.h"

#define OOM_SHOWN	8	/* as many as run_info.csv details */
#define OOM_TOP		4	/* components shown per kill */

static const char *kill_get(const struct rp_run *run, unsigned int k, const char *field)
{
	char key[2 * sizeof(run->info->key) + 32];

	snprintf(key, sizeof(key), RUN_OOM_PREFIX "%u_%s", k, field);
	for (size_t i = 0; i < run->ninfo; i++)
		if (!strcmp(run->info[i].key, key))
			return run->info[i].value;
	return NULL;
}

static double num(const char *v)
{
	return v && *v ? strtod(v, NULL) : 0;
}

static void bytes(FILE *f, double b)
{
	char s[32];

	rp_fmt_bytes(b, s, sizeof(s));
	fputs(s, f);
}

/* Figure (growth_bytes, ...) of component name in kill k; NULL: not recorded. */
static const char *comp_get(const struct rp_run *run, unsigned int k, const char *figure,
			    const char *name)
{
	char key[sizeof(run->info->key) + 32];

	snprintf(key, sizeof(key), "%s:%s", figure, name);
	return kill_get(run, k, key);
}

/* The components of figure (rss_bytes, ...) of kill k, in the order written (largest first). */
static void comps(FILE *f, const struct rp_run *run, unsigned int k, const char *figure,
		  const char *growth)
{
	char prefix[sizeof(run->info->key)];
	unsigned int shown = 0;
	size_t plen;

	plen = (size_t)snprintf(prefix, sizeof(prefix), RUN_OOM_PREFIX "%u_%s:", k, figure);
	for (size_t i = 0; i < run->ninfo && shown < OOM_TOP; i++) {
		const char *name = run->info[i].key + plen, *g;

		if (strncmp(run->info[i].key, prefix, plen))
			continue;
		fputs(shown++ ? ", " : " ", f);
		rp_xml_escape(f, name);
		fputc(' ', f);
		bytes(f, num(run->info[i].value));
		g = growth ? comp_get(run, k, growth, name) : NULL;
		if (g) {
			fputs(num(g) >= 0 ? " (+" : " (&minus;", f);
			bytes(f, num(g) >= 0 ? num(g) : -num(g));
			fputc(')', f);
		}
	}
}

void rp_oom_html(FILE *f, const struct rp_run *run)
{
	const char *v = NULL;
	unsigned int n;

	for (size_t i = 0; i < run->ninfo; i++)
		if (!strcmp(run->info[i].key, RUN_OOM_KILLS))
			v = run->info[i].value;
	n = (unsigned int)num(v);
	if (!n)
		return;
	fprintf(f, "<div class=\"warn\"><b>%u process%s killed by the OOM killer.</b>", n,
		n == 1 ? " was" : "es were");
	for (unsigned int k = 1; k <= n && k <= OOM_SHOWN; k++) {
		const char *rank = kill_get(run, k, "rank"), *kind = kill_get(run, k, "kind");
		const char *cg = kill_get(run, k, "cgroup"), *st = kill_get(run, k, "sample_time_s");

		if (!kind)
			break;
		fputs("<br>", f);
		if (rank && *rank) {
			fputs("Rank ", f);
			rp_xml_escape(f, rank);
		} else {
			fputs("Process", f);
		}
		fputs(" (pid ", f);
		rp_xml_escape(f, kill_get(run, k, "pid") ? kill_get(run, k, "pid") : "?");
		fprintf(f, ") at %.3f s: %s limit ", num(kill_get(run, k, "time_s")),
			!strcmp(kind, "cgroup") ? "its cgroup's" : "the node's memory, a global OOM;");
		bytes(f, num(kill_get(run, k, "limit_bytes")));
		if (cg && *cg) {
			fputs(" (<code>", f);
			rp_xml_escape(f, cg);
			fputs("</code>)", f);
		}
		if (st && *st) {
			fprintf(f, ". At its last sample (%.3f s):", num(st));
			comps(f, run, k, "rss_bytes", "growth_bytes");
			fprintf(f, "; growth over the %.1f s before it in brackets. The job then:",
				num(kill_get(run, k, "window_s")));
			comps(f, run, k, "job_rss_bytes", NULL);
		}
		fputc('.', f);
	}
	fputs("</div>\n", f);
}
