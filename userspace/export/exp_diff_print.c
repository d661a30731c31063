// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What `memattr-bpf diff` shows: text for the terminal (sizes as the
 * report writes them), CSV with the exact bytes for scripts, and the
 * two-column folded form of FlameGraph's difffolded.pl.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

static void fmt_size(int64_t v, bool present, char *out, size_t len)
{
	if (!present)
		snprintf(out, len, "-");
	else
		rp_fmt_bytes((double)v, out, len);
}

/* "+1.5 MiB", "-512 B", "0": a change, signed. */
static void fmt_change(int64_t v, char *out, size_t len)
{
	char b[24];

	if (!v) {
		snprintf(out, len, "0");
		return;
	}
	rp_fmt_bytes((double)(v < 0 ? -v : v), b, sizeof(b));
	snprintf(out, len, "%c%s", v < 0 ? '-' : '+', b);
}

static void comp_line(FILE *f, const struct ex_diff_comp *c)
{
	char pa[32], pb[32], pc[32], fa[32], fb[32], fc[32], sp[32], sf[32];

	fmt_size(c->a.peak_rss, c->a.present, pa, sizeof(pa));
	fmt_size(c->b.peak_rss, c->b.present, pb, sizeof(pb));
	fmt_change(c->b.peak_rss - c->a.peak_rss, pc, sizeof(pc));
	fmt_size(c->a.final_rss, c->a.present, fa, sizeof(fa));
	fmt_size(c->b.final_rss, c->b.present, fb, sizeof(fb));
	fmt_change(c->b.final_rss - c->a.final_rss, fc, sizeof(fc));
	fmt_change(c->b.peak_pss - c->a.peak_pss, sp, sizeof(sp));
	fmt_change(c->b.final_pss - c->a.final_pss, sf, sizeof(sf));
	fprintf(f, "  %-18.40s %10s %10s %11s  %10s %10s %11s  %11s %11s\n", c->name, pa, pb, pc,
		fa, fb, fc, sp, sf);
}

static void fn_lines(FILE *f, const struct ex_diff_rank *r)
{
	if (!r->nfns)
		return;
	fprintf(f, "  %-18s %10s %10s %11s  %10s %10s %11s\n", "MPI function", "held A", "held B",
		"change", "peak A", "peak B", "change");
	for (size_t i = 0; i < r->nfns; i++) {
		const struct ex_diff_fn *fn = &r->fns[i];
		char na[32], nb[32], nc[32], pa[32], pb[32], pc[32];

		fmt_size(fn->net_a, fn->in_a, na, sizeof(na));
		fmt_size(fn->net_b, fn->in_b, nb, sizeof(nb));
		fmt_change(fn->net_b - fn->net_a, nc, sizeof(nc));
		fmt_size(fn->peak_a, fn->in_a && fn->peak_a >= 0, pa, sizeof(pa));
		fmt_size(fn->peak_b, fn->in_b && fn->peak_b >= 0, pb, sizeof(pb));
		fmt_change((fn->peak_b > 0 ? fn->peak_b : 0) - (fn->peak_a > 0 ? fn->peak_a : 0), pc,
			   sizeof(pc));
		fprintf(f, "  %-18.40s %10s %10s %11s  %10s %10s %11s\n", fn->name, na, nb, nc, pa, pb, pc);
	}
}

int ex_diff_text(FILE *f, const struct ex_diff *d, const char *name_a, const char *name_b)
{
	size_t both = 0;

	for (size_t i = 0; i < d->nranks; i++)
		both += d->ranks[i].pid_a >= 0 && d->ranks[i].pid_b >= 0;
	fprintf(f, "A: %s\nB: %s\n%zu rank%s in both", name_a, name_b, both, both == 1 ? "" : "s");
	if (d->others_a || d->others_b)
		fprintf(f, "; processes that are no rank left out (A %zu, B %zu)", d->others_a,
			d->others_b);
	fputs("\n", f);
	for (size_t i = 0; i < d->nranks; i++) {
		const struct ex_diff_rank *r = &d->ranks[i];

		fprintf(f, "\nrank %d", r->rank);
		if (r->pid_a < 0 || r->pid_b < 0) {
			fprintf(f, ": only in %s\n", r->pid_a < 0 ? "B" : "A");
			continue;
		}
		fprintf(f, " (A pid %d, B pid %d)\n", r->pid_a, r->pid_b);
		fprintf(f, "  %-18s %10s %10s %11s  %10s %10s %11s  %11s %11s\n", "component",
			"peak A", "peak B", "change", "final A", "final B", "change", "peak pss",
			"final pss");
		for (size_t c = 0; c < r->ncomps; c++)
			comp_line(f, &r->comps[c]);
		fn_lines(f, r);
	}
	return ferror(f) ? -1 : 0;
}

