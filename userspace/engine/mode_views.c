// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The opt-in modes' figures of a process as the sinks see them (sink.h):
 * its MPI functions, its allocation stacks, its heap call sites, named with
 * the engine's symbol tables. The files are the sinks' (output/).
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "mode_views.h"
#include "tracker.h"

/*
 * "libfoo.so.1:function+0x1a", or the file and offset, or the bare
 * address; *build_id (when asked for) the file's GNU build ID, "" if none.
 */
static void name_site(struct tracker *t, const struct comp_table *comps, const struct proc *p,
		      uint64_t site, char *out, size_t len, const char **library,
		      const char **build_id)
{
	const struct code_map *m = proc_code_map(p, site);
	const struct elfsym_table *syms;
	const char *fn;
	char copy[PATH_MAX];
	uint64_t off, delta;

	*library = "unattributed";
	if (build_id)
		*build_id = "";
	if (!m) {
		snprintf(out, len, "0x%" PRIx64, site);
		return;
	}
	*library = comp_table_name(comps, m->owner);
	off = site - m->start + m->pgoff;
	snprintf(copy, sizeof(copy), "%s", m->path);
	syms = symbol_cache_get(&t->probes.symbols, m->path);
	fn = syms ? elfsym_name_at(syms, off, &delta) : NULL;
	if (build_id && syms)
		*build_id = syms->build_id;
	if (fn)
		snprintf(out, len, "%s:%s+0x%" PRIx64, basename(copy), fn, delta);
	else
		snprintf(out, len, "%s+0x%" PRIx64, basename(copy), off);
}

/*
 * Stack id's frames as a row names them: "file:function+0xOFF" as heap
 * sites are named, outermost first, joined by ';' (the order of a flame
 * graph's stack). Named once per stack and kept: a stack's return
 * addresses do not change, and naming costs a stat and a symbol lookup
 * per frame at every rewrite of the file. A frame in code not known yet
 * (a bare address) is named again next time: the name is *tmp's then,
 * for the caller to free. NULL out of memory. The frames' files' build
 * IDs, joined the same way, follow the name's '\0' in the one allocation
 * (stack_build_ids).
 */
static const char *stack_name(struct tracker *t, const struct session *sess, struct proc *p,
			      uint32_t id, char **tmp)
{
	bool whole = true;
	const char *library, *build_id;
	const uint64_t *pcs;
	unsigned int n = alloc_stack_get(&p->stacks, id, &pcs);
	char frame[PATH_MAX + 128], *name = NULL, *ids = NULL;
	size_t len = 0, ids_len = 0;
	FILE *sf, *idf;

	if (id >= p->nstack_names) {
		size_t want = p->stacks.n + 1;
		char **grown = realloc(p->stack_names, want * sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + p->nstack_names, 0, (want - p->nstack_names) * sizeof(*grown));
		p->stack_names = grown;
		p->nstack_names = want;
	}
	if (p->stack_names[id])
		return p->stack_names[id];
	sf = open_memstream(&name, &len);
	idf = open_memstream(&ids, &ids_len);
	if (!sf || !idf) {
		if (sf && !fclose(sf))
			free(name);
		if (idf && !fclose(idf))
			free(ids);
		return NULL;
	}
	for (unsigned int k = n; k-- > 0;) {
		name_site(t, &sess->comps, p, pcs[k], frame, sizeof(frame), &library, &build_id);
		whole &= proc_code_map(p, pcs[k]) != NULL;
		fprintf(sf, "%s%s", k == n - 1 ? "" : ";", frame);
		fprintf(idf, "%s%s", k == n - 1 ? "" : ";", build_id);
	}
	/* name, its '\0', then the build IDs: one string to keep and free. */
	if (fclose(idf) || fwrite(ids, 1, ids_len + 1, sf) != ids_len + 1) {
		free(ids);
		if (!fclose(sf))
			free(name);
		return NULL;
	}
	free(ids);
	if (fclose(sf)) {
		free(name);
		return NULL;
	}
	if (!whole)
		return *tmp = name;
	p->stack_names[id] = name;
	return name;
}

/* The build IDs kept after a stack's name by stack_name. */
static const char *stack_build_ids(const char *name)
{
	return name + strlen(name) + 1;
}

/* The MPI functions with figures: requests made inside them, or calls. */
static void mpi_fns_of(struct tracker *t, const struct proc *p, struct sink_proc *v)
{
	struct sink_mpi_fn *fns;
	size_t n = 0;

	for (size_t i = 0; i < p->mpi_fns.n; i++) {
		const struct mpi_fn_stats *m = &p->mpi_fns.s[i];

		n += m->calls || m->gained || m->released;
	}
	if (!n || !(fns = calloc(n, sizeof(*fns))))
		return;
	n = 0;
	for (size_t i = 0; i < p->mpi_fns.n; i++) {
		const struct mpi_fn_stats *m = &p->mpi_fns.s[i];

		if (!m->calls && !m->gained && !m->released)
			continue;
		fns[n++] = (struct sink_mpi_fn){
			.name = mpi_catalog_name(&t->mpi_names, (uint32_t)i + 1),
			.calls_counted = t->opt->mpi_calls, .calls = m->calls,
			.gained = m->gained, .released = m->released, .peak = m->peak,
			.first_growth = m->first_growth, .last_growth = m->last_growth,
		};
	}
	v->mpi_fns = fns;
	v->nmpi_fns = n;
}

