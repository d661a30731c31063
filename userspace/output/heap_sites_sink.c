// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * heap_sites.csv (--heap): one row per process and malloc-family call
 * site, as the kernel counted them (columns in columns.h). The engine names
 * each site (it has the symbol tables); this sink only writes the rows.
 */
#include "columns.h"
#include "csv_out.h"
#include "row_sink.h"
#include "sink.h"

static int rows(FILE *f, const struct sink_proc *p)
{
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

struct sink *heap_sites_sink_new(struct output_dir *dir)
{
	return row_sink_new(dir, FILE_HEAP_SITES, HEAP_SITES_HEADER, rows);
}
