/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A sink of one per-process file rewritten whole at each summary
 * (row_file.h): a process's rows go to the spool when it ends, the file is
 * written again from the spool and the live processes' rows at each
 * job_summary. What a row says is the format's: its rows function.
 */
#ifndef MEMATTR_ROW_SINK_H
#define MEMATTR_ROW_SINK_H

#include <stdio.h>

struct output_dir;
struct sink;
struct sink_proc;

/* p's rows into f: 0, or -1 (errno set where it says why). */
typedef int (*proc_rows_fn)(FILE *f, const struct sink_proc *p);

/* name (with header) in dir, rows by rows; NULL out of memory. name and header must outlive it. */
struct sink *row_sink_new(struct output_dir *dir, const char *name, const char *header,
			  proc_rows_fn rows);

#endif
