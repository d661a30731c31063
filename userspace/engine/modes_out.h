/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Files of the opt-in modes, rewritten atomically with summary.csv
 * (columns in output/columns.h): mpi_calls.csv (--mpi-calls), per process
 * and MPI function; heap_sites.csv (--heap), per process and malloc-family
 * call site. Naming a site needs the modes' symbol tables, so this is the
 * engine's, not a sink. A process that ends leaves its rows in a spool of
 * its session (unlinked temporary files), not in memory.
 */
#ifndef MEMATTR_MODES_OUT_H
#define MEMATTR_MODES_OUT_H

struct tracker;
struct session;
struct proc;

/* p ended: spool its rows. */
void modes_proc_end(struct tracker *t, struct session *s, struct proc *p);

/*
 * Write the files of the enabled modes: the spooled rows, then the live
 * processes'. A file that cannot be written whole is left as it was and
 * reported (outdir_write_failed).
 */
void modes_write_csv(struct tracker *t, struct session *s);

#endif
