// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OOM post-mortem's pure parts: the limit a process lives under, read
 * from a fake /proc and cgroup tree under a root directory (v1 as on
 * hybrid machines, v2, none); the trend before the last sample; the fold
 * of many components; run_info.csv's oom_* rows; the metric; a killed
 * job's spool directory kept past --retain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "memcg.h"
#include "metrics.h"
#include "oom.h"
#include "report.h"
#include "sink.h"
#include "spool.h"
#include "trend.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int make_root(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/memattr-oom-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	put("proc/meminfo", "MemTotal:        4000000 kB\nMemFree:          100 kB\n");
	return 0;
}

static int remove_root(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

/* Hybrid (v1 memory controller): the job's cgroup hit its 64 MiB limit. */
static void test_limit_v1(void **state)
{
	struct memcg_ref ref;
	struct memcg_limit l;

	(void)state;
	put("proc/42/cgroup", "9:name=systemd:/\n5:devices:/\n4:memory:/slurm/job_7/step_0\n0::/\n");
	put("sys/fs/cgroup/memory/slurm/job_7/step_0/memory.limit_in_bytes", "9223372036854771712\n");
	put("sys/fs/cgroup/memory/slurm/job_7/step_0/memory.failcnt", "0\n");
	put("sys/fs/cgroup/memory/slurm/job_7/memory.limit_in_bytes", "67108864\n");
	put("sys/fs/cgroup/memory/slurm/job_7/memory.failcnt", "1234\n");
	put("sys/fs/cgroup/memory/slurm/memory.limit_in_bytes", "1073741824\n");
	put("sys/fs/cgroup/memory/slurm/memory.failcnt", "5\n");
	assert_int_equal(memcg_of(root, 42, &ref), 0);
	assert_true(ref.v1);
	assert_string_equal(ref.path, "/slurm/job_7/step_0");
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_true(l.cgroup);
	assert_int_equal(l.limit_bytes, 67108864);
	assert_string_equal(l.dir, "/slurm/job_7");
	assert_string_equal(memcg_oom_kind(&l), "cgroup");
}

/* v1 with no swap allowed (memsw limit = memory limit): the charge fails on memsw only. */
static void test_limit_v1_memsw(void **state)
{
	struct memcg_ref ref;
	struct memcg_limit l;

	(void)state;
	put("proc/48/cgroup", "4:memory:/job_9\n");
	put("sys/fs/cgroup/memory/job_9/memory.limit_in_bytes", "67108864\n");
	put("sys/fs/cgroup/memory/job_9/memory.failcnt", "0\n");
	put("sys/fs/cgroup/memory/job_9/memory.memsw.failcnt", "61\n");
	assert_int_equal(memcg_of(root, 48, &ref), 0);
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_true(l.cgroup);
	/* No failure counted at all (6.18), but the high-water mark at the limit. */
	put("sys/fs/cgroup/memory/job_9/memory.memsw.failcnt", "0\n");
	put("sys/fs/cgroup/memory/job_9/memory.max_usage_in_bytes", "67108864\n");
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_true(l.cgroup);
	put("sys/fs/cgroup/memory/job_9/memory.max_usage_in_bytes", "65015808\n");	/* less than a huge page short */
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_true(l.cgroup);
	put("sys/fs/cgroup/memory/job_9/memory.max_usage_in_bytes", "33554432\n");
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_false(l.cgroup);
	put("sys/fs/cgroup/memory/job_9/memory.max_usage_in_bytes", "67108864\n");
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_int_equal(l.limit_bytes, 67108864);
	assert_string_equal(l.dir, "/job_9");
}

/* v2: the smallest limit reached wins; "max" is none; a limit never reached is not the one hit. */
static void test_limit_v2(void **state)
{
	struct memcg_ref ref;
	struct memcg_limit l;

	(void)state;
	put("proc/43/cgroup", "0::/system.slice/job_8/task\n");
	put("sys/fs/cgroup/system.slice/job_8/task/memory.max", "max\n");
	put("sys/fs/cgroup/system.slice/job_8/task/memory.events", "low 0\nhigh 0\nmax 9\noom 0\noom_kill 0\n");
	put("sys/fs/cgroup/system.slice/job_8/memory.max", "134217728\n");
	put("sys/fs/cgroup/system.slice/job_8/memory.events", "low 0\nhigh 0\nmax 30\noom 2\noom_kill 1\n");
	put("sys/fs/cgroup/system.slice/memory.max", "100000\n");
	put("sys/fs/cgroup/system.slice/memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
	assert_int_equal(memcg_of(root, 43, &ref), 0);
	assert_false(ref.v1);
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_true(l.cgroup);
	assert_int_equal(l.limit_bytes, 134217728);
	assert_string_equal(l.dir, "/system.slice/job_8");
}

/* No limit reached, or none below the node's memory: a global OOM, at MemTotal. */
static void test_limit_global(void **state)
{
	struct memcg_ref ref;
	struct memcg_limit l;

	(void)state;
	put("proc/44/cgroup", "0::/big\n");
	put("sys/fs/cgroup/big/memory.max", "999999999999\n");
	put("sys/fs/cgroup/big/memory.events", "oom 3\n");
	assert_int_equal(memcg_of(root, 44, &ref), 0);
	assert_int_equal(memcg_limit(root, &ref, &l), 0);
	assert_false(l.cgroup);
	assert_int_equal(l.limit_bytes, 4000000ULL * 1024);
	assert_string_equal(l.dir, "");
	assert_string_equal(memcg_oom_kind(&l), "global");
	assert_int_equal(memcg_limit(root, NULL, &l), 0);
	assert_int_equal(l.limit_bytes, 4000000ULL * 1024);
}

/* Bad input: a process gone, a path that climbs, no meminfo. */
static void test_limit_bad_input(void **state)
{
	struct memcg_ref ref;
	struct memcg_limit l;

	(void)state;
	assert_int_equal(memcg_of(root, 45, &ref), -ENOENT);
	put("proc/46/cgroup", "4:memory:/a/../../etc\n");
	assert_int_equal(memcg_of(root, 46, &ref), -EINVAL);
	put("proc/47/cgroup", "garbage\n");
	assert_int_equal(memcg_of(root, 47, &ref), -EINVAL);
	assert_true(memcg_limit("/nonexistent-root", NULL, &l) < 0);
}

static void test_trend(void **state)
{
	struct trend tr;
	int64_t r0[2] = { 100, 10 }, r1[3] = { 150, 20, 5 }, r2[3] = { 400, 20, 50 }, d[3], dt;
	const struct trend_snap *at;

	(void)state;
	trend_init(&tr);
	assert_null(trend_at(&tr, 1.0));
	/* One sample: nothing before it. */
	assert_int_equal(trend_sample(&tr, 1.0, 110, r0, 2), 1);
	at = trend_at(&tr, 1.0);
	assert_true(at && at->t == 1.0 && at->total == 110);
	assert_true(trend_growth(&tr, at, &dt, d) == 0);
	assert_int_equal(dt, 0);
	/* Later samples, not yet TREND_STEP_S on: kept steps stay. */
	assert_int_equal(trend_sample(&tr, 3.0, 175, r1, 3), 0);
	at = trend_at(&tr, 3.5);
	assert_true(trend_growth(&tr, at, &dt, d) == 2.0);
	assert_int_equal(dt, 65);
	assert_int_equal(d[0], 50);
	assert_int_equal(d[2], 5);	/* a component new since: grew from 0 */
	/* TREND_STEP_S on: kept, and the growth is from the older kept step. */
	assert_int_equal(trend_sample(&tr, 6.5, 175, r1, 3), 1);
	assert_int_equal(trend_sample(&tr, 9.0, 470, r2, 3), 0);
	at = trend_at(&tr, 9.0);
	assert_true(at->t == 9.0 && at->total == 470);
	assert_true(trend_growth(&tr, at, &dt, d) == 8.0);
	assert_int_equal(dt, 360);
	assert_int_equal(d[0], 300);
	assert_int_equal(d[1], 10);
	assert_int_equal(d[2], 50);
	/*
	 * A kill at 8.9 read after the sample at 9.0: the figures are the
	 * sample before it, the growth up to that one.
	 */
	at = trend_at(&tr, 8.9);
	assert_true(at->t == 6.5 && at->total == 175 && at->rss[0] == 150);
	assert_true(trend_growth(&tr, at, &dt, d) == 5.5);
	assert_int_equal(dt, 65);
	/* A third step drops the oldest: the span is TREND_STEP_S to twice that. */
	assert_int_equal(trend_sample(&tr, 12.0, 470, r2, 3), 1);
	at = trend_at(&tr, 12.0);
	assert_true(trend_growth(&tr, at, &dt, d) == 5.5);
	assert_int_equal(d[0], 250);
	/* Both kept samples after t: the older one, the nearest there is. */
	assert_true(trend_at(&tr, 2.0)->t == 9.0);
	trend_free(&tr);
}

static void test_fold(void **state)
{
	struct sink_oom_comp c[SINK_OOM_COMPS + 3];
	unsigned int n = SINK_OOM_COMPS + 3, k;

	(void)state;
	for (unsigned int i = 0; i < n; i++) {
		snprintf(c[i].name, sizeof(c[i].name), "lib:l%u", i);
		c[i].rss = 1000 + i;
		c[i].growth = 1;
	}
	k = oom_fold(c, n);
	assert_int_equal(k, SINK_OOM_COMPS);
	assert_string_equal(c[0].name, "lib:l18");	/* largest first */
	assert_string_equal(c[k - 1].name, "other");
	/* The last kept (1003) and the three smallest (1000..1002). */
	assert_int_equal(c[k - 1].rss, 1003 + 1000 + 1001 + 1002);
	assert_int_equal(c[k - 1].growth, 4);
}

static void test_run_info_rows(void **state)
{
	struct sink_oom o = {
		.rank = 3, .pid = 1234, .time = 12.3456, .sample_time = 12.3, .window_s = 5.25,
		.limit_bytes = 67108864, .cgroup = true, .cgroup_dir = "/oomtest",
		.total = { "total", 60 << 20, 40 << 20 }, .n = 2,
		.by = { { "app", 40 << 20, 30 << 20 }, { "lib:libhelper.so", 20 << 20, 10 << 20 } },
		.job_total = { "total", 90 << 20, 0 }, .njob = 1, .job = { { "app", 70 << 20, 0 } },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	csv_write_oom_info(f, true, &o, 1);
	fclose(f);
	assert_string_equal(buf,
			    "oom_watched,1\noom_kills,1\n"
			    "oom_kill_1_rank,3\noom_kill_1_pid,1234\noom_kill_1_time_s,12.346\n"
			    "oom_kill_1_kind,cgroup\noom_kill_1_limit_bytes,67108864\n"
			    "oom_kill_1_cgroup,/oomtest\noom_kill_1_sample_time_s,12.300\n"
			    "oom_kill_1_window_s,5.250\n"
			    "oom_kill_1_rss_bytes:total,62914560\noom_kill_1_rss_bytes:app,41943040\n"
			    "oom_kill_1_rss_bytes:lib:libhelper.so,20971520\n"
			    "oom_kill_1_growth_bytes:total,41943040\noom_kill_1_growth_bytes:app,31457280\n"
			    "oom_kill_1_growth_bytes:lib:libhelper.so,10485760\n"
			    "oom_kill_1_job_rss_bytes:total,94371840\noom_kill_1_job_rss_bytes:app,73400320\n");
	free(buf);
	/* Not a rank, global, no sample: empty fields, never made up. */
	buf = NULL;
	f = open_memstream(&buf, &len);
	o.rank = -1;
	o.cgroup = false;
	o.cgroup_dir[0] = '\0';
	o.sample_time = -1;
	o.n = o.njob = 0;
	csv_write_oom_info(f, false, &o, 1);
	fclose(f);
	assert_non_null(strstr(buf, "oom_watched,0\n"));
	assert_non_null(strstr(buf, "oom_kill_1_rank,\n"));
	assert_non_null(strstr(buf, "oom_kill_1_kind,global\n"));
	assert_non_null(strstr(buf, "oom_kill_1_cgroup,\n"));
	assert_non_null(strstr(buf, "oom_kill_1_sample_time_s,\n"));
	free(buf);
}

static void test_metric(void **state)
{
	struct metrics m = { 0 };
	struct mx_job *j = metrics_job_add(&m, "42", "alice", 1001);
	struct mx_job *x = metrics_job_add(&m, "42", "mallory", 1003);
	struct mx_job *big = metrics_job_add(&m, "big", "bob", 1002);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	metrics_oom_count(&m, j, 3);
	metrics_oom_count(&m, j, 3);
	metrics_oom_count(&m, j, -5);
	metrics_oom_count(&m, x, 3);
	f = open_memstream(&buf, &len);
	assert_int_equal(metrics_render(f, &m, NULL, false), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# TYPE memattr_oom_kills_total counter\n"));
	assert_non_null(strstr(buf, "memattr_oom_kills_total{job=\"42\",uid=\"1001\",rank=\"3\"} 2\n"));
	assert_non_null(strstr(buf, "memattr_oom_kills_total{job=\"42\",uid=\"1001\",rank=\"other\"} 1\n"));
	/* Another user's job of the same ID: counted apart. */
	assert_non_null(strstr(buf, "memattr_oom_kills_total{job=\"42\",uid=\"1003\",rank=\"3\"} 1\n"));
	free(buf);
	/* Bounded: the oldest entry goes first. */
	for (int i = 0; i < METRICS_OOM_KEEP + 1; i++)
		metrics_oom_count(&m, big, i);
	assert_int_equal(m.noom, METRICS_OOM_KEEP);
	metrics_job_remove(&m, j);
	metrics_job_remove(&m, x);
	metrics_job_remove(&m, big);
}

static void age(const char *path, double days)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= (time_t)(days * 86400);
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* --retain 1: a killed job's directory stays a week, another goes. */
static void test_spool_keeps_killed(void **state)
{
	char spool[512], path[600];

	(void)state;
	snprintf(spool, sizeof(spool), "%s/spool", root);
	put("spool/killed/run_info.csv", "key,value\noom_watched,1\noom_kills,1\n");
	put("spool/fine/run_info.csv", "key,value\noom_watched,1\noom_kills,0\n");
	put("spool/old_killed/run_info.csv", "key,value\noom_kills,2\n");
	snprintf(path, sizeof(path), "%s/killed", spool);
	age(path, 3);
	snprintf(path, sizeof(path), "%s/fine", spool);
	age(path, 3);
	snprintf(path, sizeof(path), "%s/old_killed", spool);
	age(path, 8);
	assert_int_equal(spool_retain(spool, 1, NULL, NULL), 2);
	snprintf(path, sizeof(path), "%s/killed/run_info.csv", spool);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/fine", spool);
	assert_int_equal(access(path, F_OK), -1);
}

/* The report's box: who, when, which limit, the split and its growth; HTML escaped. */
static void test_report_box(void **state)
{
	static const char *const kv[][2] = {
		{ "oom_kills", "2" }, { "oom_kill_1_rank", "3" }, { "oom_kill_1_pid", "1234" },
		{ "oom_kill_1_time_s", "4.817" }, { "oom_kill_1_kind", "cgroup" },
		{ "oom_kill_1_limit_bytes", "67108864" }, { "oom_kill_1_cgroup", "/a<b>" },
		{ "oom_kill_1_sample_time_s", "4.805" }, { "oom_kill_1_window_s", "4.000" },
		{ "oom_kill_1_rss_bytes:total", "66162688" }, { "oom_kill_1_rss_bytes:app", "42991616" },
		{ "oom_kill_1_growth_bytes:app", "27262976" },
		{ "oom_kill_1_job_rss_bytes:total", "70000000" },
		{ "oom_kill_2_rank", "" }, { "oom_kill_2_pid", "99" }, { "oom_kill_2_time_s", "5" },
		{ "oom_kill_2_kind", "global" }, { "oom_kill_2_limit_bytes", "4096000000" },
		{ "oom_kill_2_sample_time_s", "" },
	};
	struct rp_run *run = calloc(1, sizeof(*run));
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(run);
	run->ninfo = sizeof(kv) / sizeof(*kv);
	run->info = calloc(run->ninfo, sizeof(*run->info));
	assert_non_null(run->info);
	for (size_t i = 0; i < run->ninfo; i++) {
		snprintf(run->info[i].key, sizeof(run->info[i].key), "%s", kv[i][0]);
		snprintf(run->info[i].value, sizeof(run->info[i].value), "%s", kv[i][1]);
	}
	f = open_memstream(&buf, &len);
	rp_oom_html(f, run);
	fclose(f);
	assert_non_null(strstr(buf, "2 processes were killed by the OOM killer"));
	assert_non_null(strstr(buf, "Rank 3 (pid 1234) at 4.817 s: its cgroup's limit "));
	assert_non_null(strstr(buf, "/a&lt;b&gt;"));
	assert_non_null(strstr(buf, "At its last sample (4.805 s): total "));
	assert_non_null(strstr(buf, ", app "));
	assert_non_null(strstr(buf, "(+"));
	assert_non_null(strstr(buf, "Process (pid 99) at 5.000 s: the node's memory, a global OOM;"));
	free(buf);
	/* No kill: nothing at all. */
	snprintf(run->info[0].value, sizeof(run->info[0].value), "0");
	buf = NULL;
	f = open_memstream(&buf, &len);
	rp_oom_html(f, run);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
	free(run->info);
	free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_v1),
		cmocka_unit_test(test_limit_v1_memsw),
		cmocka_unit_test(test_limit_v2),
		cmocka_unit_test(test_limit_global),
		cmocka_unit_test(test_limit_bad_input),
		cmocka_unit_test(test_trend),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_run_info_rows),
		cmocka_unit_test(test_metric),
		cmocka_unit_test(test_spool_keeps_killed),
		cmocka_unit_test(test_report_box),
	};

	return cmocka_run_group_tests(tests, make_root, remove_root);
}
