/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Single-process side of the benchmark helpers: failure exits 3, named by the program. */
#ifndef PROCBENCH_H
#define PROCBENCH_H

#include "bench.h"

static void bench_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(3);
}

#endif
