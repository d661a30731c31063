// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CSV sink through the sink interface: a process's rows go to its own
 * file (one row set per time to the ms), a process that ends leaves its
 * summary rows behind (spooled, not kept in memory) and summary.csv holds
 * them followed by the live processes'; run_info.csv carries the counters
 * and the run's identity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "columns.h"
#include "csv_out.h"
#include "sink.h"

/*
 * fsync, wrapped (-Wl,--wrap=fsync): what was synced, by the path its
 * descriptor names, so a test sees which writes were made durable.
 */
#define SYNCED_MAX	64
static char synced[SYNCED_MAX][256];
static unsigned int nsynced;

int __real_fsync(int fd);
int __wrap_fsync(int fd);
int __wrap_fsync(int fd)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (nsynced < SYNCED_MAX) {
		n = readlink(link, synced[nsynced], sizeof(synced[0]) - 1);
		synced[nsynced][n > 0 ? n : 0] = '\0';
		nsynced++;
	}
	return __real_fsync(fd);
}

/* Whether a path ending in tail was synced since the count was reset. */
static bool was_synced(const char *tail)
{
	size_t lt = strlen(tail);

	for (unsigned int i = 0; i < nsynced && i < SYNCED_MAX; i++) {
		size_t l = strlen(synced[i]);

		if (l >= lt && !strcmp(synced[i] + l - lt, tail))
			return true;
	}
	return false;
}

struct fixture {
	char dir[64];
	struct output_dir od;
	struct sink *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/memattr-ut-sink.XXXXXX");
	if (!mkdtemp(f->dir) || outdir_open(&f->od, f->dir, (uid_t)-1, (gid_t)-1, err, sizeof(err)))
		return -1;
	f->s = csv_sink_new(&f->od, false);
	*state = f;
	return f->s ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	f->s->ops->destroy(f->s);
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

static const struct sink_comp comps[] = {
	{ .name = "unattributed", .rss = 4096, .pss = 4096, .peak_rss = 8192, .peak_rss_time = 0.2,
	  .peak_pss = 8192, .peak_pss_time = 0.2 },
	{ .name = "app", .rss = 1048576, .pss = 1048576, .peak_rss = 1048576, .peak_rss_time = 0.1,
	  .peak_pss = 1048576, .peak_pss_time = 0.1 },
};

static struct sink_proc proc(int rank, pid_t pid, double t, void **state)
{
	struct sink_proc p = {
		.rank = rank, .pid = pid, .time = t, .comps = comps, .ncomps = 2, .state = state,
		.peak_from_events = true, .kernel_hwm = 1060864,
		.total = { .name = "total", .rss = 1052672, .pss = 1052672, .peak_rss = 1056768,
			   .peak_rss_time = 0.2, .peak_pss = 1056768, .peak_pss_time = 0.2 },
	};

	return p;
}

static struct sink_job job(double now)
{
	struct sink_job j = {
		.dir = "d", .now = now, .start_realtime = 1795000000.25, .interval_ms = 100,
		.modes = "", .version = "9.9", .cmdline = "memattr-bpf --job 'a,b'",
		.c = { .events = 42, .procs_traced = 2, .requests = 7, .unwind_failures = 1,
		       .unknown_pid_events = 11, .unplaced_events = 12, .traced_map_full = 13 },
	};

