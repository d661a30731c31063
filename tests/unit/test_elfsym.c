// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ELF symbols: the file offset of a function (where a uprobe goes) and the
 * function at a file offset (naming a call site), checked against this very
 * test binary, whose function addresses the running process knows; and the
 * libraries it asks the loader for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "elfsym.h"

__attribute__((noinline)) int elfsym_test_target(int x);
__attribute__((noinline)) int elfsym_test_target(int x)
{
	return x * 3 + 1;
}

/* File offset of a code address of this process, from /proc/self/maps. */
static uint64_t file_offset_of(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, off;
	char line[512], perms[8];
	uint64_t res = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx", &start, &end, perms, &off) == 4 &&
		    addr >= start && addr < end)
			res = addr - start + off;
	fclose(f);
	return res;
}

static void test_offsets_and_names(void **state)
{
	struct elfsym_table t;
	uint64_t off, delta, want;
	const char *name;

	(void)state;
	assert_int_equal(elfsym_test_target(1), 4);
	assert_int_equal(elfsym_load(&t, "/proc/self/exe"), 0);
	want = file_offset_of((uint64_t)(uintptr_t)&elfsym_test_target);
	assert_int_equal(elfsym_func_offset(&t, "elfsym_test_target", &off), 0);
	assert_int_equal(off, want);
	name = elfsym_name_at(&t, off + 3, &delta);
	assert_non_null(name);
	assert_string_equal(name, "elfsym_test_target");
	assert_int_equal(delta, 3);
	assert_int_equal(elfsym_func_offset(&t, "no_such_function_here", &off), -ENOENT);
	/* An offset in no loaded segment names nothing. */
	assert_null(elfsym_name_at(&t, 1ULL << 40, &delta));
	elfsym_free(&t);
}

/* The file /proc/self/maps maps addr from, into path. */
static void file_of(uint64_t addr, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end;
	char line[512];

	assert_non_null(f);
	path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *slash = strchr(line, '/');

		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && addr >= start && addr < end &&
		    slash) {
			slash[strcspn(slash, "\n")] = '\0';
			snprintf(path, len, "%s", slash);
		}
	}
	fclose(f);
	assert_true(path[0] == '/');
}

/*
 * Names looked up among libc's thousands of functions (the lookup every
 * new process image makes for libc's entry points) land where the loader
 * put them; names that sort around them do not stand in for them.
 */
