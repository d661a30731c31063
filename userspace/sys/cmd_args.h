/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the offline commands (export, diff, model) share at their front:
 * getopt_long started afresh, the wording of an unknown option and of an
 * empty file name, and what a parse's result means for the exit: --help's
 * usage on standard output and 0, a usage error in one line
 * "memattr-bpf CMD: why" and 2, a refused input in one line and 1.
 */
#ifndef MEMATTR_CMD_ARGS_H
#define MEMATTR_CMD_ARGS_H

#include <stddef.h>
#include <stdio.h>

#define CMD_EXIT_USAGE	2

/* getopt_long from the first argument again, its own messages off (the tests parse more than once). */
void cmd_args_reset(void);

/* getopt_long's '?' at argv[optind - 1]: "unknown option or missing value: ARG (see --help)" into err. */
void cmd_args_unknown(char **argv, char *err, size_t errlen);

/* A file or directory name for opt ("-o"): 0 with *out = val, or -1 with "OPT: empty WHAT name". */
int cmd_args_name(const char *opt, const char *what, const char *val, const char **out, char *err,
		  size_t errlen);

/*
 * A parse's result r: 1 (--help) prints usage on standard output and
 * gives 0; r < 0 says err in one line and gives CMD_EXIT_USAGE; 0 gives
 * -1: go on.
 */
int cmd_args_done(const char *cmd, int r, const char *err, void (*usage)(FILE *f));

/* "memattr-bpf CMD: MESSAGE" on standard error, one line: EXIT_FAILURE. */
int cmd_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
