// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report on inputs a fuzzer or a hostile user would write: each case
 * here was a bug (issue 13) and must stay fixed. Every run is written to a
 * fresh directory, read with rp_load_dir and drawn with rp_html_write, as
 * `memattr-bpf report` does; the sanitizer build (make sanitize-test) turns
 * any stray read into a failure, the release build checks the figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "report.h"

#define HDR	"time_s,rank,pid,component,rss_bytes,pss_bytes\n"
#define CALLS_HDR "rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,peak_bytes," \
		  "first_growth_s,last_growth_s\n"
#define I64MAX	"9223372036854775807"

struct tmprun {
	char dir[64];
	int dirfd;
	struct rp_run run;
	char err[RP_ERRLEN];
	char *html;
	size_t len;
};

static void put(struct tmprun *r, const char *name, const char *text)
{
	int fd = openat(r->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void mk(struct tmprun *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/memattr-rp-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY);
	assert_true(r->dirfd >= 0);
}

/* Load and draw the run: 0 when both worked. */
static int draw(struct tmprun *r)
{
	FILE *f;
	int ret;

	if (rp_load_dir(&r->run, r->dirfd, r->dir, r->err, sizeof(r->err)))
		return -1;
	f = open_memstream(&r->html, &r->len);
	assert_non_null(f);
	ret = rp_html_write(f, &r->run);
	assert_int_equal(fclose(f), 0);
	return ret;
}

static void rm(struct tmprun *r)
{
	char cmd[128];

	rp_run_free(&r->run);
	free(r->html);
	close(r->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Finding 1: every total 0 and the first sample one interval in. The job's
 * peak bucket was searched from bucket 0, where nobody had a sample yet,
 * and the chart then indexed its data at peak - first = (size_t)-1.
 */
static void test_zero_late_start(void **state)
{
	struct tmprun r;
	struct rp_agg a;

	(void)state;
	mk(&r);
	put(&r, "rank-0.csv", HDR "0.100,0,100,total,0,0\n0.100,0,100,app,0,0\n");
	assert_int_equal(draw(&r), 0);
	assert_int_equal(rp_agg_build(&r.run, rp_interval(&r.run), -1, &a), 0);
	assert_int_equal(a.first_b, 1);
	assert_true(a.peak_b >= a.first_b && a.peak_b < a.nb);
	rp_agg_free(&a);
	rm(&r);
}

/* No negative number of bytes or calls, and no negative width, anywhere on the page. */
static void assert_no_negative(const struct tmprun *r)
{
	assert_non_null(r->html);
	if (strstr(r->html, "width:-"))
		fail_msg("negative CSS width: %.80s", strstr(r->html, "width:-"));
	if (strstr(r->html, ">-"))
		fail_msg("negative figure: %.80s", strstr(r->html, ">-"));
}

/* Finding 6, components: two ranks at INT64_MAX each summed into the job total. */
static void test_overflow_components(void **state)
{
	struct tmprun r;
	struct rp_agg a;

	(void)state;
	mk(&r);
	put(&r, "rank-0.csv", HDR "0.100,0,100,total," I64MAX ",0\n0.100,0,100,app," I64MAX ",0\n");
	put(&r, "rank-1.csv", HDR "0.100,1,101,total," I64MAX ",0\n0.100,1,101,app," I64MAX ",0\n");
	/* One sample whose components alone overflow: not whole, so left out. */
	put(&r, "rank-2.csv", HDR "0.100,2,102,total,5,0\n0.100,2,102,app,5,0\n"
	    "0.200,2,102,total,4,0\n0.200,2,102,app," I64MAX ",0\n0.200,2,102,mpi," I64MAX ",0\n");
	assert_int_equal(draw(&r), 0);
	assert_int_equal(r.run.dropped_samples, 1);
	assert_int_equal(rp_agg_build(&r.run, rp_interval(&r.run), -1, &a), 0);
	for (size_t b = 0; b < a.nb; b++) {
		assert_true(a.tot[b] >= 0);
		for (size_t g = 0; g < RP_MAX_GROUPS; g++)
			assert_true(a.grp[b * RP_MAX_GROUPS + g] >= 0);
	}
	assert_true(a.tot[a.peak_b] == INT64_MAX);
	rp_agg_free(&a);
	assert_no_negative(&r);
	rm(&r);
}

/* Finding 6, MPI calls: counts and bytes summed over ranks. */
static void test_overflow_calls(void **state)
{
	struct tmprun r;

	(void)state;
	mk(&r);
	put(&r, "rank-0.csv", HDR "0.100,0,100,total,10,0\n0.100,0,100,mpi,10,0\n");
	put(&r, "mpi_calls.csv", CALLS_HDR
	    "0,100,MPI_Init," I64MAX "," I64MAX "," I64MAX "," I64MAX "," I64MAX ",0.1,0.2\n"
	    "1,101,MPI_Init," I64MAX "," I64MAX "," I64MAX "," I64MAX "," I64MAX ",0.1,0.2\n"
	    "2,102,MPI_Init,3,1,1,1,1,0.1,0.2\n");
	assert_int_equal(draw(&r), 0);
	assert_no_negative(&r);
	/* The sum of calls saturates: the largest count, never a wrapped one. */
	assert_non_null(strstr(r.html, "9,223,372,036,854,775,807"));
	rm(&r);
}

/* The sums saturate both ways: net bytes may be negative. */
static void test_sat_add(void **state)
{
	(void)state;
	assert_true(rp_sat_add(INT64_MAX, 1) == INT64_MAX);
	assert_true(rp_sat_add(INT64_MIN, -1) == INT64_MIN);
	assert_true(rp_sat_add(INT64_MIN, INT64_MAX) == -1);
	assert_true(rp_sat_add(40, 2) == 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_late_start),
		cmocka_unit_test(test_overflow_components),
		cmocka_unit_test(test_overflow_calls),
		cmocka_unit_test(test_sat_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
