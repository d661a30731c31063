// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A dataset's chosen moment as stacks. What each figure is, and why some
 * are only at the end:
 *
 * - a component's rss and pss at the sample: the timeline's own numbers;
 *   they add up to the process's total, so the flame graph's width is the
 *   kernel's VmRSS;
 * - mpi_calls.csv gives per MPI function the bytes of the library's
 *   resident memory its requests hold at the end (net_bytes), with no
 *   timeline: so mpi is split by function only at the end, the rest of
 *   mpi (its code, data, and memory no function asked for) on mpi itself;
 *   pss is known per component only, and is split in rss's proportion;
 * - heap_sites.csv gives live bytes per call site at the end, and
 *   heap_sites_peak.csv (runs traced since it exists) those live at the
 *   process's peak, the sample ex_pick chooses for --at peak: requested
 *   bytes, not resident ones, so they are their own sample types
 *   (EX_INUSE..), never added to the resident figures. No other moment
 *   has them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* pss * part / whole, without overflow; whole > 0. */
static int64_t share(int64_t pss, int64_t part, int64_t whole)
{
	return (int64_t)llround((double)pss * ((double)part / (double)whole));
}

static int add_stack(struct ex_profile *pr, uint32_t proc, const char *comp, const char *child,
		     struct ex_sample **out)
{
	long f0 = ex_frame(pr, comp, comp), f1 = -1;
	struct ex_sample *s;

	if (f0 < 0 || (child && (f1 = ex_frame(pr, comp, child)) < 0))
		return -1;
	s = ex_sample_add(pr, proc);
	if (!s)
		return -1;
	s->frames[0] = (uint32_t)f0;
	s->depth = 1;
	if (child) {
		s->frames[1] = (uint32_t)f1;
		s->depth = 2;
	}
	*out = s;
	return 0;
}

/* mpi at the end: one stack per MPI function that holds memory, the rest on mpi. */
static int split_mpi(struct ex_profile *pr, const struct rp_run *run, const struct ex_proc *ep,
		     uint32_t proc, const char *comp, int64_t rss, int64_t pss)
{
	int64_t sum = 0, pss_sum = 0;
	struct ex_sample *s;
	long fn;

	for (size_t i = 0; i < run->ncalls; i++) {
		const struct rp_call_row *c = &run->calls[i];

		/* A function that gave back all it took holds nothing now. */
		if (c->rank != ep->rank || (c->pid >= 0 && c->pid != ep->pid) || c->net <= 0)
			continue;
		sum = rp_sat_add(sum, c->net);
	}
	if (sum > rss) {
		/* More than the library holds: these numbers cannot be placed under it. */
		pr->fn_over++;
		sum = 0;
	}
	for (size_t i = 0; sum && i < run->ncalls; i++) {
		const struct rp_call_row *c = &run->calls[i];

		if (c->rank != ep->rank || (c->pid >= 0 && c->pid != ep->pid) || c->net <= 0)
			continue;
		if (add_stack(pr, proc, comp, c->function, &s) ||
		    (fn = ex_intern(&pr->str, c->function)) < 0)
			return -1;
		s->function = (uint32_t)fn;
		s->v[EX_RSS] = c->net;
		s->v[EX_PSS] = share(pss, c->net, rss);
		pss_sum += s->v[EX_PSS];
		pr->fn_split = true;
	}
	if (rss - sum == 0 && pss - pss_sum <= 0)
		return 0;
	if (add_stack(pr, proc, comp, NULL, &s))
		return -1;
	s->v[EX_RSS] = rss - sum;
	s->v[EX_PSS] = pss - pss_sum > 0 ? pss - pss_sum : 0;
	return 0;
}

static bool stack_of(const struct ex_stack *st, const struct ex_proc *ep, const char *comp)
{
	return st->pid == ep->pid && st->rank == ep->rank && !strcmp(st->component, comp);
}

/* "libc.so.6" of "libc.so.6:malloc+0x1f" or "libc.so.6+0x2724a"; "" for a bare address. */
static void site_file(const char *site, char *out, size_t len)
{
	size_t n = strcspn(site, ":+");

	if (!strncmp(site, "0x", 2) && !site[n])
		n = 0;
	snprintf(out, len, "%.*s", (int)n, site);
}

/*
 * comp at the peak or the end, under its allocation stacks: each stack's
 * frames below the component, each frame in its file's mapping. The rows'
 * figures are the regions' own; when they add up to more than the
 * component (pages the kernel dropped without saying where, read after
 * the rows were), they are scaled down to it, as the tracer scales its
 * components to the kernel's total.
 */
