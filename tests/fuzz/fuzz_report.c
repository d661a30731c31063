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

#include "report.h"

#define SEP	"\n--\n"

static FILE *devnull;

/* Read one part with the reader its position selects; a refusal is fine. */
static void read_part(struct rp_run *run, size_t idx, const char *p, size_t len)
{
	char err[RP_ERRLEN];
	FILE *f;

	if (!len)
		return;
	f = fmemopen((void *)p, len, "r");
	if (!f)
		return;
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
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_run *run;
	char *buf, *p, *end, *sep;
	size_t idx = 0;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull)
			abort();
	}
	run = calloc(1, sizeof(*run));
	buf = malloc(size + 1);
	if (!run || !buf)
		abort();
	/*
	 * Half the inputs read as `report` reads them, in bounded memory, the
	 * timelines thinned to 6 samples (rp_read_proc's second pass).
	 */
	if (size & 1) {
		run->max_samples = 6;
		run->bounded = true;
	}
	memcpy(buf, data, size);
	buf[size] = '\0';
	p = buf;
	end = buf + size;
	while (p <= end && idx < 8) {
		sep = memmem(p, (size_t)(end - p), SEP, strlen(SEP));
		/* The part keeps its line break, as a file would. */
		read_part(run, idx++, p, sep ? (size_t)(sep - p) + 1 : (size_t)(end - p));
		if (!sep)
			break;
		p = sep + strlen(SEP);
	}
	if (run->nprocs)
		rp_html_write(devnull, run);
	rp_run_free(run);
	free(run);
	free(buf);
	return 0;
}
