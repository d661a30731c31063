/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Files rewritten atomically with summary.csv (columns in
 * output/columns.h): mpi_calls.csv, per process and MPI function;
 * alloc_stacks.csv, per process and allocation stack. A process that ends
 * leaves its rows in a spool of its session (output/row_file.h). And the
 * name of a heap call site, for the sinks' views (heap_sites.csv is a
 * sink's, output/heap_sites_sink.c): naming code needs the modes' symbol
 * tables, the engine's.
 */
#ifndef MEMATTR_MODES_OUT_H
#define MEMATTR_MODES_OUT_H

#include <stddef.h>
#include <stdint.h>

struct tracker;
struct session;
struct proc;

/* p ended: spool its rows. */
void modes_proc_end(struct tracker *t, struct session *s, struct proc *p);

/*
 * Write the files: the spooled rows, then the live processes'. A file
 * that cannot be written whole is left as it was and reported
 * (outdir_write_failed).
 */
void modes_write_csv(struct tracker *t, struct session *s);

/* session.h's name_site, ctx the tracker: "file:function+0xOFF" of addr in p, and its component. */
void modes_name_heap_site(void *ctx, const struct session *s, const struct proc *p,
			  uint64_t addr, char *out, size_t len, const char **library);

#endif
