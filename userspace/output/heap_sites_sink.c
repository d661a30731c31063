// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * heap_sites.csv and heap_sites_peak.csv (--heap): one row per process and
 * malloc-family call site, as the kernel counted them at the end, and at
 * the process's peak (columns in columns.h, the same in both). The engine
 * names each site (it has the symbol tables); these sinks only write the
 * rows.
 */
#include "columns.h"
#include "csv_out.h"
#include "row_sink.h"
#include "sink.h"

static int site_rows(FILE *f, const struct sink_proc *p, const struct sink_heap_site *sites,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct sink_heap_site *s = &sites[i];

		if (csv_put_rank_pid(f, p->rank, p->pid) || csv_put_field(f, s->library) ||
		    fputc(',', f) == EOF || csv_put_field(f, s->site))
			return -1;
		fprintf(f, ",%llu,%llu,%lld,%lld,%llu\n", (unsigned long long)s->calls,
			(unsigned long long)s->frees, (long long)s->live_bytes,
			(long long)s->peak_bytes, (unsigned long long)s->total_bytes);
	}
	return 0;
}

static int end_rows(FILE *f, const struct sink_proc *p)
{
	return site_rows(f, p, p->heap_sites, p->nheap_sites);
}

static int peak_rows(FILE *f, const struct sink_proc *p)
{
	return site_rows(f, p, p->heap_peak_sites, p->nheap_peak_sites);
}

struct sink *heap_sites_sink_new(struct output_dir *dir)
{
	return row_sink_new(dir, FILE_HEAP_SITES, HEAP_SITES_HEADER, end_rows);
}

struct sink *heap_peak_sink_new(struct output_dir *dir)
{
	return row_sink_new(dir, FILE_HEAP_SITES_PEAK, HEAP_SITES_HEADER, peak_rows);
}
