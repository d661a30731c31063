// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_calls.csv (every mode): one row per process and MPI function that
 * had memory requests made inside it or, with --mpi-calls, calls (columns
 * in columns.h).
 */
#include "columns.h"
#include "csv_out.h"
#include "row_sink.h"
#include "sink.h"

static int rows(FILE *f, const struct sink_proc *p)
{
	for (size_t i = 0; i < p->nmpi_fns; i++) {
		const struct sink_mpi_fn *m = &p->mpi_fns[i];

		if (csv_put_rank_pid(f, p->rank, p->pid) || csv_put_field(f, m->name))
			return -1;
		/* Calls are counted by --mpi-calls' probes only: unknown is empty, not 0. */
		if (m->calls_counted)
			fprintf(f, ",%llu", (unsigned long long)m->calls);
		else
			fputc(',', f);
		fprintf(f, ",%lld,%lld,%lld,%lld,", (long long)m->gained, (long long)m->released,
			(long long)(m->gained - m->released), (long long)m->peak);
		/* No growth, no growth times: empty fields rather than a made-up 0. */
		if (m->gained)
			fprintf(f, "%.3f,%.3f\n", m->first_growth, m->last_growth);
		else
			fputs(",\n", f);
	}
	return 0;
}

struct sink *mpi_calls_sink_new(struct output_dir *dir)
{
	return row_sink_new(dir, FILE_MPI_CALLS, MPI_CALLS_HEADER, rows);
}
