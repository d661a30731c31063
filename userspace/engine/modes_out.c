// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <inttypes.h>
#include <libgen.h>
#include <string.h>

#include "modes_out.h"
#include "tracker.h"

static int write_mpi_calls(FILE *f, struct tracker *t, const struct session *s,
			   const struct proc *p)
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

/* "libfoo.so.1:function+0x1a", or the file and offset, or the bare address. */
static void name_site(struct tracker *t, const struct comp_table *comps, const struct proc *p,
		      uint64_t site,
		      char *out, size_t len, const char **library)
{
	const struct code_map *m = proc_code_map(p, site);
	const struct elfsym_table *syms;
	const char *fn;
	char copy[PATH_MAX];
	uint64_t off, delta;

	*library = "unattributed";
	if (!m) {
		snprintf(out, len, "0x%" PRIx64, site);
		return;
	}
	*library = comp_table_name(comps, m->owner);
	off = site - m->start + m->pgoff;
	snprintf(copy, sizeof(copy), "%s", m->path);
	syms = probes_symbols(&t->probes, m->path);
	fn = syms ? elfsym_name_at(syms, off, &delta) : NULL;
	if (fn)
		snprintf(out, len, "%s:%s+0x%" PRIx64, basename(copy), fn, delta);
	else
		snprintf(out, len, "%s+0x%" PRIx64, basename(copy), off);
}

static int write_heap_sites(FILE *f, struct tracker *t, const struct session *sess,
			    const struct proc *p)
{
	for (size_t i = 0; i < p->nheap_sites; i++) {
		const struct site_stats *s = &p->heap_sites[i].stats;
		const char *library;
		char site[PATH_MAX + 128];

		name_site(t, &sess->comps, p, p->heap_sites[i].addr, site, sizeof(site), &library);
		if (csv_put_rank_pid(f, p->rank, p->pid) || csv_put_field(f, library) ||
		    fputc(',', f) == EOF || csv_put_field(f, site))
			return -1;
		fprintf(f, ",%llu,%llu,%lld,%lld,%llu\n", (unsigned long long)s->calls,
			(unsigned long long)s->frees, (long long)s->live_bytes,
			(long long)s->peak_bytes, (unsigned long long)s->total_bytes);
	}
	return 0;
}

typedef int (*rows_fn)(FILE *f, struct tracker *t, const struct session *s,
		       const struct proc *p);

static bool has_rows(const struct proc *p)
{
	return p->account && p->total.seen;
}

void modes_proc_end(struct tracker *t, struct session *s, const struct proc *p)
{
	if (!s->out_open || !has_rows(p))
		return;
	if (!s->ended_calls)
		s->ended_calls = tmpfile();
	if (s->ended_calls)
		write_mpi_calls(s->ended_calls, t, s, p);
	if (t->opt->heap) {
		if (!s->ended_sites)
			s->ended_sites = tmpfile();
		if (s->ended_sites)
			write_heap_sites(s->ended_sites, t, s, p);
	}
}

static int copy_spool(FILE *from, FILE *to)
{
	char buf[65536];
	size_t n;

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

static int write_file(struct tracker *t, struct session *s, const char *name,
		      const char *header, FILE *spool, rows_fn rows)
{
	char tmp[256];
	FILE *f = outdir_begin_replace(&s->out, name, tmp, sizeof(tmp));

	if (!f)
		return -1;
	fprintf(f, "%s\n", header);
	copy_spool(spool, f);
	for (const struct proc *p = s->procs.first; p; p = p->next) {
		if (has_rows(p) && rows(f, t, s, p)) {
			fclose(f);
			return -1;
		}
	}
	return outdir_commit(&s->out, f, tmp, name);
}

int modes_write_csv(struct tracker *t, struct session *s)
{
	int ret = 0;

	if (!s->out_open)
		return 0;
	/* Every mode: growth per MPI function needs no probe (mpi_fn.h). */
	ret |= write_file(t, s, FILE_MPI_CALLS, MPI_CALLS_HEADER, s->ended_calls,
				  write_mpi_calls);
	if (t->opt->heap)
		ret |= write_file(t, s, FILE_HEAP_SITES, HEAP_SITES_HEADER, s->ended_sites,
				  write_heap_sites);
	return ret;
}
