// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * page_runs: the present pages of a range, from PAGEMAP_SCAN where the
 * kernel has it and from pagemap's entries elsewhere, must be the same
 * runs. Read on this test's own mapping, with a known pattern of pages
 * touched. (Checked: a scan that drops its last batch, or a pread path
 * that takes bit 62 for presence, fails test_scan_and_pread_agree.)
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "page_runs.h"

#define NPAGES	2048
#define PG	4096ULL

/* Touched: pages whose index is 3 mod 7, and the run 1000..1599 (more runs than one scan batch). */
static bool touched(size_t i)
{
	return i % 7 == 3 || (i >= 1000 && i < 1600);
}

static int64_t expected_bytes(size_t from, size_t to)
{
	int64_t n = 0;

	for (size_t i = from; i < to; i++)
		n += touched(i) ? (int64_t)PG : 0;
	return n;
}

/* Linux 6.7 or later: the ioctl must have been used, or the test compared pread with itself. */
static bool kernel_has_scan(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 7);
}

static void test_scan_and_pread_agree(void **state)
{
	struct page_runs scan = { 0 }, pr = { 0 };
	unsigned char *m = mmap(NULL, NPAGES * PG, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uintptr_t)m;
	size_t cur = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_true(fd >= 0);
	madvise(m, NPAGES * PG, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < NPAGES; i++)
		if (touched(i))
			m[i * PG] = 1;
	page_runs_force_pread(false);
	assert_int_equal(page_runs_read(fd, base, base + NPAGES * PG, &scan), 0);
	assert_int_equal(page_runs_scan_used(), kernel_has_scan());
	page_runs_force_pread(true);
	assert_int_equal(page_runs_read(fd, base, base + NPAGES * PG, &pr), 0);
	page_runs_force_pread(false);
	assert_int_equal(scan.n, pr.n);
	for (size_t i = 0; i < scan.n; i++) {
		assert_int_equal(scan.v[i].start, pr.v[i].start);
		assert_int_equal(scan.v[i].end, pr.v[i].end);
	}
	/* Counted region by region, in ascending order, from one read. */
	assert_int_equal(page_runs_bytes(&scan, base, base + NPAGES * PG, &cur), expected_bytes(0, NPAGES));
	cur = 0;
	assert_int_equal(page_runs_bytes(&scan, base, base + 10 * PG, &cur), expected_bytes(0, 10));
	assert_int_equal(page_runs_bytes(&scan, base + 10 * PG, base + 1200 * PG, &cur), expected_bytes(10, 1200));
	assert_int_equal(page_runs_bytes(&scan, base + 1200 * PG, base + 1300 * PG, &cur), expected_bytes(1200, 1300));
	/* A query behind the cursor is still right. */
	assert_int_equal(page_runs_bytes(&scan, base + 5 * PG, base + 9 * PG, &cur), expected_bytes(5, 9));
	page_runs_free(&scan);
	page_runs_free(&pr);
	close(fd);
	munmap(m, NPAGES * PG);
}

/*
 * What a count still has to read of a region: from its first page not in
 * the runs to the end of its last one; nothing when all are in. (Checked:
 * without the gap before the first run, the first case's first page is
 * the gap after run 0; without the tail, the last page out is missed.)
 */
static void test_absent_pages(void **state)
{
	struct page_run v[] = { { 0x10000, 0x14000 }, { 0x15000, 0x18000 }, { 0x20000, 0x30000 } };
	struct page_runs runs = { .v = v, .n = 3, .cap = 3 };
	uint64_t first = 0, last_end = 0;
	size_t cur = 0;

	(void)state;
	/* Out: 0xf000 before the first run, the holes between, 0x30000 on. */
	assert_true(page_runs_absent(&runs, 0xf000, 0x32000, &cur, &first, &last_end));
	assert_int_equal(first, 0xf000);
	assert_int_equal(last_end, 0x32000);
	/* Within the runs, from the middle of one: the holes between them only. */
	cur = 0;
	assert_true(page_runs_absent(&runs, 0x12000, 0x28000, &cur, &first, &last_end));
	assert_int_equal(first, 0x14000);
	assert_int_equal(last_end, 0x20000);
	/* All in, asked in ascending order after the cursor moved on. */
	assert_false(page_runs_absent(&runs, 0x20000, 0x30000, &cur, &first, &last_end));
	assert_false(page_runs_absent(&runs, 0x10000, 0x14000, &cur, &first, &last_end));
	/* The tail only. */
	assert_true(page_runs_absent(&runs, 0x20000, 0x34000, &cur, &first, &last_end));
	assert_int_equal(first, 0x30000);
	assert_int_equal(last_end, 0x34000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_and_pread_agree),
		cmocka_unit_test(test_absent_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