	return j;
}

static void test_rows_ended_and_live(void **state)
{
	struct fixture *f = *state;
	const struct sink_ops *ops = f->s->ops;
	void *slot0 = NULL, *slot1 = NULL;
	struct sink_job j = job(0.3);
	struct sink_proc a = proc(0, 100, 0.1, &slot0), b = proc(-1, 200, 0.1, &slot1);
	const struct sink_proc *live[] = { &a };
	char *text;

	ops->proc_sample(f->s, &j, &a);
	ops->proc_sample(f->s, &j, &b);
	a.time = 0.1004;	/* the same ms: not written twice */
	ops->proc_sample(f->s, &j, &a);
	a.time = 0.2;
	ops->proc_sample(f->s, &j, &a);
	assert_non_null(slot0);
	ops->proc_end(f->s, &j, &b);
	assert_null(slot1);		/* its file is closed, its state freed */
	ops->job_summary(f->s, &j, live, 1);

	text = slurp(f, "rank-0.csv");
	assert_string_equal(text, CSV_HEADER "\n"
			    "0.100,0,100,total,1052672,1052672\n"
			    "0.100,0,100,unattributed,4096,4096\n"
			    "0.100,0,100,app,1048576,1048576\n"
			    "0.200,0,100,total,1052672,1052672\n"
			    "0.200,0,100,unattributed,4096,4096\n"
			    "0.200,0,100,app,1048576,1048576\n");
	free(text);
	text = slurp(f, "pid-200.csv");
	assert_non_null(strstr(text, "0.100,,200,app,1048576,1048576\n"));
	free(text);
	/* The ended process first (from the spool), then the live one. */
	text = slurp(f, "summary.csv");
	assert_string_equal(text, SUMMARY_HEADER "\n"
			    ",200,total,1056768,0.200,1056768,0.200,1052672,1052672,,,events,1060864,0\n"
			    ",200,unattributed,8192,0.200,8192,0.200,4096,4096,,,,,\n"
			    ",200,app,1048576,0.100,1048576,0.100,1048576,1048576,,,,,\n"
			    "0,100,total,1056768,0.200,1056768,0.200,1052672,1052672,,,events,1060864,0\n"
			    "0,100,unattributed,8192,0.200,8192,0.200,4096,4096,,,,,\n"
			    "0,100,app,1048576,0.100,1048576,0.100,1048576,1048576,,,,,\n");
	free(text);
	ops->proc_end(f->s, &j, &a);
}

/* A second summary repeats the spool once, not twice. */
static void test_summary_rewritten_whole(void **state)
{
	struct fixture *f = *state;
	const struct sink_ops *ops = f->s->ops;
	void *slot = NULL;
	struct sink_job j = job(1);
	struct sink_proc a = proc(3, 300, 0.5, &slot);
	char *text;

	ops->proc_sample(f->s, &j, &a);
	ops->proc_end(f->s, &j, &a);
	ops->job_summary(f->s, &j, NULL, 0);
	ops->job_summary(f->s, &j, NULL, 0);
	text = slurp(f, "summary.csv");
	assert_string_equal(text, SUMMARY_HEADER "\n"
			    "3,300,total,1056768,0.200,1056768,0.200,1052672,1052672,,,events,1060864,0\n"
			    "3,300,unattributed,8192,0.200,8192,0.200,4096,4096,,,,,\n"
			    "3,300,app,1048576,0.100,1048576,0.100,1048576,1048576,,,,,\n");
	free(text);
}

static void test_run_info(void **state)
{
	struct fixture *f = *state;
	struct sink_job j = job(2.5);
	char *text;

	f->s->ops->job_summary(f->s, &j, NULL, 0);
	text = slurp(f, "run_info.csv");
	assert_non_null(strstr(text, "key,value\ninterval_ms,100\n"));
	assert_non_null(strstr(text, "\nduration_s,2.500\n"));
	assert_non_null(strstr(text, "\nevents,42\n"));
	assert_non_null(strstr(text, "\nmemory_requests,7\nunwind_failures,1\n"));
	assert_non_null(strstr(text, "\nprocesses_traced,2\n"));
	/* job() leaves memory_calls_fentry false: the syscall tracepoints. */
	assert_non_null(strstr(text, "\nmemory_calls,tracepoints\n"));
	/* What makes figures less exact is never hidden (issue 13). */
	assert_non_null(strstr(text, "\nevents_unknown_pid,11\n"));
	assert_non_null(strstr(text, "\nevents_unplaced,12\n"));
	assert_non_null(strstr(text, "\nprocesses_refused_map_full,13\n"));
	assert_non_null(strstr(text, "\nstart_time_unix_s,1795000000.250000\n"));
	assert_non_null(strstr(text, "\nversion,9.9\n"));
	/* A field with a comma is quoted (RFC 4180). */
	assert_non_null(strstr(text, "\ncommand_line,\"memattr-bpf --job 'a,b'\"\n"));
	assert_null(strstr(text, "probes_attached"));	/* no probe mode */
	assert_null(strstr(text, "infer"));		/* nothing inferred: no rows */
	free(text);
	j.memory_calls_fentry = true;
	f->s->ops->job_summary(f->s, &j, NULL, 0);
	text = slurp(f, "run_info.csv");
	assert_non_null(strstr(text, "\nmemory_calls,fentry\n"));
	free(text);
}

/* What the attach inferred is told apart: per component, what stayed unattributed, the cost. */
static void test_run_info_inferred(void **state)
{
	struct fixture *f = *state;
	struct sink_job j = job(2.5);
	char *text;

	j.c.inferred = (struct sink_inferred){ .processes = 2, .seconds = 0.25, .wall_seconds = 0.5,
					      .bytes_read = 1000, .allocations = 30,
					      .unattributed = 4096, .n = 2 };
	snprintf(j.c.inferred.by[0].name, sizeof(j.c.inferred.by[0].name), "app");
	j.c.inferred.by[0].bytes = 1 << 20;
	snprintf(j.c.inferred.by[1].name, sizeof(j.c.inferred.by[1].name), "lib:libtruth.so");
	j.c.inferred.by[1].bytes = 8192;
	f->s->ops->job_summary(f->s, &j, NULL, 0);
	text = slurp(f, "run_info.csv");
	assert_non_null(strstr(text, "\ninfer_processes,2\ninfer_cpu_s,0.250\ninfer_wall_s,0.500\n"
				     "infer_bytes_read,1000\ninfer_allocations,30\ninfer_budget_hits,0\n"
				     "inferred_unattributed_bytes,4096\ninferred_bytes:app,1048576\n"
				     "inferred_bytes:lib:libtruth.so,8192\n"));
	free(text);
}

/* Every line of a file: ends in a newline and has the 6 columns. */
static void assert_whole_rows(const char *text)
{
	size_t len = strlen(text);

	assert_true(len > 0);
	assert_int_equal(text[len - 1], '\n');
	for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
		int commas = 0;

		for (const char *c = l; *c != '\n'; c++)
			commas += *c == ',';
		assert_int_equal(commas, 5);
	}
}

