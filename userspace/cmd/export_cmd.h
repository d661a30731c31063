/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `memattr-bpf export`: a run's resident memory as folded stacks, speedscope or pprof. */
#ifndef MEMATTR_EXPORT_CMD_H
#define MEMATTR_EXPORT_CMD_H

#include <stddef.h>

#include "export.h"

struct export_args {
	const char *dir;
	const char *out;		/* NULL: standard output */
	const struct ex_writer *writer;
	struct ex_select sel;
	enum ex_value value;		/* folded and speedscope's weight, pprof's default */
};

/* 0, 1 (--help: print usage, exit 0), or -1 with a sentence in err. */
int export_parse_args(int argc, char **argv, struct export_args *a, char *err, size_t errlen);

/* argv[0] is "export"; returns the exit status (0, 1 failure, 2 usage). */
int export_main(int argc, char **argv);

#endif