static int split_stacks(struct ex_profile *pr, const struct ex_data *d, const struct ex_proc *ep,
			uint32_t proc, const char *comp, int64_t rss, int64_t pss)
{
	int64_t sum = 0, rss_sum = 0, pss_sum = 0;
	long root = ex_frame(pr, comp, comp);
	struct ex_sample *s;

	if (root < 0)
		return -1;
	for (size_t i = 0; i < d->nstacks; i++)
		if (stack_of(&d->stacks[i], ep, comp))
			sum = rp_sat_add(sum, pr->at == EX_AT_END ? d->stacks[i].rss :
					 d->stacks[i].peak_rss);
	for (size_t i = 0; i < d->nstacks && sum > 0; i++) {
		const struct ex_stack *st = &d->stacks[i];
		int64_t v = pr->at == EX_AT_END ? st->rss : st->peak_rss;
		char *copy, *save = NULL;
		const char *ids;

		if (!stack_of(st, ep, comp) || v <= 0)
			continue;
		if (sum > rss)
			v = (int64_t)((__int128)v * rss / sum);
		s = ex_sample_add(pr, proc);
		copy = strdup(st->frames);
		if (!s || !copy) {
			free(copy);
			return -1;
		}
		s->frames[s->depth++] = (uint32_t)root;
		ids = st->build_ids;
		for (char *f = strtok_r(copy, ";", &save); f && s->depth < EX_MAX_DEPTH;
		     f = strtok_r(NULL, ";", &save)) {
			char file[256], fn[512], hex[160];
			size_t n = ids ? strcspn(ids, ";") : 0;
			long id;

			site_file(f, file, sizeof(file));
			ex_site_frame(f, fn, sizeof(fn));
			/* The frame's file's build ID: the same place in build_ids. */
			snprintf(hex, sizeof(hex), "%.*s", n < sizeof(hex) ? (int)n : 0, ids ? ids : "");
			ids = ids && ids[n] ? ids + n + 1 : NULL;
			id = ex_frame(pr, file[0] ? file : comp, fn);
			if (id < 0 || (file[0] && ex_mapping_build_id(pr, pr->frames[id].mapping, hex))) {
				free(copy);
				return -1;
			}
			s->frames[s->depth++] = (uint32_t)id;
		}
		free(copy);
		s->v[EX_RSS] = v;
		s->v[EX_PSS] = rss > 0 ? share(pss, v, rss) : 0;
		rss_sum += v;
		pss_sum += s->v[EX_PSS];
		pr->stack_split = true;
	}
	if (rss - rss_sum <= 0 && pss - pss_sum <= 0)
		return 0;
	s = ex_sample_add(pr, proc);
	if (!s)
		return -1;
	s->frames[0] = (uint32_t)root;
	s->depth = 1;
	s->v[EX_RSS] = rss - rss_sum > 0 ? rss - rss_sum : 0;
	s->v[EX_PSS] = pss - pss_sum > 0 ? pss - pss_sum : 0;
	return 0;
}

static bool has_stacks(const struct ex_data *d, const struct ex_proc *ep, const char *comp)
{
	for (size_t i = 0; i < d->nstacks; i++)
		if (stack_of(&d->stacks[i], ep, comp))
			return true;
	return false;
}

static bool has_calls(const struct rp_run *run, const struct ex_proc *ep)
{
	for (size_t i = 0; i < run->ncalls; i++)
		if (run->calls[i].rank == ep->rank &&
		    (run->calls[i].pid < 0 || run->calls[i].pid == ep->pid) && run->calls[i].net > 0)
			return true;
	return false;
}

static int proc_components(struct ex_profile *pr, const struct ex_data *d, const struct ex_proc *ep,
			   uint32_t proc)
{
	const struct rp_run *run = &d->run;
	const struct rp_proc *p = &run->procs[ep->pi];
	struct ex_sample *s;

	for (size_t c = 1; c < p->nrss && c < run->ncomp; c++) {
		int64_t rss, pss;

		if (!p->rss[c])
			continue;
		rss = p->rss[c][ep->sample];
		pss = p->pss && p->pss[c] ? p->pss[c][ep->sample] : 0;
		if (!rss && !pss)
			continue;
		/* mpi at the end by MPI function: what the per-function figures promise. */
		if (!strcmp(run->comp[c], "mpi") && has_calls(run, ep)) {
			if (pr->at == EX_AT_END) {
				if (split_mpi(pr, run, ep, proc, run->comp[c], rss, pss))
					return -1;
				continue;
			}
			pr->dropped_fns = true;
		}
		/* The stacks' figures are of the last sample and the total's peak only. */
		if (has_stacks(d, ep, run->comp[c])) {
			if (pr->at != EX_AT_TIME) {
				if (split_stacks(pr, d, ep, proc, run->comp[c], rss, pss))
					return -1;
				continue;
			}
			pr->dropped_stacks = true;
		}
		if (add_stack(pr, proc, run->comp[c], NULL, &s))
			return -1;
		s->v[EX_RSS] = rss;
		s->v[EX_PSS] = pss;
	}
	return 0;
}

void ex_site_frame(const char *site, char *out, size_t len)
{
	const char *colon = strchr(site, ':');
	const char *fn = colon && colon[1] && colon[1] != ':' ? colon + 1 : site;
	const char *plus = strrchr(fn, '+');
	size_t n = strlen(fn);
	char name[1024];

	/* "file:function+0xOFF": the function, so every site in it adds up in one frame. */
	if (fn != site && plus && plus > fn && !strncmp(plus, "+0x", 3) &&
	    strspn(plus + 3, "0123456789abcdefABCDEF") == strlen(plus + 3))
		n = (size_t)(plus - fn);
	snprintf(name, sizeof(name), "%.*s", (int)n, fn);
	ex_demangle(name, out, len);
}

