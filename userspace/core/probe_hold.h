/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * When the node service's node-wide programs (the memory syscalls'
 * tracepoints; in exact attribution rss_stat and the page faults' too)
 * are attached. While any syscall tracepoint is registered every syscall
 * of every process on the node takes the kernel's traced path, so they
 * are attached only while a process is traced, and kept for hold_s after
 * the last one ends: a site running job steps one after the other pays
 * one attach, not one per step. Pure: unit-tested.
 */
#ifndef MEMATTR_PROBE_HOLD_H
#define MEMATTR_PROBE_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum probe_act {
	PROBE_KEEP,		/* nothing to do */
	PROBE_ATTACH,		/* a process is traced and they are not attached */
	PROBE_DETACH,		/* none traced for hold_s: detach them */
};

struct probe_hold {
	double hold_s;		/* < 0: never detached */
	bool attached;
	double idle_since;	/* tracker time the last traced process ended, < 0: not idle */
	uint64_t attaches;	/* times they were attached */
};

/* Detached, nothing traced yet. */
void probe_hold_init(struct probe_hold *h, double hold_s);

/* What to do now, nprocs processes being traced at time now (seconds). */
enum probe_act probe_hold_step(struct probe_hold *h, size_t nprocs, double now);

/* The act probe_hold_step asked for was done (ok) or failed. */
void probe_hold_done(struct probe_hold *h, enum probe_act act, bool ok);

#endif
