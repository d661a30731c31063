// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interned allocation stacks: one id per distinct stack (depth counts:
 * a stack and its prefix differ), ids stable as the table grows, frames
 * past the depth cut, the bound (past it: id 0, counted), a copy for a
 * forked child, an empty stack never kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "alloc_stack.h"

static void test_intern(void **state)
{
	struct alloc_stacks s = { 0 };
	uint64_t a[] = { 0x401000, 0x402000, 0x403000 };
	uint64_t deep[ALLOC_STACK_DEPTH + 3];
	const uint64_t *got;
	uint32_t ia, ib, ic;

	(void)state;
	ia = alloc_stack_intern(&s, a, 3);
	ib = alloc_stack_intern(&s, a, 2);
	assert_true(ia && ib && ia != ib);
	assert_int_equal(alloc_stack_intern(&s, a, 3), ia);
	assert_int_equal(alloc_stack_get(&s, ia, &got), 3);
	assert_memory_equal(got, a, sizeof(a));
	assert_int_equal(alloc_stack_intern(&s, a, 0), 0);
	assert_int_equal(alloc_stack_get(&s, 0, &got), 0);
	assert_int_equal(alloc_stack_get(&s, 999, &got), 0);
	for (unsigned int i = 0; i < ALLOC_STACK_DEPTH + 3; i++)
		deep[i] = 0x500000 + i;
	/* Frames past the depth are cut: two stacks alike that far are one. */
	ic = alloc_stack_intern(&s, deep, ALLOC_STACK_DEPTH + 3);
	deep[ALLOC_STACK_DEPTH + 1] = 1;
	assert_int_equal(alloc_stack_intern(&s, deep, ALLOC_STACK_DEPTH + 2), ic);
	assert_int_equal(alloc_stack_get(&s, ic, &got), ALLOC_STACK_DEPTH);
	alloc_stacks_free(&s);
}

static void test_bound_and_copy(void **state)
{
	struct alloc_stacks s = { 0 }, c = { 0 };
	const uint64_t *got;
	uint64_t pc;

	(void)state;
	for (pc = 1; pc <= ALLOC_STACK_MAX; pc++)
		assert_int_equal(alloc_stack_intern(&s, &pc, 1), (uint32_t)pc);
	/* Ids stayed stable through every growth. */
	pc = 1234;
	assert_int_equal(alloc_stack_intern(&s, &pc, 1), 1234);
	pc = ALLOC_STACK_MAX + 1;
	assert_int_equal(alloc_stack_intern(&s, &pc, 1), 0);
	assert_int_equal(s.dropped, 1);
	assert_int_equal(alloc_stacks_copy(&c, &s), 0);
	assert_int_equal(alloc_stack_get(&c, 77, &got), 1);
	assert_int_equal(got[0], 77);
	pc = 77;
	assert_int_equal(alloc_stack_intern(&c, &pc, 1), 77);
	assert_int_equal(c.dropped, 1);
	alloc_stacks_free(&s);
	alloc_stacks_free(&c);
	/* A copy of nothing is nothing, and usable. */
	assert_int_equal(alloc_stacks_copy(&c, &s), 0);
	assert_int_equal(alloc_stack_intern(&c, &pc, 1), 1);
	alloc_stacks_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_bound_and_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
