// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's symbol cache (engine/symbol_cache.c): a path's file
 * identity is remembered for recheck_ns, so naming the frames of an
 * allocation stack stats each file once, not once per frame. What a
 * remembered lookup returns must be what a fresh one returns, a file
 * replaced under its path must be seen once the window has passed, and
 * two paths sharing a slot must never answer for each other.
 *
 * Mutations checked to fail here:
 * - the window test `now - s->at_ns < window` made `window` (a path
 *   never stat'ed again): test_replaced_file_seen_after_recheck;
 * - the memo never used (`s->path &&` made `0 &&`):
 *   test_remembered_within_window;
 * - `!strcmp(s->path, path)` dropped from the memo's test (a slot answers
 *   for any path): test_paths_sharing_a_slot;
 * - a failed stat not clearing the slot: test_removed_file.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbol_cache.h"

#define LONG_NS	(3600ULL * 1000000000ULL)

static char dir[64];

/* A copy of src at dir/name (a new file: its own inode). */
static void copy_to(const char *src, const char *name, char *path, size_t len)
{
	char buf[65536], tmp[128];
	int in, out;
	ssize_t n;

	snprintf(path, len, "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.tmp", dir);
	in = open(src, O_RDONLY);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	/* Replaced by rename, as a package upgrade does. */
	assert_int_equal(rename(tmp, path), 0);
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ma-symcache-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_remembered_within_window(void **state)
{
	struct symbol_cache sc = { .recheck_ns = LONG_NS };
	const struct elfsym_table *a, *b;
	char path[128];
	uint64_t ino;
	size_t n;

	(void)state;
	copy_to("/proc/self/exe", "lib.so", path, sizeof(path));
	ino = ino_of(path);
	a = symbol_cache_get(&sc, path);
	assert_non_null(a);
	assert_int_equal(a->ino, ino);
	n = a->nfuncs;
	assert_true(n > 0);
	/* Replaced: within the window the path still names what it named. */
	copy_to("fixtures/nofuncs.so", "lib.so", path, sizeof(path));
	assert_int_not_equal(ino_of(path), ino);
	b = symbol_cache_get(&sc, path);
	assert_non_null(b);
	assert_int_equal(b->ino, ino);
	assert_int_equal(b->nfuncs, n);
	assert_int_equal(sc.nfiles, 1);
	symbol_cache_free(&sc);
}

static void test_replaced_file_seen_after_recheck(void **state)
{
	/* 1 ns: every lookup stats again, as before the memo. */
	struct symbol_cache sc = { .recheck_ns = 1 };
	const struct elfsym_table *a, *b;
	char path[128];
	uint64_t ino;

	(void)state;
	copy_to("/proc/self/exe", "lib2.so", path, sizeof(path));
	ino = ino_of(path);
	a = symbol_cache_get(&sc, path);
	assert_non_null(a);
	assert_int_equal(a->ino, ino);
	assert_true(a->nfuncs > 0);
	copy_to("fixtures/nofuncs.so", "lib2.so", path, sizeof(path));
	b = symbol_cache_get(&sc, path);
	assert_non_null(b);
	assert_int_equal(b->ino, ino_of(path));
	assert_int_equal(b->nfuncs, 0);
	assert_int_equal(sc.nfiles, 2);
	/* The first file's table is still there for whoever maps it by another path. */
	symbol_cache_free(&sc);
}

/* More paths than slots: some share one, and each still names its own file. */
static void test_paths_sharing_a_slot(void **state)
{
	enum { N = SYMBOL_CACHE_PATHS + 8 };
	struct symbol_cache sc = { .recheck_ns = LONG_NS };
	char path[N][128], name[32];

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p%d.so", i);
		copy_to("fixtures/nofuncs.so", name, path[i], sizeof(path[i]));
	}
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++) {
			const struct elfsym_table *t = symbol_cache_get(&sc, path[i]);

			assert_non_null(t);
			assert_int_equal(t->ino, ino_of(path[i]));
		}
	}
	symbol_cache_free(&sc);
}

static void test_removed_file(void **state)
{
	struct symbol_cache sc = { .recheck_ns = 1 };
	char path[128];

	(void)state;
	copy_to("fixtures/nofuncs.so", "gone.so", path, sizeof(path));
	assert_non_null(symbol_cache_get(&sc, path));
	assert_int_equal(unlink(path), 0);
	assert_null(symbol_cache_get(&sc, path));
	/* The slot was cleared: a long window now cannot bring the old file back. */
	sc.recheck_ns = LONG_NS;
	assert_null(symbol_cache_get(&sc, path));
	symbol_cache_free(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remembered_within_window),
		cmocka_unit_test(test_replaced_file_seen_after_recheck),
		cmocka_unit_test(test_paths_sharing_a_slot),
		cmocka_unit_test(test_removed_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
