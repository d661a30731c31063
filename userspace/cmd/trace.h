/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The tracing command: --job ID, --pid P or -- CMD (cmd/trace.c). */
#ifndef MEMATTR_TRACE_H
#define MEMATTR_TRACE_H

/* The whole command line, argv[0] the program's name. Returns the exit status. */
int trace_main(int argc, char **argv);

#endif