static void test_libc_names(void **state)
{
	static const char *const names[] = { "malloc", "free", "calloc", "realloc", "mmap",
					      "munmap", "brk", "posix_memalign" };
	/* libc's own definitions: under ASan, the default scope finds its interceptors first. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct elfsym_table t;
	char path[512];
	uint64_t off;

	(void)state;
	assert_non_null(libc);
	file_of((uint64_t)(uintptr_t)dlsym(libc, "gnu_get_libc_version"), path, sizeof(path));
	assert_int_equal(elfsym_load(&t, path), 0);
	assert_true(t.nfuncs > 1000);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *fn = dlsym(libc, names[i]);

		assert_non_null(fn);
		assert_int_equal(elfsym_func_offset(&t, names[i], &off), 0);
		assert_int_equal(off, file_offset_of((uint64_t)(uintptr_t)fn));
	}
	assert_int_equal(elfsym_func_offset(&t, "mallo", &off), -ENOENT);
	assert_int_equal(elfsym_func_offset(&t, "mallocz", &off), -ENOENT);
	assert_int_equal(elfsym_func_offset(&t, "", &off), -ENOENT);
	elfsym_free(&t);
	dlclose(libc);
}

static void test_not_elf(void **state)
{
	struct elfsym_table t;
	struct elfsym_needed nd;

	(void)state;
	assert_int_equal(elfsym_load(&t, "fixtures/garbage.bin"), -ENOEXEC);
	assert_int_equal(elfsym_load(&t, "fixtures/no/such/file"), -ENOENT);
	assert_int_equal(elfsym_read_needed("fixtures/garbage.bin", &nd), -ENOEXEC);
}

/*
 * A library without one function (data only, like glibc's stub libraries
 * once were): an empty table, not qsort(NULL, 0, ...), which UBSan refuses
 * (qsort's first argument is declared nonnull). fixtures/nofuncs.so is
 * `int x = 1; int y[4] = {1, 2, 3, 4};` built with `gcc -shared -nostdlib
 * -fPIC` and stripped: two data symbols, no function.
 */
static void test_no_functions(void **state)
{
	struct elfsym_table t;
	uint64_t delta;

	(void)state;
	assert_int_equal(elfsym_load(&t, "fixtures/nofuncs.so"), 0);
	assert_int_equal(t.nfuncs, 0);
	assert_null(elfsym_name_at(&t, 0x1000, &delta));
	elfsym_free(&t);
}

static void test_needed(void **state)
{
	struct elfsym_needed nd;
	bool cmocka = false, libc = false;

	(void)state;
	assert_int_equal(elfsym_read_needed("/proc/self/exe", &nd), 0);
	for (size_t i = 0; i < nd.n; i++) {
		cmocka |= !strncmp(nd.names[i], "libcmocka.so", 12);
		libc |= !strcmp(nd.names[i], "libc.so.6");
	}
	assert_true(cmocka);
	assert_true(libc);
	elfsym_needed_free(&nd);
	assert_int_equal(nd.n, 0);
}

/*
 * Where this binary's writable segment ends in memory (.bss included),
 * found from its rw-p mapping: the loader made the segment's RELRO part
 * read-only, so that mapping starts a page or more into the segment, not
 * at its first page (reading only a mapping of the first page found none:
 * a library's .bss then swallowed the allocations mapped right above it).
 */
extern char _end[];
static int data_probe = 1;

static void test_writable_end(void **state)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, off;
	uint64_t addr = (uintptr_t)&data_probe, seg_end = 0, want;
	char line[512], perms[8];
	bool found = false;
	int fd;

	(void)state;
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %7s %llx", &start, &end, perms, &off) == 4 &&
			addr >= start && addr < end;
	fclose(f);
	assert_true(found);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elfsym_writable_end(fd, start, off, &seg_end), 0);
	want = ((uintptr_t)_end + ELFSYM_PAGE - 1) & ~(ELFSYM_PAGE - 1);
	assert_int_equal(seg_end, want);
	/* An offset no writable segment holds (the ELF header's). */
	assert_int_equal(elfsym_writable_end(fd, start, 0, &seg_end), -ENOENT);
	close(fd);
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	assert_int_equal(elfsym_writable_end(fd, start, off, &seg_end), -ENOEXEC);
	close(fd);
	data_probe++;
}

/*
 * GNU build IDs: the library the Makefile linked with --build-id=0xBUILDID_HEX
 * gives exactly that, by elfsym_build_id and in its symbol table; the same
 * code linked with --build-id=none, a file that is gone and one that is
 * not ELF give "" and no error.
 */
static void test_build_id(void **state)
{
	char hex[2 * ELFSYM_BUILD_ID_MAX + 1], small[8];
	struct elfsym_table t;

	(void)state;
	assert_int_equal(elfsym_build_id(BUILDID_DIR "/buildid_fixed.so", hex, sizeof(hex)), 0);
	assert_string_equal(hex, BUILDID_HEX);
	assert_int_equal(elfsym_load(&t, BUILDID_DIR "/buildid_fixed.so"), 0);
	assert_string_equal(t.build_id, BUILDID_HEX);
	elfsym_free(&t);

	strcpy(hex, "x");
	assert_int_equal(elfsym_build_id(BUILDID_DIR "/buildid_none.so", hex, sizeof(hex)), 0);
	assert_string_equal(hex, "");
	assert_int_equal(elfsym_load(&t, BUILDID_DIR "/buildid_none.so"), 0);
	assert_string_equal(t.build_id, "");
	assert_true(elfsym_func_offset(&t, "buildid_fixture", &(uint64_t){ 0 }) == 0);
	elfsym_free(&t);

	strcpy(hex, "x");
	assert_int_equal(elfsym_build_id(BUILDID_DIR "/no-such-library.so", hex, sizeof(hex)), 0);
	assert_string_equal(hex, "");
	strcpy(hex, "x");
	assert_int_equal(elfsym_build_id("fixtures/garbage.bin", hex, sizeof(hex)), 0);
	assert_string_equal(hex, "");
	/* Too small a buffer: nothing rather than a cut ID. */
	assert_int_equal(elfsym_build_id(BUILDID_DIR "/buildid_fixed.so", small, sizeof(small)), 0);
	assert_string_equal(small, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_and_names),
		cmocka_unit_test(test_libc_names),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_no_functions),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_writable_end),
		cmocka_unit_test(test_build_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
