// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "modes_out.h"
#include "tracker.h"

static int write_mpi_calls(FILE *f, struct tracker *t, const struct session *s,
			   struct proc *p)
{
	(void)s;
	for (size_t i = 0; i < p->mpi_fns.n; i++) {
		const struct mpi_fn_stats *s = &p->mpi_fns.s[i];

		if (!s->calls && !s->gained && !s->released)
			continue;
		if (csv_put_rank_pid(f, p->rank, p->pid) ||
		    csv_put_field(f, mpi_catalog_name(&t->mpi_names, (uint32_t)i + 1)))
			return -1;
		/* Calls are counted by --mpi-calls' probes only: unknown is empty, not 0. */
		if (t->opt->mpi_calls)
			fprintf(f, ",%" PRIu64, s->calls);
		else
			fputc(',', f);
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",",
			s->gained, s->released, s->gained - s->released, s->peak);
		/* No growth, no growth times: empty fields rather than a made-up 0. */
		if (s->gained)
			fprintf(f, "%.3f,%.3f\n", s->first_growth, s->last_growth);
		else
			fputs(",\n", f);
	}
	return 0;
}

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
	syms = probes_symbols(&t->probes, m->path);
	fn = syms ? elfsym_name_at(syms, off, &delta) : NULL;
	if (build_id && syms)
		*build_id = syms->build_id;
	if (fn)
		snprintf(out, len, "%s:%s+0x%" PRIx64, basename(copy), fn, delta);
	else
		snprintf(out, len, "%s+0x%" PRIx64, basename(copy), off);
}

void modes_name_heap_site(void *ctx, const struct session *s, const struct proc *p,
			  uint64_t addr, char *out, size_t len, const char **library)
{
	name_site(ctx, &s->comps, p, addr, out, len, library, NULL);
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

/* One row per allocation stack holding memory, now or at the peak. */
static int write_alloc_stacks(FILE *f, struct tracker *t, const struct session *sess,
			      struct proc *p)
{
	for (size_t id = 1; id < p->nstack_figs; id++) {
		const struct stack_fig *fig = &p->stack_figs[id];
		const uint64_t *pcs;
		const char *name;
		char *tmp = NULL;
		int bad;

		if (!alloc_stack_get(&p->stacks, (uint32_t)id, &pcs) ||
		    (fig->rss <= 0 && fig->rss_at_peak <= 0))
			continue;
		name = stack_name(t, sess, p, (uint32_t)id, &tmp);
		bad = !name || csv_put_rank_pid(f, p->rank, p->pid) ||
		      csv_put_field(f, comp_table_name(&sess->comps, fig->owner)) ||
		      fputc(',', f) == EOF || csv_put_field(f, name) ||
		      fprintf(f, ",%lld,%lld,", (long long)fig->rss, (long long)fig->rss_at_peak) < 0 ||
		      csv_put_field(f, stack_build_ids(name)) || fputc('\n', f) == EOF;
		free(tmp);
		if (bad)
			return -1;
	}
	return 0;
}

typedef int (*rows_fn)(FILE *f, struct tracker *t, const struct session *s,
		       struct proc *p);

static bool has_rows(const struct proc *p)
{
	return p->account && p->total.seen;
}

/* One process's rows, or (p NULL) every live process's that has them. */
struct rows_of {
	struct tracker *t;
	struct session *s;
	struct proc *p;
	rows_fn rows;
};

static int put_rows(FILE *f, void *ctx)
{
	struct rows_of *r = ctx;

	if (r->p)
		return r->rows(f, r->t, r->s, r->p);
	for (struct proc *p = r->s->procs.first; p; p = p->next)
		if (has_rows(p) && r->rows(f, r->t, r->s, p))
			return -1;
	return 0;
}

void modes_proc_end(struct tracker *t, struct session *s, struct proc *p)
{
	struct rows_of calls = { t, s, p, write_mpi_calls }, stacks = { t, s, p, write_alloc_stacks };

	if (!s->out_open || !has_rows(p))
		return;
	/* Every mode: growth per MPI function needs no probe (mpi_fn.h). */
	row_spool_add(&s->ended_calls, put_rows, &calls);
	/* Every mode: each request's stack comes with the walk that finds its owner. */
	row_spool_add(&s->ended_stacks, put_rows, &stacks);
}

void modes_write_csv(struct tracker *t, struct session *s)
{
	struct rows_of calls = { t, s, NULL, write_mpi_calls }, stacks = { t, s, NULL, write_alloc_stacks };

	if (!s->out_open)
		return;
	/* Every mode: growth per MPI function needs no probe (mpi_fn.h). */
	row_file_write(&s->out, FILE_MPI_CALLS, MPI_CALLS_HEADER, &s->ended_calls, put_rows, &calls);
	row_file_write(&s->out, FILE_ALLOC_STACKS, ALLOC_STACKS_HEADER, &s->ended_stacks, put_rows,
		       &stacks);
}
