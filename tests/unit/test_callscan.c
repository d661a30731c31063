// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The caller scan: which byte sequences end with a call instruction, and
 * which word of a stack copy is the first return address outside libc. The
 * address space here is fabricated: three code ranges (libc, an MPI library,
 * the program) with known bytes before each "return address".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "callscan.h"

static bool ends_call(const uint8_t *b, size_t n)
{
	return callscan_ends_with_call(b, n);
}

#define ENDS(...) do {							\
	const uint8_t b_[] = { __VA_ARGS__ };				\
	assert_true(ends_call(b_, sizeof(b_)));				\
} while (0)
#define NOT_ENDS(...) do {						\
	const uint8_t b_[] = { __VA_ARGS__ };				\
	assert_false(ends_call(b_, sizeof(b_)));			\
} while (0)

static void test_call_encodings(void **state)
{
	(void)state;
	ENDS(0x90, 0x90, 0x90, 0xe8, 0x10, 0x20, 0x30, 0x40);	/* call rel32 */
	ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xd0);	/* call *%rax */
	ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x41, 0xff, 0xd3);	/* call *%r11 */
	ENDS(0x90, 0x90, 0xff, 0x15, 0x00, 0x10, 0x00, 0x00);	/* call *disp32(%rip) */
	ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0x50, 0x08);	/* call *0x8(%rax) */
	ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0x14, 0x24);	/* call *(%rsp) */
	ENDS(0x90, 0x90, 0x90, 0x90, 0xff, 0x54, 0x24, 0x08);	/* call *0x8(%rsp) */
	ENDS(0x90, 0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00);	/* call *0x100(%rsp) */
	ENDS(0x90, 0x90, 0xff, 0x90, 0x00, 0x01, 0x00, 0x00);	/* call *0x100(%rax) */
	ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0x10);	/* call *(%rax) */
	ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x41, 0xff, 0x12);	/* call *(%r10) */

	NOT_ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0);	/* jmp *%rax */
	NOT_ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90);
	NOT_ENDS(0x48, 0x89, 0xc7, 0x31, 0xc0, 0x48, 0x8b, 0x07);	/* movs */
	/* FF 15 needs four displacement bytes: here the call would end elsewhere. */
	NOT_ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0x15, 0x00);
	NOT_ENDS(0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xe8);
	/* Too short to hold anything. */
	NOT_ENDS(0xd0);
}

/* A fabricated address space: [base, base + 0x1000) of code per owner. */
#define LIBC_BASE	0x7f0000000000ULL
#define MPI_BASE	0x7f0000100000ULL
#define APP_BASE	0x400000ULL
#define DATA_BASE	0x600000ULL	/* not code */
#define LIBC		10
#define MPI		11

static uint8_t code_libc[0x1000], code_mpi[0x1000], code_app[0x1000];
static unsigned int reads;

static uint8_t *code_of(uint64_t addr, uint64_t *base)
{
	if (addr >= LIBC_BASE && addr < LIBC_BASE + 0x1000)
		return *base = LIBC_BASE, code_libc;
	if (addr >= MPI_BASE && addr < MPI_BASE + 0x1000)
		return *base = MPI_BASE, code_mpi;
	if (addr >= APP_BASE && addr < APP_BASE + 0x1000)
		return *base = APP_BASE, code_app;
	return NULL;
}

static bool fake_owner(void *ctx, uint64_t addr, comp_id *owner)
{
	(void)ctx;
	if (addr >= LIBC_BASE && addr < LIBC_BASE + 0x1000)
		*owner = LIBC;
	else if (addr >= MPI_BASE && addr < MPI_BASE + 0x1000)
		*owner = MPI;
	else if (addr >= APP_BASE && addr < APP_BASE + 0x1000)
		*owner = COMP_APP;
	else
		return false;
	return true;
}

static int fake_read(void *ctx, uint64_t addr, uint8_t *buf)
{
	uint64_t base;
	uint8_t *code = code_of(addr, &base);

	(void)ctx;
	reads++;
	if (!code || addr - base < CALLSCAN_CODE_BYTES)
		return -14;
	memcpy(buf, code + (addr - base) - CALLSCAN_CODE_BYTES, CALLSCAN_CODE_BYTES);
	return 0;
}

/* Put a call rel32 right before addr, so addr is a genuine return address. */
static uint64_t plant_call(uint64_t addr)
{
	uint64_t base;
	uint8_t *code = code_of(addr, &base);

	assert_non_null(code);
	code[addr - base - 5] = 0xe8;
	return addr;
}

