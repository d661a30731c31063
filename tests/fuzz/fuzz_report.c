// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness: the report's CSV readers and everything drawn from
 * what they read. The input is cut at lines "--" into files: the first two
 * are rank timelines, then summary.csv, mpi_calls.csv, run_info.csv, then
 * more timelines. Whatever is read is drawn into a page sent to /dev/null,
 * so a figure computed from hostile numbers is exercised too (finding 1 of
 * issue 13 was in the drawing, not the reading). Inputs of odd length are
 * read bounded, with a small max_samples, so the thinning reader and the
 * per-function sums are fuzzed too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_parts.h"
#include "report.h"

/* Read one part with the reader its position selects; a refusal is fine. */
static void read_part(void *arg, size_t idx, FILE *f)
{
	struct rp_run *run = arg;
	char err[RP_ERRLEN];

	switch (idx) {
	case 2:
		rp_read_summary(run, f, "summary.csv", err, sizeof(err));
		break;
	case 3:
		rp_read_calls(run, f, "mpi_calls.csv", err, sizeof(err));
		break;
	case 4:
		rp_read_info(run, f, "run_info.csv", err, sizeof(err));
		break;
	default:
		rp_read_proc(run, f, "rank-0.csv", err, sizeof(err));
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_run *run = calloc(1, sizeof(*run));

	if (!run)
		abort();
	/*
	 * Half the inputs read as `report` reads them, in bounded memory, the
	 * timelines thinned to 6 samples (rp_read_proc's second pass).
	 */
	if (size & 1) {
		run->max_samples = 6;
		run->bounded = true;
	}
	fuzz_parts(data, size, 8, read_part, run);
	if (run->nprocs)
		rp_html_write(fuzz_devnull(), run);
	rp_run_free(run);
	free(run);
	return 0;
}
