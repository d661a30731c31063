// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <limits.h>
#include <time.h>

#include "ring_budget.h"

/*
 * The clock is read every this many records: a record costs the engine
 * far more than a clock read, but most records are small runs and faults.
 */
#define RING_BUDGET_CHECK_EVERY	32

uint64_t ring_budget_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ring_budget_start(struct ring_budget *b, int budget_ms)
{
	b->deadline_ns = budget_ms > 0 ? ring_budget_clock() + (uint64_t)budget_ms * 1000000ull : 0;
	b->unchecked = 0;
	b->taken = 0;
	b->cut = false;
}

int ring_budget_event(void *ctx, void *data, size_t size)
{
	struct ring_budget *b = ctx;
	int ret = b->fn(b->ctx, data, size);

	b->taken++;
	if (ret || !b->deadline_ns || ++b->unchecked < RING_BUDGET_CHECK_EVERY)
		return ret;
	b->unchecked = 0;
	if (ring_budget_clock() < b->deadline_ns)
		return 0;
	/* This record is taken: libbpf moves past it before it stops. */
	b->cut = true;
	return RING_BUDGET_CUT;
}

int ring_budget_result(const struct ring_budget *b, int ret)
{
	if (ret != RING_BUDGET_CUT || !b->cut)
		return ret;
	return b->taken > INT_MAX ? INT_MAX : (int)b->taken;
}