static const struct callscan_ops ops = { fake_owner, fake_read, NULL };

static int reset(void **state)
{
	(void)state;
	memset(code_libc, 0x90, sizeof(code_libc));
	memset(code_mpi, 0x90, sizeof(code_mpi));
	memset(code_app, 0x90, sizeof(code_app));
	reads = 0;
	return 0;
}

static void test_caller_past_libc(void **state)
{
	uint64_t stack[12] = {
		plant_call(LIBC_BASE + 0x100),	/* into sysmalloc, from the brk wrapper */
		0x1234,				/* a saved register */
		DATA_BASE + 8,			/* a data pointer */
		LIBC_BASE + 0x200,		/* code, but no call before it: stale */
		plant_call(LIBC_BASE + 0x300),	/* into malloc */
		APP_BASE + 0x40,		/* function pointer into the app: no call */
		plant_call(APP_BASE + 0x80),	/* the app called malloc here */
		plant_call(MPI_BASE + 0x10),	/* further out: not wanted */
	};
	struct callscan_result res;

	(void)state;
	assert_true(callscan_find_caller((const uint8_t *)stack, sizeof(stack), LIBC, &ops, &res));
	assert_int_equal(res.caller, APP_BASE + 0x80);
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.frames, 3);
}

static void test_caller_is_mpi(void **state)
{
	uint64_t stack[4] = {
		plant_call(LIBC_BASE + 0x100),
		plant_call(MPI_BASE + 0x500),	/* opal_malloc under MPI_Alloc_mem */
		plant_call(APP_BASE + 0x80),
	};
	struct callscan_result res;

	(void)state;
	assert_true(callscan_find_caller((const uint8_t *)stack, sizeof(stack), LIBC, &ops, &res));
	assert_int_equal(res.owner, MPI);
	assert_int_equal(res.caller, MPI_BASE + 0x500);
}

static void test_not_found(void **state)
{
	uint64_t stack[4] = {
		plant_call(LIBC_BASE + 0x100),
		plant_call(LIBC_BASE + 0x180),
		0, 0xffffffffffffffffULL,
	};
	struct callscan_result res;

	(void)state;
	assert_false(callscan_find_caller((const uint8_t *)stack, sizeof(stack), LIBC, &ops, &res));
	assert_int_equal(res.caller, 0);
	assert_int_equal(res.frames, 2);
	/* A short copy (7 bytes) holds no whole word: nothing read. */
	reads = 0;
	assert_false(callscan_find_caller((const uint8_t *)stack, 7, LIBC, &ops, &res));
	assert_int_equal(reads, 0);
	/* Unreadable code never counts as a return address. */
	stack[0] = LIBC_BASE + 4;
	assert_false(callscan_find_caller((const uint8_t *)stack, 8, LIBC, &ops, &res));
	assert_int_equal(res.frames, 0);
}

static void test_outermost(void **state)
{
	uint64_t stack[8] = {
		plant_call(LIBC_BASE + 0x100),	/* sysmalloc */
		plant_call(MPI_BASE + 0x500),	/* opal_malloc: the requester */
		plant_call(LIBC_BASE + 0x180),	/* qsort calling back into MPI */
		plant_call(MPI_BASE + 0x600),	/* ompi_mpi_init */
		plant_call(MPI_BASE + 0x700),	/* inside MPI_Init: the entry */
		plant_call(APP_BASE + 0x80),	/* main */
		plant_call(MPI_BASE + 0x800),	/* further out: not wanted */
	};
	struct callscan_result res;

	(void)state;
	assert_true(callscan_find_caller((const uint8_t *)stack, sizeof(stack), LIBC, &ops, &res));
	assert_int_equal(res.offset, 8);
	assert_int_equal(callscan_outermost((const uint8_t *)stack, sizeof(stack), res.offset, MPI,
					    LIBC, &ops), MPI_BASE + 0x700);
	/* The copy ends inside MPI: the entry is not known. */
	assert_int_equal(callscan_outermost((const uint8_t *)stack, 5 * 8, res.offset, MPI,
					    LIBC, &ops), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_encodings),
		cmocka_unit_test_setup(test_caller_past_libc, reset),
		cmocka_unit_test_setup(test_caller_is_mpi, reset),
		cmocka_unit_test_setup(test_not_found, reset),
		cmocka_unit_test_setup(test_outermost, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
