// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * alloc_stacks.csv (every mode): one row per process and allocation stack
 * whose regions hold memory, now or when the process peaked (columns in
 * columns.h). The engine names the frames; a stack it could not name makes
 * the file fail whole rather than lose a row silently.
 */
#include <errno.h>

#include "columns.h"
#include "csv_out.h"
#include "row_sink.h"
#include "sink.h"

static int rows(FILE *f, const struct sink_proc *p)
{
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct sink_stack *s = &p->stacks[i];

		if (!s->frames) {
			errno = ENOMEM;
			return -1;
		}
		if (csv_put_rank_pid(f, p->rank, p->pid) || csv_put_field(f, s->component) ||
		    fputc(',', f) == EOF || csv_put_field(f, s->frames) ||
		    fprintf(f, ",%lld,%lld,", (long long)s->rss, (long long)s->rss_at_peak) < 0 ||
		    csv_put_field(f, s->build_ids) || fputc('\n', f) == EOF)
			return -1;
	}
	return 0;
}

struct sink *alloc_stacks_sink_new(struct output_dir *dir)
{
	return row_sink_new(dir, FILE_ALLOC_STACKS, ALLOC_STACKS_HEADER, rows);
}
