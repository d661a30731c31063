/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process's event records held back, in their order, until the end of
 * the drain that read them. Most commands a job runs (system(), popen(),
 * a batch script's tools) are born and gone between two samples: no figure
 * ever shows them, yet each memory request among their records costs a
 * stack walk and, for each new image, a read of its maps. Held, such
 * records go with the process when its exit comes in the same drain; a
 * process still alive at the end of the drain has them applied then.
 *
 * Pure: a bounded byte queue. The engine decides who holds and when.
 */
#ifndef MEMATTR_HELD_H
#define MEMATTR_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One process's records held at most: a short command makes ~10 requests. */
#define HELD_PROC_BYTES		(256u << 10)

struct held_records {
	uint8_t *buf;
	size_t len, cap;
	uint32_t count;		/* records in buf */
	bool refused;		/* went past its bound once: applied as they come */
};

/* Append a copy of record (size bytes); -1: past HELD_PROC_BYTES or no memory. */
int held_push(struct held_records *h, const void *record, size_t size);

/*
 * Hand each record to apply in the order held, then empty h. apply may
 * not push to h.
 */
void held_replay(struct held_records *h, void (*apply)(void *ctx, const void *record, size_t size),
		 void *ctx);

/*
 * Append to dst the records of src that keep() accepts, in their order (a
 * forked child inherits its parent's pending requests). -1: past dst's
 * bound or no memory; dst then holds some of them.
 */
int held_copy(struct held_records *dst, const struct held_records *src,
	      bool (*keep)(const void *record, size_t size));

/* Forget the records (the process or its image ended); how many there were. */
uint32_t held_drop(struct held_records *h);

#endif
