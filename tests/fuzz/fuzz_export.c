// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness: export's and diff's readers and everything written
 * from what they read. The input is cut at lines "--" into files: two
 * rank timelines, mpi_calls.csv, heap_sites.csv, alloc_stacks.csv. The
 * run is exported at its peak, its end and a time in every format, and
 * diffed against itself (text, CSV, the page), all into /dev/null: hostile names and numbers
 * must make neither a crash nor invalid memory use in any writer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "fuzz_parts.h"

static void read_part(void *arg, size_t idx, FILE *f)
{
	struct ex_data *d = arg;
	char err[EX_ERRLEN];

	switch (idx) {
	case 2:
		rp_read_calls(&d->run, f, "mpi_calls.csv", err, sizeof(err));
		break;
	case 3:
		ex_read_sites(d, f, "heap_sites.csv", err, sizeof(err));
		break;
	case 4:
		ex_read_stacks(d, f, "alloc_stacks.csv", err, sizeof(err));
		break;
	default:
		rp_read_proc(&d->run, f, "rank-0.csv", err, sizeof(err));
		break;
	}
}

/* Every writer of every moment; the page of the run against itself at its peak and end. */
static void export_all(const struct ex_data *d, const struct ex_diff *diff)
{
	struct ex_profile both[2];
	int nboth = 0;
	static const enum ex_at moments[] = { EX_AT_PEAK, EX_AT_END, EX_AT_TIME };
	static const char *const formats[] = { "folded", "speedscope", "pprof" };
	char err[EX_ERRLEN], stack[256];

	for (size_t m = 0; m < 3; m++) {
		struct ex_select sel = { .at = moments[m], .at_time = 0.15 };
		struct ex_profile pr;
		int64_t growth;

		if (ex_build(d, &sel, &pr, err, sizeof(err)))
			continue;
		for (size_t f = 0; f < 3; f++)
			for (int v = 0; v < EX_NVALUES; v++)
				ex_writer_find(formats[f])->write(fuzz_devnull(), &pr, (enum ex_value)v, err,
								  sizeof(err));
		ex_diff_folded(fuzz_devnull(), &pr, &pr, EX_RSS);
		ex_diff_top_stack(&pr, &pr, 0, "mpi", stack, sizeof(stack), &growth);
		if (m < 2 && nboth == (int)m)
			both[nboth++] = pr;
		else
			ex_profile_free(&pr);
	}
	if (nboth == 2 && diff)
		ex_diff_html(fuzz_devnull(), diff, "a", "b", &both[0], &both[0], &both[1], &both[1]);
	while (nboth > 0)
		ex_profile_free(&both[--nboth]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ex_data *d = calloc(1, sizeof(*d));
	struct ex_diff diff;
	struct ex_growth g;
	FILE *devnull = fuzz_devnull();

	if (!d)
		abort();
	d->run.keep_pss = true;
	fuzz_parts(data, size, 5, read_part, d);
	if (d->run.nprocs) {
		if (!ex_diff_build(d, d, &diff)) {
			export_all(d, &diff);
			ex_diff_text(devnull, &diff, "a", "b");
			ex_diff_csv(devnull, &diff);
			ex_diff_fn_csv(devnull, &diff);
			ex_diff_over(&diff, 0, &g);
			ex_diff_free(&diff);
		} else {
			export_all(d, NULL);
		}
	}
	ex_data_free(d);
	free(d);
	return 0;
}
