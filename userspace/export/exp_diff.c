// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Two runs side by side: per rank (matched by rank number, so that runs of
 * one program at two sizes compare their common ranks), per component its
 * own peak and its last value, rss and pss, from the timelines; per MPI
 * function what mpi_calls.csv says it held. Processes that are not ranks
 * have no stable identity across runs (pids differ) and are left out.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"

static void fig_of(const struct rp_proc *p, size_t c, struct ex_fig *f)
{
	memset(f, 0, sizeof(*f));
	if (c >= p->nrss || !p->rss[c] || !p->n)
		return;
	f->present = true;
	/* Over every sample of the file, also when ex_load thinned the timeline. */
	f->peak_rss = rp_proc_peak(p, c, false);
	f->peak_pss = rp_proc_peak(p, c, true);
	f->final_rss = p->rss[c][p->n - 1];
	f->final_pss = p->pss && p->pss[c] ? p->pss[c][p->n - 1] : 0;
}

static struct ex_diff_comp *comp_slot(struct ex_diff_rank *r, const char *name)
{
	struct ex_diff_comp *grown;

	for (size_t i = 0; i < r->ncomps; i++)
		if (!strcmp(r->comps[i].name, name))
			return &r->comps[i];
	grown = realloc(r->comps, (r->ncomps + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	r->comps = grown;
	memset(&grown[r->ncomps], 0, sizeof(*grown));
	snprintf(grown[r->ncomps].name, sizeof(grown->name), "%s", name);
	return &grown[r->ncomps++];
}

static struct ex_diff_fn *fn_slot(struct ex_diff_rank *r, const char *name)
{
	struct ex_diff_fn *grown;

	for (size_t i = 0; i < r->nfns; i++)
		if (!strcmp(r->fns[i].name, name))
			return &r->fns[i];
	grown = realloc(r->fns, (r->nfns + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	r->fns = grown;
	memset(&grown[r->nfns], 0, sizeof(*grown));
	snprintf(grown[r->nfns].name, sizeof(grown->name), "%s", name);
	return &grown[r->nfns++];
}

/* The rank's entry, made when new; ranks stay sorted (both runs' procs are). */
static struct ex_diff_rank *rank_slot(struct ex_diff *d, int rank)
{
	struct ex_diff_rank *grown;
	size_t at = 0;

	while (at < d->nranks && d->ranks[at].rank < rank)
		at++;
	if (at < d->nranks && d->ranks[at].rank == rank)
		return &d->ranks[at];
	grown = realloc(d->ranks, (d->nranks + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	d->ranks = grown;
	memmove(&grown[at + 1], &grown[at], (d->nranks - at) * sizeof(*grown));
	memset(&grown[at], 0, sizeof(*grown));
	grown[at].rank = rank;
	grown[at].pid_a = grown[at].pid_b = -1;
	d->nranks++;
	return &grown[at];
}

static int add_run(struct ex_diff *d, const struct ex_data *x, bool is_b)
{
	const struct rp_run *run = &x->run;

	for (size_t i = 0; i < run->nprocs; i++) {
		const struct rp_proc *p = &run->procs[i];
		struct ex_diff_rank *r;

		if (p->rank < 0) {
			*(is_b ? &d->others_b : &d->others_a) += 1;
			continue;
		}
		r = rank_slot(d, p->rank);
		if (!r)
			return -1;
		*(is_b ? &r->pid_b : &r->pid_a) = p->pid;
		/* Component 0 is total in every run: it comes first. */
		for (size_t c = 0; c < run->ncomp && c < p->nrss; c++) {
			struct ex_diff_comp *dc;

			if (!p->rss[c])
				continue;
			dc = comp_slot(r, run->comp[c]);
			if (!dc)
				return -1;
			fig_of(p, c, is_b ? &dc->b : &dc->a);
		}
	}
	for (size_t i = 0; i < run->ncalls; i++) {
		const struct rp_call_row *c = &run->calls[i];
		struct ex_diff_rank *r;
		struct ex_diff_fn *fn;

		if (c->rank < 0)
			continue;
		r = rank_slot(d, c->rank);
		fn = r ? fn_slot(r, c->function) : NULL;
		if (!fn)
			return -1;
		if (is_b) {
			fn->in_b = true;
			fn->net_b = c->net;
			fn->peak_b = c->peak;
		} else {
			fn->in_a = true;
			fn->net_a = c->net;
			fn->peak_a = c->peak;
		}
	}
	return 0;
}

int ex_diff_build(const struct ex_data *a, const struct ex_data *b, struct ex_diff *d)
{
	memset(d, 0, sizeof(*d));
	if (add_run(d, a, false) || add_run(d, b, true)) {
		ex_diff_free(d);
		return -1;
	}
	return 0;
}

void ex_diff_free(struct ex_diff *d)
{
	for (size_t i = 0; i < d->nranks; i++) {
		free(d->ranks[i].comps);
		free(d->ranks[i].fns);
	}
	free(d->ranks);
	memset(d, 0, sizeof(*d));
}

/* The largest growth past limit_pct among the components (want_total: of total only). */
static bool over(const struct ex_diff *d, double limit_pct, bool want_total, struct ex_growth *g)
{
	bool found = false;

	for (size_t i = 0; i < d->nranks; i++) {
		const struct ex_diff_rank *r = &d->ranks[i];
		int64_t base;

		/* A rank only one run has cannot have grown: there is nothing to compare. */
		if (r->pid_a < 0 || r->pid_b < 0 || !r->ncomps || !r->comps[0].a.present)
			continue;
		base = r->comps[0].a.peak_rss;
		for (size_t c = 0; c < r->ncomps; c++) {
			const struct ex_diff_comp *dc = &r->comps[c];
			int64_t growth = dc->b.peak_rss - dc->a.peak_rss;
			double pct;

			if ((c == 0) != want_total || growth <= 0)
				continue;
			pct = base > 0 ? 100.0 * (double)growth / (double)base : 1e300;
			if (pct <= limit_pct || (found && pct <= g->pct))
				continue;
			*g = (struct ex_growth){ .rank = r->rank, .component = dc->name,
						 .growth = growth, .base = base, .pct = pct };
			found = true;
		}
	}
	return found;
}

bool ex_diff_over(const struct ex_diff *d, double limit_pct, struct ex_growth *g)
{
	/*
	 * A component is named before total: total grows by the sum of its
	 * parts, and what to fix is the part. Total alone is named when growth
	 * spread over several components passed the limit with none of them.
	 */
	return over(d, limit_pct, false, g) || over(d, limit_pct, true, g);
}
