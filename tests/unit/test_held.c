// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Held records: handed back whole, in their order, aligned for the event
 * structs; a process's bound refuses the record past it; a forked child's
 * copy keeps only what the filter accepts; dropping says how many went.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "held.h"

/* A record of size bytes whose bytes say which record it is. */
struct rec {
	uint64_t seq;
	uint8_t body[300];
};

struct seen {
	uint64_t next;		/* the seq expected next */
	size_t bytes;
};

static size_t size_of(uint64_t seq)
{
	/* Sizes that are not multiples of 8: the padding must not shift the next record. */
	return sizeof(uint64_t) + (seq * 37) % (sizeof(((struct rec *)0)->body) - 1) + 1;
}

static void fill(struct rec *r, uint64_t seq)
{
	r->seq = seq;
	memset(r->body, (int)(seq & 0xff), sizeof(r->body));
}

/* Records in order, aligned for the event structs, whatever their length. */
static void count_record(void *ctx, const void *record, size_t size)
{
	struct seen *s = ctx;
	const struct rec *r = record;

	assert_int_equal((uintptr_t)record % 8, 0);
	assert_int_equal(r->seq, s->next);
	s->next++;
	s->bytes += size;
}

/* ... and each whole: its own size, its own bytes. */
static void check_record(void *ctx, const void *record, size_t size)
{
	const struct rec *r = record;

	assert_int_equal(size, size_of(r->seq));
	for (size_t i = 0; i < size - sizeof(uint64_t); i++)
		assert_int_equal(r->body[i], (uint8_t)(r->seq & 0xff));
	count_record(ctx, record, size);
}

/* Records 0 .. n-1 into h, each of its own size. */
static void push_records(struct held_records *h, uint64_t n)
{
	struct rec r;

	for (uint64_t seq = 0; seq < n; seq++) {
		fill(&r, seq);
		assert_int_equal(held_push(h, &r, size_of(seq)), 0);
	}
}

static void test_replay_in_order(void **state)
{
	struct held_records h = { 0 };
	struct seen s = { 0 };

	(void)state;
	push_records(&h, 500);
	assert_int_equal(h.count, 500);
	held_replay(&h, check_record, &s);
	assert_int_equal(s.next, 500);
	/* Replayed means gone: nothing twice. */
	assert_int_equal(h.count, 0);
	assert_int_equal(h.len, 0);
	assert_null(h.buf);
}

static void test_bound_refuses(void **state)
{
	struct held_records h = { 0 };
	struct seen s = { 0 };
	struct rec r;
	uint32_t n = 0;

	(void)state;
	fill(&r, 0);
	while (!held_push(&h, &r, sizeof(r))) {
		assert_true(h.len <= HELD_PROC_BYTES);
		fill(&r, ++n);
	}
	/* It took as many as fit, and the one refused left the rest whole. */
	assert_true(n >= HELD_PROC_BYTES / (sizeof(r) + 16));
	assert_int_equal(h.count, n);
	held_replay(&h, count_record, &s);
	assert_int_equal(s.next, n);
	assert_int_equal(s.bytes, (size_t)n * sizeof(r));
}

static bool odd_only(const void *record, size_t size)
{
	(void)size;
	return ((const struct rec *)record)->seq % 2;
}

/* Odd records only, in order: 1, 3, 5, ... */
static void check_odd(void *ctx, const void *record, size_t size)
{
	struct seen *s = ctx;
	const struct rec *r = record;

	assert_int_equal(r->seq, 2 * s->next + 1);
	assert_int_equal(size, size_of(r->seq));
	s->next++;
}

static void test_copy_keeps_filtered_order(void **state)
{
	struct held_records parent = { 0 }, child = { 0 };
	struct seen s = { 0 };

	(void)state;
	push_records(&parent, 100);
	assert_int_equal(held_copy(&child, &parent, odd_only), 0);
	assert_int_equal(child.count, 50);
	/* The parent keeps its own, and dropping them says how many went. */
	assert_int_equal(held_drop(&parent), 100);
	assert_int_equal(parent.count, 0);
	assert_null(parent.buf);
	held_replay(&child, check_odd, &s);
	assert_int_equal(s.next, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_in_order),
		cmocka_unit_test(test_bound_refuses),
		cmocka_unit_test(test_copy_keeps_filtered_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
