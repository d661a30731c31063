/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process's end: its figures to the sinks, its probes removed, its
 * memory freed; and the ring of processes retired lately, whose records
 * and /proc entries may still be on their way.
 */
#ifndef MEMATTR_RETIRE_H
#define MEMATTR_RETIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracker;
struct session;
struct proc;

/*
 * p ended: its figures go to the sinks and it is freed. The kernel dropped
 * it from the traced set at its exit (ma_exit): deleting here could untrace
 * a new process that already reuses the pid.
 */
void retire(struct tracker *t, struct session *s, struct proc *p);

/*
 * The OOM killer chose p at boot_ns (its record, or the kernel's note of
 * it): the sinks hear of the kill, once, before its exit retires it.
 */
void retire_oom(struct tracker *t, struct session *s, struct proc *p, uint64_t boot_ns);

/* Held records of an image that ended before any output showed it: dropped unread. */
void retire_held(struct tracker *t, struct proc *p);

/* pid was retired lately (its records may still be on their way); no /proc read. */
bool retired_lately(const struct tracker *t, pid_t pid);

/* pid was found in /proc and retired before its fork event came: this is that event (once). */
bool retired_before_fork(struct tracker *t, pid_t pid);

/* pid is a process retired lately that /proc still shows on its way out. */
bool retired_leaving(const struct tracker *t, pid_t pid);

#endif
