/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The opt-in modes' figures of a process in its sink view (output/sink.h):
 * its MPI functions (mpi_calls.csv), its allocation stacks (the regions by
 * the stack that made them: alloc_stacks.csv), and with --heap its heap
 * call sites (heap_sites.csv). Naming code needs the modes' symbol tables,
 * the engine's; the files are the sinks'. The session calls these around
 * its proc_end and job_summary (session.h mode_view).
 */
#ifndef MEMATTR_MODE_VIEWS_H
#define MEMATTR_MODE_VIEWS_H

struct session;
struct proc;
struct sink_proc;

/*
 * p's figures into v, ctx the tracker. p's stack names are kept in p for
 * the next time (a stack's frames do not change). Out of memory, a part
 * is left out: a stack not named has frames NULL.
 */
void mode_view_fill(void *ctx, const struct session *s, struct proc *p, struct sink_proc *v);

/* What mode_view_fill allocated in v, freed; v carries none after. */
void mode_view_free(struct sink_proc *v);

#endif