/*
 * The stacks holding memory, now or at the peak. One allocation: the
 * views, then as many pointers to the names made for this view only
 * (frames in code not known yet, named again next time), freed with it.
 */
static void stacks_of(struct tracker *t, const struct session *s, struct proc *p,
		      struct sink_proc *v)
{
	struct sink_stack *stacks;
	char **tmp;
	size_t n = 0;

	for (size_t id = 1; id < p->nstack_figs; id++) {
		const struct stack_fig *fig = &p->stack_figs[id];
		const uint64_t *pcs;

		n += alloc_stack_get(&p->stacks, (uint32_t)id, &pcs) &&
		     (fig->rss > 0 || fig->rss_at_peak > 0);
	}
	if (!n || !(stacks = calloc(n, sizeof(*stacks) + sizeof(*tmp))))
		return;
	tmp = (char **)(stacks + n);
	n = 0;
	for (size_t id = 1; id < p->nstack_figs; id++) {
		const struct stack_fig *fig = &p->stack_figs[id];
		const uint64_t *pcs;
		const char *name;

		if (!alloc_stack_get(&p->stacks, (uint32_t)id, &pcs) ||
		    (fig->rss <= 0 && fig->rss_at_peak <= 0))
			continue;
		name = stack_name(t, s, p, (uint32_t)id, &tmp[n]);
		stacks[n++] = (struct sink_stack){
			.component = comp_table_name(&s->comps, fig->owner),
			.frames = name, .build_ids = name ? stack_build_ids(name) : NULL,
			.rss = fig->rss, .rss_at_peak = fig->rss_at_peak,
		};
	}
	v->stacks = stacks;
	v->nstacks = n;
}

/*
 * Sites, named: not kept, a site in code loaded since is named better next
 * time. Out of memory: the sites named so far.
 */
static void name_sites(struct tracker *t, const struct session *s, const struct proc *p,
		       const struct heap_site *from, size_t n, const struct sink_heap_site **out,
		       size_t *nout)
{
	struct sink_heap_site *sites;
	char name[PATH_MAX + 128];

	if (!n || !(sites = calloc(n, sizeof(*sites))))
		return;
	*out = sites;
	for (size_t i = 0; i < n; i++) {
		const struct site_stats *st = &from[i].stats;

		name_site(t, &s->comps, p, from[i].addr, name, sizeof(name), &sites[i].library, NULL);
		sites[i].site = strdup(name);
		if (!sites[i].site)
			return;
		sites[i].calls = st->calls;
		sites[i].frees = st->frees;
		sites[i].live_bytes = st->live_bytes;
		sites[i].peak_bytes = st->peak_bytes;
		sites[i].total_bytes = st->total_bytes;
		*nout = i + 1;
	}
}

/* The heap sites now, and those live at the total's peak. */
static void sites_of(struct tracker *t, const struct session *s, const struct proc *p,
		     struct sink_proc *v)
{
	if (!t->opt->heap)
		return;
	name_sites(t, s, p, p->heap_sites, p->nheap_sites, &v->heap_sites, &v->nheap_sites);
	name_sites(t, s, p, p->heap_peak.sites, p->heap_peak.n, &v->heap_peak_sites,
		   &v->nheap_peak_sites);
}

void mode_view_fill(void *ctx, const struct session *s, struct proc *p, struct sink_proc *v)
{
	struct tracker *t = ctx;

	mpi_fns_of(t, p, v);
	stacks_of(t, s, p, v);
	sites_of(t, s, p, v);
}

static void free_sites(const struct sink_heap_site *sites, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)sites[i].site);
	free((void *)sites);
}

void mode_view_free(struct sink_proc *v)
{
	if (v->stacks) {
		char **tmp = (char **)((struct sink_stack *)v->stacks + v->nstacks);

		for (size_t i = 0; i < v->nstacks; i++)
			free(tmp[i]);
		free((void *)v->stacks);
	}
	free_sites(v->heap_sites, v->nheap_sites);
	free_sites(v->heap_peak_sites, v->nheap_peak_sites);
	free((void *)v->mpi_fns);
	v->stacks = NULL;
	v->heap_sites = v->heap_peak_sites = NULL;
	v->mpi_fns = NULL;
	v->nstacks = v->nheap_sites = v->nheap_peak_sites = v->nmpi_fns = 0;
}