static bool temp_left(const struct fixture *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	bool found = false;

	assert_non_null(d);
	while ((e = readdir(d)))
		found |= strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return found;
}

/*
 * The rewrites while the job runs are renamed into place, not synced (a
 * node crash loses at most the time since the last rewrite, as for the
 * timelines); the last one, once the job is over, is synced: each file
 * and the directory that holds its new name.
 */
static void test_durable_at_end(void **state)
{
	struct fixture *f = *state;
	const struct sink_ops *ops = f->s->ops;
	struct sink *k = mpi_calls_sink_new(&f->od);
	void *slot = NULL;
	struct sink_job j = job(0.5);
	struct sink_proc a = proc(0, 100, 0.5, &slot);
	const struct sink_proc *live[] = { &a };
	char *text;

	assert_non_null(k);
	ops->proc_sample(f->s, &j, &a);
	nsynced = 0;
	ops->job_summary(f->s, &j, live, 1);
	k->ops->job_summary(k, &j, live, 1);
	assert_int_equal(nsynced, 0);
	text = slurp(f, "run_info.csv");
	assert_non_null(strstr(text, "\nfinished,0\n"));
	free(text);

	j.finished = true;
	ops->job_summary(f->s, &j, live, 1);
	k->ops->job_summary(k, &j, live, 1);
	/* Synced under the temporary name, before the rename. */
	{
		char tail[64];

		snprintf(tail, sizeof(tail), "/.%s.tmp.%d", "summary.csv", (int)getpid());
		assert_true(was_synced(tail));
		snprintf(tail, sizeof(tail), "/.%s.tmp.%d", "run_info.csv", (int)getpid());
		assert_true(was_synced(tail));
		snprintf(tail, sizeof(tail), "/.%s.tmp.%d", FILE_MPI_CALLS, (int)getpid());
		assert_true(was_synced(tail));
	}
	assert_true(was_synced(f->dir));
	text = slurp(f, "run_info.csv");
	assert_non_null(strstr(text, "\nfinished,1\n"));
	free(text);
	text = slurp(f, "summary.csv");
	assert_non_null(strstr(text, "0,100,total,"));
	free(text);
	assert_int_equal(f->od.nfailed, 0);

	/* A last write that fails (a full disk) is still reported, and the files stay whole. */
	{
		struct rlimit old, lim;

		assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
		signal(SIGXFSZ, SIG_IGN);
		lim = old;
		lim.rlim_cur = 300;
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
		ops->job_summary(f->s, &j, live, 1);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	}
	assert_int_equal(f->od.nfailed, 2);	/* run_info.csv and summary.csv */
	assert_false(temp_left(f));
	text = slurp(f, "run_info.csv");
	assert_non_null(strstr(text, "\nfinished,1\n"));
	free(text);
	ops->proc_end(f->s, &j, &a);
	k->ops->destroy(k);
}

