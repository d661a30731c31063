// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gz_read follows a gzip stream still being written, as the daemon's
 * spool is and as `memattr-bpf --job` without root reads it: what was
 * sync-flushed is read, then end of file; after clearerr() what was
 * written since; a finished stream ends cleanly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "gz_read.h"

static void put(gzFile w, const char *s)
{
	assert_int_equal(gzputs(w, s), (int)strlen(s));
	/* What the spool's writer does after every sample. */
	assert_int_equal(gzflush(w, Z_SYNC_FLUSH), Z_OK);
}

static size_t take(FILE *r, char *buf, size_t cap)
{
	size_t n = fread(buf, 1, cap - 1, r);

	buf[n] = '\0';
	return n;
}

static void test_follow_growing_stream(void **state)
{
	char path[] = "/tmp/test_gz_read.XXXXXX", buf[256];
	int fd = mkstemp(path);
	gzFile w;
	FILE *r;

	(void)state;
	assert_true(fd >= 0);
	w = gzdopen(dup(fd), "wb");
	assert_non_null(w);
	put(w, "time_s,rank\n0.1,0\n");

	/* Its own open file (the daemon opens one per client): not the writer's offset. */
	r = gz_open_read(fopen(path, "r"), UINT64_MAX);
	assert_non_null(r);
	assert_int_equal(take(r, buf, sizeof(buf)), 18);
	assert_string_equal(buf, "time_s,rank\n0.1,0\n");
	assert_int_equal(take(r, buf, sizeof(buf)), 0);
	assert_true(feof(r));
	assert_false(ferror(r));

	/* Nothing new yet: still just the end, no error. */
	clearerr(r);
	assert_int_equal(take(r, buf, sizeof(buf)), 0);
	assert_false(ferror(r));

	put(w, "0.2,0\n");
	clearerr(r);
	assert_int_equal(take(r, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "0.2,0\n");

	/* The writer finishes (the trailer): the rest, then a clean end. */
	assert_int_equal(gzputs(w, "0.3,0\n"), 6);
	assert_int_equal(gzclose(w), Z_OK);
	clearerr(r);
	assert_int_equal(take(r, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "0.3,0\n");
	clearerr(r);
	assert_int_equal(take(r, buf, sizeof(buf)), 0);
	assert_false(ferror(r));
	fclose(r);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follow_growing_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
