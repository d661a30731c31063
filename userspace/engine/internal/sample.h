/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A sample round of every session: the mappings read where due (within
 * the PSS budget), every VmRSS, the records faulted meanwhile drained,
 * then the components accounted and the rows handed to the sinks.
 */
#ifndef MEMATTR_SAMPLE_H
#define MEMATTR_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

struct tracker;

/* One sample of every session's processes. */
void sample_sessions(struct tracker *t);

/* Runs of faults still in the kernel: into the ring buffer, before a drain for samples. */
void sample_flush_runs(struct tracker *t);

/*
 * The ring buffer read until every record written before mark_ns (the
 * round's newest VmRSS read, boot clock) is applied: while a drain stops
 * on its budget with none newer read yet, another follows, within
 * CATCH_UP_SHARE of an interval. Returns true when it stopped on that
 * bound with such records left (the round's rows go out behind them).
 */
bool sample_catch_up(struct tracker *t, uint64_t mark_ns);

#endif