/*
 * A disk that fills during the run, made with RLIMIT_FSIZE (writes past it
 * fail with EFBIG): the rank file is cut back to whole rows and written on
 * once there is room, the failure is counted once per file, run_info.csv
 * is not left half-written nor its temporary file behind.
 */
static void test_full_disk(void **state)
{
	struct fixture *f = *state;
	const struct sink_ops *ops = f->s->ops;
	struct rlimit old, lim;
	void *slot = NULL;
	struct sink_job j = job(0.1);
	struct sink_proc a = proc(0, 100, 0.1, &slot);
	const struct sink_proc *live[] = { &a };
	char *text;
	size_t before;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 300;	/* the header and two samples fit, not three */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (int i = 1; i <= 5; i++) {
		a.time = 0.1 * i;
		ops->proc_sample(f->s, &j, &a);
	}
	ops->job_summary(f->s, &j, live, 1);
	ops->job_summary(f->s, &j, live, 1);
	lim.rlim_cur = old.rlim_cur;	/* room again: the next sample lands */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	text = slurp(f, "rank-0.csv");
	assert_whole_rows(text);
	before = strlen(text);
	assert_true(before <= 300);
	assert_non_null(strstr(text, "0.200,0,100,app,"));
	assert_null(strstr(text, "0.300,"));
	free(text);
	/*
	 * rank-0.csv failed, and run_info.csv and summary.csv (each longer
	 * than 300 bytes): each counted once.
	 */
	assert_int_equal(f->od.nfailed, 3);
	assert_false(temp_left(f));

	a.time = 0.6;
	ops->proc_sample(f->s, &j, &a);
	text = slurp(f, "rank-0.csv");
	assert_whole_rows(text);
	assert_true(strlen(text) > before);
	assert_non_null(strstr(text, "0.600,0,100,total,"));	/* after the gap */
	free(text);
	ops->job_summary(f->s, &j, live, 1);
	text = slurp(f, "summary.csv");
	assert_non_null(strstr(text, "0,100,total,"));
	free(text);
	ops->proc_end(f->s, &j, &a);
	signal(SIGXFSZ, SIG_DFL);
}

/*
 * The opt-in modes' files as sinks (mpi_calls_sink.c, alloc_stacks_sink.c,
 * heap_sites_sink.c on row_sink.c): fed views, each writes its file whole
 * at a summary, an ended process's rows (spooled at its end) first, then
 * the live processes'; the rows to the byte, as the engine wrote them
 * before they were sinks. A stack the engine could not name fails the
 * file, which stays as it was.
 */
static const struct sink_job modes_job = { .job = "1", .node = "n1" };

/* Ends ended (its rows to the spool), then a summary with live. */
static void run(struct sink *k, const struct sink_proc *ended, const struct sink_proc *live)
{
	const struct sink_proc *const lives[] = { live };

	k->ops->proc_end(k, &modes_job, ended);
	k->ops->job_summary(k, &modes_job, lives, 1);
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
	k->ops->job_summary(k, &modes_job, live_ok, 1);
	/* Said once on stderr; the file keeps its last whole version. */
	k->ops->job_summary(k, &modes_job, live_bad, 1);
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

/* heap_sites_peak.csv: the peak's sites of each process, heap_sites.csv's columns, the end's sites not. */
static void test_heap_peak_sites(void **state)
{
	struct fixture *f = *state;
	const struct sink_heap_site end[] = {
		{ "app", "a.out:grow+0x1a", 3, 3, 0, 4096, 6144 },
	};
	const struct sink_heap_site peak[] = {
		{ "app", "a.out:grow+0x1a", 2, 0, 4096, 4096, 4096 },
	};
	struct sink_proc ended = { .rank = 2, .pid = 41, .heap_sites = end, .nheap_sites = 1,
				   .heap_peak_sites = peak, .nheap_peak_sites = 1 };
	struct sink *k = heap_peak_sink_new(&f->od);
	char *text;

	assert_non_null(k);
	run(k, &ended, &(struct sink_proc){ .rank = 3, .pid = 42 });
	text = slurp(f, FILE_HEAP_SITES_PEAK);
	assert_string_equal(text, HEAP_SITES_HEADER "\n"
			    "2,41,app,a.out:grow+0x1a,2,0,4096,4096,4096\n");
	free(text);
	k->ops->destroy(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_ended_and_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_rewritten_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_info_inferred, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_durable_at_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mpi_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_stacks_unnamed_fails_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_sites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_peak_sites, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
