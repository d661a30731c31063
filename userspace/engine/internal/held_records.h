/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Records held until the end of a drain (core/held.h): a process no output
 * has shown yet keeps its records, in their order, and takes them along
 * unread if it ends meanwhile (most commands a job runs do). The tool's
 * memory for them is bounded (TRACKER_HELD_BYTES).
 */
#ifndef MEMATTR_HELD_RECORDS_H
#define MEMATTR_HELD_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracker;
struct session;
struct proc;

/* data held for p: true, or false when p's records go as they come (apply them). */
bool held_records_hold(struct tracker *t, struct session *s, struct proc *p, const void *data,
		       size_t size);

/* p's held records applied, in their order. */
void held_records_release(struct tracker *t, struct session *s, struct proc *p);

/* A forked child holds its parent's held requests, ahead of its own records. */
void held_records_inherit(struct tracker *t, struct session *s, struct proc *child,
			  struct proc *parent);

/* A rank's command younger than a sample interval: not read yet, its records held. */
bool held_records_settling(const struct tracker *t, const struct proc *p, double now);

/*
 * The ring buffer drained (until t->drain_until: records may be left for
 * the next turn), then the held records of every process released.
 */
void held_records_drain(struct tracker *t);

/*
 * A sample round begins at now: its time for reading the ring starts
 * (shared by its catch-ups when several jobs are traced).
 */
void held_records_round_begins(struct tracker *t, double now);

/*
 * The ring buffer read until every record written before mark_ns (the
 * round's newest VmRSS read, boot clock) is applied: while a drain stops
 * on its budget with none newer read yet, another follows, for half an
 * interval, or, with several jobs traced, until the round's catch-up time
 * is up. Returns true when it stopped on that bound with such records
 * left (the round's rows go out behind them).
 */
bool held_records_catch_up(struct tracker *t, uint64_t mark_ns);

#endif
