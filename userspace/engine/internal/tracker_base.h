/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every step of the engine asks of the tracker: its clocks, and a
 * live process by pid in whichever session holds it. The lowest of the
 * engine's files: it uses none of the others.
 */
#ifndef MEMATTR_TRACKER_BASE_H
#define MEMATTR_TRACKER_BASE_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct tracker;
struct session;
struct proc;
struct ev_header;

/* Seconds on clock id. */
double tracker_clock_s(clockid_t id);

/* Seconds on CLOCK_MONOTONIC: what the engine times its own work by. */
double tracker_mono_s(void);

/* time_s of a kernel record (the kernel stamps CLOCK_BOOTTIME), or of a CLOCK_BOOTTIME time. */
double tracker_event_time(const struct tracker *t, const struct ev_header *h);
double tracker_boot_time(const struct tracker *t, uint64_t boot_ns);

/* pid's live process in any session (*in: its session, when in is not NULL); NULL if none. */
struct proc *tracker_find_proc(struct tracker *t, pid_t pid, struct session **in);

#endif
