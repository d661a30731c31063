/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live status line on a terminal while tracing: processes traced, the
 * job's total, MPI's share, events per second and drops. Silent when stdout
 * is not a terminal (a batch script's log gets only the final summary).
 */
#ifndef MEMATTR_STATUS_LINE_H
#define MEMATTR_STATUS_LINE_H

#include <stdbool.h>
#include <stdint.h>

struct tracker;

struct status_line {
	bool on;
	double last_time;
	uint64_t last_events;
};

void status_line_init(struct status_line *s, bool quiet);

/* Redraw, at most twice a second. */
void status_line_update(struct status_line *s, struct tracker *t, double now);

/* Erase it, before anything else is printed. */
void status_line_clear(struct status_line *s);

#endif
