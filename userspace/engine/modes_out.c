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

static int write_heap_sites(FILE *f, struct tracker *t, const struct session *sess,
			    struct proc *p)
{
	for (size_t i = 0; i < p->nheap_sites; i++) {
		const struct site_stats *s = &p->heap_sites[i].stats;
		const char *library;
		char site[PATH_MAX + 128];

		name_site(t, &sess->comps, p, p->heap_sites[i].addr, site, sizeof(site), &library,
			  NULL);
		if (csv_put_rank_pid(f, p->rank, p->pid) || csv_put_field(f, library) ||
		    fputc(',', f) == EOF || csv_put_field(f, site))
			return -1;
		fprintf(f, ",%llu,%llu,%lld,%lld,%llu\n", (unsigned long long)s->calls,
			(unsigned long long)s->frees, (long long)s->live_bytes,
			(long long)s->peak_bytes, (unsigned long long)s->total_bytes);
	}
	return 0;
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

/* An ended process's rows into the spool; a row that cannot be kept marks the file incomplete. */
static void spool_rows(struct tracker *t, struct session *s, struct proc *p, FILE **spool,
		       int *err, rows_fn rows)
{
	if (*err)
		return;
	if (!*spool)
		*spool = tmpfile();
	errno = 0;
	if (!*spool || rows(*spool, t, s, p) || fflush(*spool))
		*err = errno ? errno : EIO;
}

void modes_proc_end(struct tracker *t, struct session *s, struct proc *p)
{
	if (!s->out_open || !has_rows(p))
		return;
	/* Every mode: growth per MPI function needs no probe (mpi_fn.h). */
	spool_rows(t, s, p, &s->ended_calls, &s->ended_calls_err, write_mpi_calls);
	/* Every mode: each request's stack comes with the walk that finds its owner. */
	spool_rows(t, s, p, &s->ended_stacks, &s->ended_stacks_err, write_alloc_stacks);
	if (t->opt->heap)
		spool_rows(t, s, p, &s->ended_sites, &s->ended_sites_err, write_heap_sites);
}

static int copy_spool(FILE *from, int err, FILE *to)
{
	char buf[65536];
	size_t n;

	if (err) {
		errno = err;
		return -1;
	}
	if (!from)
		return 0;
	fflush(from);
	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			break;
	fseek(from, 0, SEEK_END);
	return ferror(from) || ferror(to) ? -1 : 0;
}

/* name whole, or not at all (the previous one stays, no temporary file is left). */
static int write_file(struct tracker *t, struct session *s, const char *name,
		      const char *header, FILE *spool, int spool_err, rows_fn rows)
{
	char tmp[256];
	FILE *f = outdir_begin_replace(&s->out, name, tmp, sizeof(tmp));

	if (!f)
		return -1;
	if (fprintf(f, "%s\n", header) < 0 || copy_spool(spool, spool_err, f))
		goto fail;
	for (struct proc *p = s->procs.first; p; p = p->next)
		if (has_rows(p) && rows(f, t, s, p))
			goto fail;
	return outdir_commit(&s->out, f, tmp, name);
fail:
	outdir_abort(&s->out, f, tmp);
	return -1;
}

static void write_one(struct tracker *t, struct session *s, const char *name, const char *header,
		      FILE *spool, int spool_err, rows_fn rows)
{
	errno = 0;
	if (write_file(t, s, name, header, spool, spool_err, rows))
		outdir_write_failed(&s->out, name, errno ? errno : EIO,
				    spool_err ? "ended processes' rows are lost" : NULL);
}

void modes_write_csv(struct tracker *t, struct session *s)
{
	if (!s->out_open)
		return;
	/* Every mode: growth per MPI function needs no probe (mpi_fn.h). */
	write_one(t, s, FILE_MPI_CALLS, MPI_CALLS_HEADER, s->ended_calls,
		  s->ended_calls_err, write_mpi_calls);
	write_one(t, s, FILE_ALLOC_STACKS, ALLOC_STACKS_HEADER, s->ended_stacks,
		  s->ended_stacks_err, write_alloc_stacks);
	if (t->opt->heap)
		write_one(t, s, FILE_HEAP_SITES, HEAP_SITES_HEADER, s->ended_sites,
			  s->ended_sites_err, write_heap_sites);
}