int ex_diff_csv(FILE *f, const struct ex_diff *d)
{
	fputs("rank,component,peak_rss_a,peak_rss_b,peak_rss_change,final_rss_a,final_rss_b,"
	      "final_rss_change,peak_pss_a,peak_pss_b,peak_pss_change,final_pss_a,final_pss_b,"
	      "final_pss_change\n", f);
	for (size_t i = 0; i < d->nranks; i++) {
		const struct ex_diff_rank *r = &d->ranks[i];

		for (size_t c = 0; c < r->ncomps; c++) {
			const struct ex_diff_comp *x = &r->comps[c];

			fprintf(f, "%d,", r->rank);
			/* Component names come from files: quoted as RFC 4180 wants when needed. */
			if (strpbrk(x->name, ",\"\r\n")) {
				fputc('"', f);
				for (const char *s = x->name; *s; s++) {
					if (*s == '"')
						fputc('"', f);
					fputc(*s, f);
				}
				fputc('"', f);
			} else {
				fputs(x->name, f);
			}
			fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
				",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
				x->a.peak_rss, x->b.peak_rss, x->b.peak_rss - x->a.peak_rss,
				x->a.final_rss, x->b.final_rss, x->b.final_rss - x->a.final_rss,
				x->a.peak_pss, x->b.peak_pss, x->b.peak_pss - x->a.peak_pss,
				x->a.final_pss, x->b.final_pss, x->b.final_pss - x->a.final_pss);
		}
	}
	return ferror(f) ? -1 : 0;
}

int ex_diff_fn_csv(FILE *f, const struct ex_diff *d)
{
	fputs("rank,function,net_bytes_a,net_bytes_b,net_change,peak_bytes_a,peak_bytes_b,peak_change\n", f);
	for (size_t i = 0; i < d->nranks; i++)
		for (size_t k = 0; k < d->ranks[i].nfns; k++) {
			const struct ex_diff_fn *fn = &d->ranks[i].fns[k];
			int64_t pa = fn->peak_a > 0 ? fn->peak_a : 0, pb = fn->peak_b > 0 ? fn->peak_b : 0;

			/* Function names are C identifiers: no quoting needed, but never trust a file. */
			if (strpbrk(fn->name, ",\"\r\n"))
				continue;
			fprintf(f, "%d,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
				d->ranks[i].rank, fn->name, fn->net_a, fn->net_b, fn->net_b - fn->net_a,
				pa, pb, pb - pa);
		}
	return ferror(f) ? -1 : 0;
}

static int cmp_line(const void *x, const void *y)
{
	return strcmp(((const struct ex_diff_line *)x)->stack, ((const struct ex_diff_line *)y)->stack);
}

static int collect(const struct ex_profile *pr, enum ex_value v, bool is_b,
		   struct ex_diff_line **lines, size_t *n)
{
	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];
		char stack[1200], name[512];
		struct ex_diff_line *grown;
		size_t at;

		/* No rank, no match: pids differ from run to run. */
		if (s->v[v] <= 0 || pr->procs[s->proc].rank < 0)
			continue;
		/* Always the rank frame: ranks are what the two runs have in common. */
		ex_proc_label(&pr->procs[s->proc], stack, sizeof(stack));
		for (uint32_t k = 0; k < s->depth; k++) {
			ex_folded_name(ex_str(pr, pr->frames[s->frames[k]].name), name, sizeof(name));
			at = strlen(stack);
			snprintf(stack + at, sizeof(stack) - at, ";%s", name);
		}
		grown = realloc(*lines, (*n + 1) * sizeof(*grown));
		if (!grown)
			return -1;
		*lines = grown;
		grown[*n] = (struct ex_diff_line){ .stack = strdup(stack) };
		if (!grown[*n].stack)
			return -1;
		*(is_b ? &grown[*n].b : &grown[*n].a) = s->v[v];
		(*n)++;
	}
	return 0;
}

int ex_diff_lines(const struct ex_profile *a, const struct ex_profile *b, enum ex_value v,
		  struct ex_diff_line **out, size_t *nout)
{
	struct ex_diff_line *lines = NULL;
	size_t n = 0, w = 0;

	if (collect(a, v, false, &lines, &n) || collect(b, v, true, &lines, &n)) {
		for (size_t i = 0; i < n; i++)
			free(lines[i].stack);
		free(lines);
		return -1;
	}
	if (n > 1)
		qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		if (w && !strcmp(lines[w - 1].stack, lines[i].stack)) {
			lines[w - 1].a += lines[i].a;
			lines[w - 1].b += lines[i].b;
			free(lines[i].stack);
			continue;
		}
		lines[w++] = lines[i];
	}
	*out = lines;
	*nout = w;
	return 0;
}

void ex_diff_lines_free(struct ex_diff_line *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
}

int ex_diff_folded(FILE *f, const struct ex_profile *a, const struct ex_profile *b, enum ex_value v)
{
	struct ex_diff_line *lines;
	size_t n;

	if (ex_diff_lines(a, b, v, &lines, &n))
		return -1;
	/* Stacks of both runs on one line: A's value, then B's (0 where one has none). */
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s %" PRId64 " %" PRId64 "\n", lines[i].stack, lines[i].a, lines[i].b);
	ex_diff_lines_free(lines, n);
	return ferror(f) ? -1 : 0;
}

int ex_diff_top_stack(const struct ex_profile *a, const struct ex_profile *b, int rank,
		      const char *comp, char *out, size_t len, int64_t *growth)
{
	char prefix[256];
	struct ex_diff_line *lines;
	size_t n, plen;
	int found = 0;

	if (ex_diff_lines(a, b, EX_RSS, &lines, &n))
		return -1;
	/* Below the component, not the component's own bytes: "rank R;comp;...". */
	snprintf(prefix, sizeof(prefix), "rank %d;%s;", rank, comp);
	plen = strlen(prefix);
	for (size_t i = 0; i < n; i++) {
		int64_t g = lines[i].b - lines[i].a;

		if (strncmp(lines[i].stack, prefix, plen) || g <= 0 || (found && g <= *growth))
			continue;
		snprintf(out, len, "%s", lines[i].stack + plen);
		*growth = g;
		found = 1;
	}
	ex_diff_lines_free(lines, n);
	return found;
}