static int proc_sites(struct ex_profile *pr, const struct ex_data *d, const struct ex_proc *ep,
		      uint32_t proc)
{
	for (size_t i = 0; i < d->nsites; i++) {
		const struct ex_site *h = &d->sites[i];
		struct ex_sample *s;
		char fn[EX_SITE_MAX];

		if (h->rank != ep->rank || h->pid != ep->pid)
			continue;
		/* At the peak, a run with no heap_sites_peak.csv has its end's sites only. */
		if (pr->at == EX_AT_TIME || (pr->at == EX_AT_PEAK && !d->has_peak_sites)) {
			pr->dropped_heap = true;
			return 0;
		}
		if (h->at_peak != (pr->at == EX_AT_PEAK))
			continue;
		ex_site_frame(h->site, fn, sizeof(fn));
		if (add_stack(pr, proc, h->library, fn, &s))
			return -1;
		s->v[EX_INUSE] = h->live;
		s->v[EX_INUSE_OBJ] = h->calls > h->frees ? h->calls - h->frees : 0;
		s->v[EX_ALLOC] = h->total;
		s->v[EX_ALLOC_OBJ] = h->calls;
		pr->has_heap = true;
	}
	return 0;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct ex_sample *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	for (uint32_t k = 0; k < x->depth; k++)
		if (x->frames[k] != y->frames[k])
			return x->frames[k] < y->frames[k] ? -1 : 1;
	return 0;
}

/*
 * One sample per stack and process: call sites in one function share a
 * frame, and every format wants each stack once (pprof's readers add them
 * up, a folded file's readers need not). Frames were made in order of
 * first sight, so each process's stacks keep the timeline's order.
 */
static void merge_stacks(struct ex_profile *pr)
{
	size_t w = 0;

	if (pr->nsamples > 1)
		qsort(pr->samples, pr->nsamples, sizeof(*pr->samples), cmp_sample);
	for (size_t i = 0; i < pr->nsamples; i++) {
		if (w && !cmp_sample(&pr->samples[w - 1], &pr->samples[i])) {
			for (int v = 0; v < EX_NVALUES; v++)
				pr->samples[w - 1].v[v] = rp_sat_add(pr->samples[w - 1].v[v],
								     pr->samples[i].v[v]);
			continue;
		}
		pr->samples[w++] = pr->samples[i];
	}
	pr->nsamples = w;
}

static double info_num(const struct rp_run *run, const char *key)
{
	for (size_t i = 0; i < run->ninfo; i++)
		if (!strcmp(run->info[i].key, key)) {
			double v;

			if (!rp_parse_time(run->info[i].value, &v))
				return v;
		}
	return 0;
}

int ex_build(const struct ex_data *d, const struct ex_select *sel, struct ex_profile *pr,
	     char *err, size_t errlen)
{
	const struct rp_run *run = &d->run;

	memset(pr, 0, sizeof(*pr));
	pr->at = sel->at;
	pr->at_time = sel->at_time;
	pr->start_unix = info_num(run, "start_time_unix_s");
	pr->procs = calloc(run->nprocs ? run->nprocs : 1, sizeof(*pr->procs));
	if (!pr->procs || ex_intern(&pr->str, "") != 0)
		goto oom;
	/* pprof takes the first mapping for the program ("File:"): the program's own. */
	if (rp_comp_find(run, "app") >= 0 && ex_mapping(pr, "app") != 0)
		goto oom;
	for (size_t i = 0; i < run->nprocs; i++) {
		const struct rp_proc *p = &run->procs[i];
		struct ex_proc *ep = &pr->procs[pr->nprocs];
		long s;

		if (sel->one_rank && p->rank != sel->rank)
			continue;
		s = ex_pick(p, sel->at, sel->at_time);
		if (s < 0)
			continue;
		*ep = (struct ex_proc){ .rank = p->rank, .pid = p->pid, .pi = i, .sample = (size_t)s,
					.t = p->t[s] };
		if (proc_components(pr, d, ep, (uint32_t)pr->nprocs) ||
		    proc_sites(pr, d, ep, (uint32_t)pr->nprocs))
			goto oom;
		pr->nprocs++;
	}
	merge_stacks(pr);
	if (!pr->nprocs) {
		if (sel->one_rank && sel->at != EX_AT_TIME)
			snprintf(err, errlen, "%s: no rank %d in this run", run->dir, sel->rank);
		else if (sel->one_rank)
			snprintf(err, errlen, "%s: rank %d has no sample at or before %.3f s", run->dir,
				 sel->rank, sel->at_time);
		else
			snprintf(err, errlen, "%s: no process has a sample at or before %.3f s", run->dir,
				 sel->at_time);
		ex_profile_free(pr);
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "%s: out of memory", run->dir);
	ex_profile_free(pr);
	return -1;
}
