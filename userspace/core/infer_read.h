/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The inference of pre-attach owners (infer.h) on a live process: its
 * mappings and threads from /proc, its memory through /proc/PID/mem while
 * it runs (a running thread is stopped only for the read of its
 * registers: a word can change under the read; what that can get wrong is
 * in docs/attribution.md), the owners found written into its region table
 * for the memory nobody owned.
 */
#ifndef MEMATTR_INFER_READ_H
#define MEMATTR_INFER_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "components.h"

struct proc;
struct classifier;

#define INFER_REPORT_COMPS	16	/* components counted per process, the largest */
#define INFER_DEFAULT_BUDGET_MIB 1024	/* --infer-budget's default */

/* What one process's inference found: run_info.csv's infer_* rows. */
struct proc_inferred {
	double seconds;			/* the tool's CPU time spent (thread clock) */
	double wall_seconds;
	uint64_t bytes_read;		/* of the process's memory */
	uint64_t unattributed;		/* resident bytes it left unattributed */
	uint64_t allocations, reached, sampled_out;
	unsigned int threads_stopped;	/* running threads whose registers were read */
	bool budget_hit;
	unsigned int n;
	struct {
		comp_id owner;
		uint64_t bytes;		/* resident bytes given to owner */
	} by[INFER_REPORT_COMPS];
};

/*
 * Infer owners for p's memory that nobody owns (read just before by
 * proc_sync), reading at most budget bytes (0: no limit). The regions it
 * sets are counted exactly at the next smaps read (p->needs_sync). 0 or
 * -errno (the process gone, memory not readable): nothing changed then.
 */
int proc_infer(struct proc *p, const struct classifier *cls, uint64_t budget,
	       struct proc_inferred *out);

#endif
