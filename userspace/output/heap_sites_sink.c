// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * heap_sites.csv (--heap): one row per process and malloc-family call
 * site, as the kernel counted them (columns in columns.h). The engine names
 * each site (it has the symbol tables); this sink only writes the rows:
 * an ended process's into the spool at its end, the whole file again at
 * each summary.
 */
#include <stdlib.h>

#include "columns.h"
#include "csv_out.h"
#include "row_file.h"
#include "sink.h"

struct heap_sites_sink {
	struct sink base;
	struct output_dir *dir;
	struct row_spool ended;
};

static int proc_rows(FILE *f, void *ctx)
{
	const struct sink_proc *p = ctx;

	for (size_t i = 0; i < p->nheap_sites; i++) {
		const struct sink_heap_site *s = &p->heap_sites[i];

		if (csv_put_rank_pid(f, p->rank, p->pid) || csv_put_field(f, s->library) ||
		    fputc(',', f) == EOF || csv_put_field(f, s->site))
			return -1;
		fprintf(f, ",%llu,%llu,%lld,%lld,%llu\n", (unsigned long long)s->calls,
			(unsigned long long)s->frees, (long long)s->live_bytes,
			(long long)s->peak_bytes, (unsigned long long)s->total_bytes);
	}
	return 0;
}

struct live {
	const struct sink_proc *const *procs;
	size_t n;
};

static int live_rows(FILE *f, void *ctx)
{
	const struct live *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (proc_rows(f, (void *)l->procs[i]))
			return -1;
	return 0;
}

static void proc_end(struct sink *k, const struct sink_job *j, const struct sink_proc *p)
{
	struct heap_sites_sink *h = (struct heap_sites_sink *)k;

	(void)j;
	row_spool_add(&h->ended, proc_rows, (void *)p);
}

static void job_summary(struct sink *k, const struct sink_job *j,
			const struct sink_proc *const *live, size_t nlive)
{
	struct heap_sites_sink *h = (struct heap_sites_sink *)k;
	struct live l = { live, nlive };

	(void)j;
	row_file_write(h->dir, FILE_HEAP_SITES, HEAP_SITES_HEADER, &h->ended, live_rows, &l);
}

static void destroy(struct sink *k)
{
	struct heap_sites_sink *h = (struct heap_sites_sink *)k;

	row_spool_close(&h->ended);
	free(h);
}

static const struct sink_ops heap_sites_ops = {
	.proc_end = proc_end,
	.job_summary = job_summary,
	.destroy = destroy,
};

struct sink *heap_sites_sink_new(struct output_dir *dir)
{
	struct heap_sites_sink *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->base.ops = &heap_sites_ops;
	h->dir = dir;
	return &h->base;
}
