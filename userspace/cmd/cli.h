/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Command line: parsed and checked before anything touches the kernel. */
#ifndef MEMATTR_CLI_H
#define MEMATTR_CLI_H

#include <stdio.h>

#include "options.h"

/*
 * Parse argv. Returns 0, 1 when --help/--version printed and the program
 * should exit 0, or -1 with a one-line reason in err.
 */
int cli_parse(int argc, char **argv, struct options *o, char *err, size_t errlen);
void cli_free(struct options *o);
void cli_usage(FILE *f);

#endif
