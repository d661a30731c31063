/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A live process's /proc reads: its mappings (smaps, timed for the PSS
 * budget) and its VmRSS for a sample, each between two steps of its fault
 * epoch; a process found gone by a read is retired there.
 */
#ifndef MEMATTR_READS_H
#define MEMATTR_READS_H

#include <stdbool.h>

struct tracker;
struct session;
struct proc;

/*
 * Still the process we started tracing? Its exit event can be lost (a full
 * ring buffer) and its pid reused: then it must end, never be sampled or
 * probed as someone else's process.
 */
bool reads_still_same(struct proc *p);

/* Read p's mappings (and place the probes of libraries new since); false when p is gone (and retired). */
bool reads_mappings(struct tracker *t, struct session *s, struct proc *p);

/*
 * p's last read of its mappings took a quarter of the interval or more
 * (tens of thousands of mappings): it is made after the round's samples,
 * so that it delays no other job's (sample.c).
 */
bool reads_long(const struct tracker *t, const struct proc *p);

/* Read p's VmRSS for this sample: 0, -ESRCH when gone (retired), or -errno. */
int reads_vmrss(struct tracker *t, struct session *s, struct proc *p);

#endif
