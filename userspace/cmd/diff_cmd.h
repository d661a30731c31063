/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `memattr-bpf diff A B`: two runs per rank and component, and a memory-regression gate. */
#ifndef MEMATTR_DIFF_CMD_H
#define MEMATTR_DIFF_CMD_H

#include <stdbool.h>
#include <stddef.h>

struct diff_args {
	const char *a, *b;		/* the two runs' directories */
	const char *out;		/* -o DIR: diff.csv, mpi_diff.csv, diff.folded, diff-end.folded */
	bool gate;
	double fail_above;		/* --fail-above PCT, with gate */
};

/* 0, 1 (--help: print usage, exit 0), or -1 with a sentence in err. */
int diff_parse_args(int argc, char **argv, struct diff_args *a, char *err, size_t errlen);

/*
 * argv[0] is "diff"; returns the exit status: 0, 1 (a failure, or with
 * --fail-above a component grew past the limit), 2 (usage).
 */
int diff_main(int argc, char **argv);

#endif
