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

#endif
