/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernel counted for the opt-in modes (MPI call counts, heap call
 * sites), copied into the processes, so that it goes out with their other
 * figures; and a process's probes removed when it ends.
 */
#ifndef MEMATTR_MODE_COUNTS_H
#define MEMATTR_MODE_COUNTS_H

struct tracker;
struct session;
struct proc;

/* p's counts, now (a probed, accounted process only). */
void mode_counts_collect(struct tracker *t, struct proc *p);

/* s's live processes' counts, before the modes' files are rewritten. */
void mode_counts_collect_live(struct tracker *t, struct session *s);

/*
 * After a sample round: the heap sites of every process whose total
 * peaked in it, copied from the kernel (heap_peak.h), in one walk of its
 * table for all of them; the other processes' are left as they were.
 */
void mode_counts_peaks(struct tracker *t);

/* p is gone (or tracing ends): its counts kept, its probes and kernel state removed. */
void mode_counts_release(struct tracker *t, struct proc *p);

#endif
