// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * remote_read_many on this process's own memory (process_vm_readv needs
 * no privilege for oneself): what it returns for each entry is what a
 * plain read of that address gives, and an unreadable entry stops it
 * there, so that the caller reads the rest one by one as before.
 *
 * Mutations checked to fail here: returning n whatever the kernel read
 * (test_stops_at_unreadable); `got / len` replaced by `(got + len - 1) / len`,
 * counting an entry read in part (test_part_of_an_entry); iov_base of the
 * local side not advanced by i * len (test_reads_each_address).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "remote_read.h"

#define LEN	32

static void test_reads_each_address(void **state)
{
	static const char a[LEN] = "the first entry point's bytes..";
	static const char b[LEN] = "a second one, elsewhere........";
	uint8_t c[LEN];
	uint64_t addrs[3];
	uint8_t out[3 * LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(c); i++)
		c[i] = (uint8_t)(0xa5 ^ i);
	addrs[0] = (uintptr_t)b;
	addrs[1] = (uintptr_t)a;
	addrs[2] = (uintptr_t)c;
	memset(out, 0, sizeof(out));
	assert_int_equal(remote_read_many(getpid(), addrs, 3, LEN, out), 3);
	assert_memory_equal(out, b, LEN);
	assert_memory_equal(out + LEN, a, LEN);
	assert_memory_equal(out + 2 * LEN, c, LEN);
}

static void test_stops_at_unreadable(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const char ok[LEN] = "readable before the hole........";
	uint64_t addrs[3];
	uint8_t out[3 * LEN];

	(void)state;
	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p, (size_t)page), 0);
	addrs[0] = (uintptr_t)ok;
	addrs[1] = (uintptr_t)p;	/* unmapped now */
	addrs[2] = (uintptr_t)ok;
	assert_int_equal(remote_read_many(getpid(), addrs, 3, LEN, out), 1);
	assert_memory_equal(out, ok, LEN);
	/* The hole first: nothing read, not an error. */
	addrs[0] = (uintptr_t)p;
	assert_int_equal(remote_read_many(getpid(), addrs, 3, LEN, out), 0);
}

/* An entry whose first bytes are readable and the rest not: not whole. */
static void test_part_of_an_entry(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t addrs[1];
	uint8_t out[LEN];

	(void)state;
	assert_true(p != MAP_FAILED);
	memset(p, 0x5a, (size_t)page);
	assert_int_equal(munmap(p + page, (size_t)page), 0);
	addrs[0] = (uintptr_t)(p + page - LEN / 2);
	assert_int_equal(remote_read_many(getpid(), addrs, 1, LEN, out), 0);
	addrs[0] = (uintptr_t)(p + page - LEN);
	assert_int_equal(remote_read_many(getpid(), addrs, 1, LEN, out), 1);
	munmap(p, (size_t)page);
}

static void test_nothing_asked_and_no_process(void **state)
{
	uint64_t addrs[1] = { 0 };
	uint8_t out[LEN];

	(void)state;
	assert_int_equal(remote_read_many(getpid(), addrs, 0, LEN, out), 0);
	/* Above the kernel's PID_MAX_LIMIT: no such process. */
	addrs[0] = (uintptr_t)out;
	assert_true(remote_read_many(4194305 + 7, addrs, 1, LEN, out) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_each_address),
		cmocka_unit_test(test_stops_at_unreadable),
		cmocka_unit_test(test_part_of_an_entry),
		cmocka_unit_test(test_nothing_asked_and_no_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
