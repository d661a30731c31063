/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A bound on one consumption of the event ring buffer. libbpf's consume
 * reads until the ring is empty, and a process that makes records as fast
 * as they are read keeps it from ever being empty: every other job's
 * samples wait behind it. Between the ring and the engine's callback, this
 * stops the consumption once its deadline has passed (the records left are
 * read at the next turn, after the samples due).
 */
#ifndef MEMATTR_RING_BUDGET_H
#define MEMATTR_RING_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called for each record; a non-zero return stops the current poll. */
typedef int (*event_fn)(void *ctx, void *data, size_t size);

/* What the budgeted callback returns to stop libbpf's loop: never the engine's. */
#define RING_BUDGET_CUT		(-0x7262)

struct ring_budget {
	event_fn fn;
	void *ctx;
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC; 0: no bound */
	unsigned int unchecked;	/* records since the clock was last read */
	uint64_t taken;		/* records handed over in this consumption */
	bool cut;		/* it stopped on the deadline: records may be left */
};

/* Monotonic nanoseconds. */
uint64_t ring_budget_clock(void);

/* A consumption begins: budget_ms from now (<= 0: no bound). */
void ring_budget_start(struct ring_budget *b, int budget_ms);

/* libbpf's callback (ctx: the ring_budget): fn's result, or RING_BUDGET_CUT. */
int ring_budget_event(void *ctx, void *data, size_t size);

/*
 * A consumption's result as its caller returns it: libbpf's ret, but the
 * records taken when the budget cut it short.
 */
int ring_budget_result(const struct ring_budget *b, int ret);

#endif
