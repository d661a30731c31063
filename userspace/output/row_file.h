/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-process files rewritten whole at each summary (mpi_calls.csv,
 * alloc_stacks.csv, heap_sites.csv): the rows of processes that ended,
 * kept in a spool (an unlinked temporary file, not memory, as a job may
 * run thousands of commands), then the live processes' rows.
 */
#ifndef MEMATTR_ROW_FILE_H
#define MEMATTR_ROW_FILE_H

#include <stdbool.h>
#include <stdio.h>

struct output_dir;

struct row_spool {
	FILE *f;		/* NULL until the first rows */
	int err;		/* errno once a row was lost (for good), else 0 */
};

/* Rows into f: 0, or -1 (errno set where it says why). */
typedef int (*row_fn)(FILE *f, void *ctx);

/* rows(f, ctx) appended to the spool; a row that cannot be kept marks it lost. */
void row_spool_add(struct row_spool *sp, row_fn rows, void *ctx);

void row_spool_close(struct row_spool *sp);

/* The spool's rows appended to to: 0, or -1 (errno: the spool's lost row, or the write's). */
int row_spool_copy(const struct row_spool *sp, FILE *to);

/*
 * name rewritten whole: header, the spool's rows, then live(f, ctx). A file
 * that cannot be written whole (or whose spool lost rows) is left as it was
 * and reported once (outdir_write_failed). durable: synced to disk (the
 * job's last write), else only renamed into place (outdir_commit_as).
 */
void row_file_write(struct output_dir *dir, const char *name, const char *header,
		    struct row_spool *sp, row_fn live, void *ctx, bool durable);

#endif
