// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Held records: each is an 8-byte size word, then the record padded to 8
 * bytes, so the event structs (64-bit fields) are read aligned in place.
 */
#include <stdlib.h>
#include <string.h>

#include "held.h"

#define HELD_ALIGN	8u

static size_t padded(size_t size)
{
	return (size + HELD_ALIGN - 1) & ~(size_t)(HELD_ALIGN - 1);
}

static int grow(struct held_records *h, size_t need)
{
	size_t cap = h->cap ? h->cap : 4096;
	uint8_t *buf;

	while (cap < need)
		cap *= 2;
	if (cap > HELD_PROC_BYTES)
		cap = HELD_PROC_BYTES;
	buf = realloc(h->buf, cap);
	if (!buf)
		return -1;
	h->buf = buf;
	h->cap = cap;
	return 0;
}

int held_push(struct held_records *h, const void *record, size_t size)
{
	size_t need = h->len + HELD_ALIGN + padded(size);
	uint64_t word = size;

	if (need > HELD_PROC_BYTES || need < h->len)
		return -1;
	if (need > h->cap && grow(h, need))
		return -1;
	memcpy(h->buf + h->len, &word, sizeof(word));
	memcpy(h->buf + h->len + HELD_ALIGN, record, size);
	h->len = need;
	h->count++;
	return 0;
}

/* The record at *off, and *off moved past it; false at the end. */
static bool next_record(const struct held_records *h, size_t *off, const uint8_t **record,
			size_t *size)
{
	uint64_t word;

	if (*off + HELD_ALIGN > h->len)
		return false;
	memcpy(&word, h->buf + *off, sizeof(word));
	*record = h->buf + *off + HELD_ALIGN;
	*size = word;
	*off += HELD_ALIGN + padded(word);
	return true;
}

void held_replay(struct held_records *h, void (*apply)(void *ctx, const void *record, size_t size),
		 void *ctx)
{
	const uint8_t *record;
	size_t off = 0, size;

	while (next_record(h, &off, &record, &size))
		apply(ctx, record, size);
	held_drop(h);
}

int held_copy(struct held_records *dst, const struct held_records *src,
	      bool (*keep)(const void *record, size_t size))
{
	const uint8_t *record;
	size_t off = 0, size;

	while (next_record(src, &off, &record, &size))
		if (keep(record, size) && held_push(dst, record, size))
			return -1;
	return 0;
}

uint32_t held_drop(struct held_records *h)
{
	uint32_t n = h->count;

	free(h->buf);
	h->buf = NULL;
	h->len = h->cap = 0;
	h->count = 0;
	return n;
}
