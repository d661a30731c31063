// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The opt-in modes' files as sinks (output/mpi_calls_sink.c,
 * alloc_stacks_sink.c, heap_sites_sink.c on row_sink.c): fed views, each
 * writes its file whole at a summary, an ended process's rows (spooled at
 * its end) first, then the live processes'; the rows to the byte, as the
 * engine wrote them before they were sinks. A stack the engine could not
 * name fails the file, which stays as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "columns.h"
#include "csv_out.h"
#include "sink.h"

struct fixture {
	char dir[64];
	struct output_dir od;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/memattr-ut-modes.XXXXXX");
	if (!mkdtemp(f->dir) || outdir_open(&f->od, f->dir, (uid_t)-1, (gid_t)-1, err, sizeof(err)))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	outdir_close(&f->od);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static char *slurp(const struct fixture *f, const char *name)
{
	char path[128], *buf = NULL;
	size_t len = 0;
	FILE *in, *out = open_memstream(&buf, &len);
	int c;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	in = fopen(path, "r");
	assert_non_null(in);
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	fclose(in);
	fclose(out);
	return buf;
}

static const struct sink_job job = { .job = "1", .node = "n1" };

/* Ends ended (its rows to the spool), then a summary with live. */
static void run(struct sink *k, const struct sink_proc *ended, const struct sink_proc *live)
{
	const struct sink_proc *const lives[] = { live };

	k->ops->proc_end(k, &job, ended);
	k->ops->job_summary(k, &job, lives, 1);
}

static void test_mpi_calls(void **state)
{
	struct fixture *f = *state;
	const struct sink_mpi_fn a[] = {
		{ "MPI_Init", true, 1, 4096, 0, 4096, 0.5, 0.75 },
	};
	const struct sink_mpi_fn b[] = {
		{ "MPI_Alltoall", false, 0, 0, 8192, 0, 0, 0 },
		{ "MPI_Barrier", true, 12, 100, 40, 100, 1.25, 2 },
	};
	struct sink_proc ended = { .rank = 1, .pid = 11, .mpi_fns = a, .nmpi_fns = 1 };
	struct sink_proc live = { .rank = -1, .pid = 12, .mpi_fns = b, .nmpi_fns = 2 };
	struct sink *k = mpi_calls_sink_new(&f->od);
	char *text;

	assert_non_null(k);
	run(k, &ended, &live);
	text = slurp(f, FILE_MPI_CALLS);
	assert_string_equal(text, MPI_CALLS_HEADER "\n"
			    "1,11,MPI_Init,1,4096,0,4096,4096,0.500,0.750\n"
			    ",12,MPI_Alltoall,,0,8192,-8192,0,,\n"
			    ",12,MPI_Barrier,12,100,40,60,100,1.250,2.000\n");
	free(text);
	k->ops->destroy(k);
}

static void test_alloc_stacks(void **state)
{
	struct fixture *f = *state;
	const struct sink_stack a[] = {
		{ "app", "a.out:main+0x10;libc.so.6:malloc+0x4", "ab12;cd34", 8192, 16384 },
	};
	const struct sink_stack b[] = {
		{ "mpi", "a.out:main+0x10;libmpi.so.40:PMPI_Init+0x2,x", ";", 0, 4096 },
	};
	struct sink_proc ended = { .rank = 0, .pid = 21, .stacks = a, .nstacks = 1 };
	struct sink_proc live = { .rank = 1, .pid = 22, .stacks = b, .nstacks = 1 };
	struct sink *k = alloc_stacks_sink_new(&f->od);
	char *text;

	assert_non_null(k);
	run(k, &ended, &live);
	text = slurp(f, FILE_ALLOC_STACKS);
	assert_string_equal(text, ALLOC_STACKS_HEADER "\n"
			    "0,21,app,a.out:main+0x10;libc.so.6:malloc+0x4,8192,16384,ab12;cd34\n"
			    "1,22,mpi,\"a.out:main+0x10;libmpi.so.40:PMPI_Init+0x2,x\",0,4096,;\n");
	free(text);
	k->ops->destroy(k);
}

static void test_alloc_stacks_unnamed_fails_whole(void **state)
{
	struct fixture *f = *state;
	const struct sink_stack ok[] = { { "app", "a.out:main+0x10", "", 1, 1 } };
	const struct sink_stack unnamed[] = { { "app", NULL, NULL, 1, 1 } };
	const struct sink_proc *const live_ok[] = {
		&(const struct sink_proc){ .rank = 0, .pid = 31, .stacks = ok, .nstacks = 1 },
	};
	const struct sink_proc *const live_bad[] = {
		&(const struct sink_proc){ .rank = 0, .pid = 31, .stacks = unnamed, .nstacks = 1 },
	};
	struct sink *k = alloc_stacks_sink_new(&f->od);
	char *text;

	assert_non_null(k);
	k->ops->job_summary(k, &job, live_ok, 1);
	/* Said once on stderr; the file keeps its last whole version. */
	k->ops->job_summary(k, &job, live_bad, 1);
	text = slurp(f, FILE_ALLOC_STACKS);
	assert_string_equal(text, ALLOC_STACKS_HEADER "\n0,31,app,a.out:main+0x10,1,1,\n");
	free(text);
	assert_int_equal(f->od.nfailed, 1);
	k->ops->destroy(k);
}

static void test_heap_sites(void **state)
{
	struct fixture *f = *state;
	const struct sink_heap_site a[] = {
		{ "app", "a.out:grow+0x1a", 3, 1, 2048, 4096, 6144 },
	};
	const struct sink_heap_site b[] = {
		{ "unattributed", "0x7f00deadbeef", 1, 0, 16, 16, 16 },
	};
	struct sink_proc ended = { .rank = 2, .pid = 41, .heap_sites = a, .nheap_sites = 1 };
	struct sink_proc live = { .rank = 3, .pid = 42, .heap_sites = b, .nheap_sites = 1 };
	struct sink *k = heap_sites_sink_new(&f->od);
	char *text;

	assert_non_null(k);
	run(k, &ended, &live);
	/* A second summary: the spooled rows again, once. */
	run(k, &(struct sink_proc){ .rank = 4, .pid = 43 }, &live);
	text = slurp(f, FILE_HEAP_SITES);
	assert_string_equal(text, HEAP_SITES_HEADER "\n"
			    "2,41,app,a.out:grow+0x1a,3,1,2048,4096,6144\n"
			    "3,42,unattributed,0x7f00deadbeef,1,0,16,16,16\n");
	free(text);
	k->ops->destroy(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mpi_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_stacks_unnamed_fails_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_sites, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
