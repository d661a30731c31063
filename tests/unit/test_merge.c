// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * merge's pure parts: node names and --output's %n/%j, which files are
 * timelines of which rank, how nodes are placed on the job's clock and
 * refused, how run_info.csv counters add up, and one timeline rewritten
 * with its summary recomputed.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "merge.h"
#include "node_name.h"

static void test_expand_path(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(node_expand_path("out/%n", "cn042", "77", out, sizeof(out)), 0);
	assert_string_equal(out, "out/cn042");
	assert_int_equal(node_expand_path("m-%j/%n.d", "a", "1234", out, sizeof(out)), 0);
	assert_string_equal(out, "m-1234/a.d");
	assert_int_equal(node_expand_path("100%%/%j", "a", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "100%/");
	assert_int_equal(node_expand_path("out/%x", "a", "1", out, sizeof(out)), -1);
	assert_int_equal(node_expand_path("trailing%", "a", "1", out, sizeof(out)), -1);
	/* Exactly full is too long: the terminating NUL needs its byte. */
	assert_int_equal(node_expand_path("%n", "0123456789", "1", out, 10), -1);
	assert_int_equal(node_expand_path("%n", "012345678", "1", out, 10), 0);
}

static void test_node_name(void **state)
{
	char buf[NODE_NAME_MAX];

	(void)state;
	setenv("SLURMD_NODENAME", "cn 1/../x", 1);
	node_name(buf, sizeof(buf));
	assert_string_equal(buf, "cn_1_.._x");
	setenv("SLURMD_NODENAME", "..", 1);
	node_name(buf, sizeof(buf));
	assert_true(node_name_valid(buf));
	unsetenv("SLURMD_NODENAME");
	node_name(buf, sizeof(buf));
	assert_true(node_name_valid(buf));
	assert_true(node_name_valid("node-01.cluster_a"));
	assert_false(node_name_valid(""));
	assert_false(node_name_valid("."));
	assert_false(node_name_valid(".."));
	assert_false(node_name_valid("a/b"));
	assert_false(node_name_valid("a,b"));
}

static void test_timeline_rank(void **state)
{
	(void)state;
	assert_int_equal(mg_timeline_rank("rank-0.csv"), 0);
	assert_int_equal(mg_timeline_rank("rank-127999.csv.gz"), 127999);
	assert_int_equal(mg_timeline_rank("pid-4242.csv"), -1);
	assert_int_equal(mg_timeline_rank("rank-3.1.csv"), -2);	/* written beside a planted file */
	assert_int_equal(mg_timeline_rank("rank-.csv"), -2);
	assert_int_equal(mg_timeline_rank("rank-1.csv.tmp"), -2);
	assert_int_equal(mg_timeline_rank("summary.csv"), -2);
	assert_int_equal(mg_timeline_rank("rank-99999999999.csv"), -2);
}

static struct mg_node node(const char *name, const char *job, double start, double duration)
{
	struct mg_node n = { .dir = name, .dirfd = -1, .start = start, .duration = duration };

	snprintf(n.name, sizeof(n.name), "%s", name);
	snprintf(n.job, sizeof(n.job), "%s", job);
	return n;
}

static void test_check_nodes(void **state)
{
	struct mg_node nodes[3];
	char err[MG_ERRLEN];

	(void)state;
	nodes[0] = node("a", "1234.0", 1000.5, 10);
	nodes[1] = node("b", "1234.batch", 1000.25, 10);
	nodes[2] = node("c", "1234", 1001.0, 10);
	assert_int_equal(mg_check_nodes(nodes, 3, err, sizeof(err)), 0);
	/* The earliest start is the job's time 0. */
	assert_true(nodes[0].offset == 0.25);
	assert_true(nodes[1].offset == 0.0);
	assert_true(nodes[2].offset == 0.75);

	nodes[2] = node("c", "12345", 1001.0, 10);
	assert_int_equal(mg_check_nodes(nodes, 3, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "different jobs"));
	nodes[2] = node("a", "1234", 1001.0, 10);
	assert_int_equal(mg_check_nodes(nodes, 3, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "both node a"));
}

static void add(struct mg_node *n, const char *key, const char *value)
{
	n->info = realloc(n->info, (n->ninfo + 1) * sizeof(*n->info));
	assert_non_null(n->info);
	snprintf(n->info[n->ninfo].key, sizeof(n->info->key), "%s", key);
	snprintf(n->info[n->ninfo].value, sizeof(n->info->value), "%s", value);
	n->ninfo++;
}

/* The merged run_info.csv as key -> value lookups over its text. */
static const char *value_of(const char *text, const char *key, char *buf, size_t len)
{
	char pat[80];
	const char *at;

	snprintf(pat, sizeof(pat), "\n%s,", key);
	at = strstr(text, pat);
	if (!at)
		return NULL;
	at += strlen(pat);
	snprintf(buf, len, "%.*s", (int)strcspn(at, "\n"), at);
	return buf;
}

static void test_write_info(void **state)
{
	struct mg_node nodes[2] = { node("a", "77.0", 100, 5), node("b", "77.0", 101.5, 5) };
	char text[4096], v[64];
	FILE *f = tmpfile();
	size_t n;

	(void)state;
	assert_int_equal(mg_check_nodes(nodes, 2, text, sizeof(text)), 0);
	add(&nodes[0], "events", "10");
	add(&nodes[0], "dropped_events", "1");
	add(&nodes[0], "finished", "1");
	add(&nodes[0], "unwind_us_per_request", "10.0");
	add(&nodes[0], "memory_requests", "100");
	add(&nodes[1], "events", "32");
	add(&nodes[1], "finished", "1");
	add(&nodes[1], "odd", "x");
	add(&nodes[1], "unwind_us_per_request", "40.0");
	add(&nodes[1], "memory_requests", "300");
	assert_int_equal(mg_write_info(f, nodes, 2, "memattr-bpf merge a b -o j", 3), 0);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	assert_string_equal(value_of(text, "events", v, sizeof(v)), "42");
	assert_string_equal(value_of(text, "dropped_events", v, sizeof(v)), "1");	/* absent on b: 0 */
	assert_string_equal(value_of(text, "memory_requests", v, sizeof(v)), "400");
	assert_string_equal(value_of(text, "unwind_us_per_request", v, sizeof(v)), "32.5");
	assert_string_equal(value_of(text, "job", v, sizeof(v)), "77");
	assert_string_equal(value_of(text, "nodes", v, sizeof(v)), "2");
	assert_string_equal(value_of(text, "duration_s", v, sizeof(v)), "6.500");
	assert_string_equal(value_of(text, "finished", v, sizeof(v)), "1");
	assert_string_equal(value_of(text, "lines_still_written", v, sizeof(v)), "3");
	assert_null(value_of(text, "odd", v, sizeof(v)));	/* not a count: not summed */
	/* One node not final: the merge is not either. */
	snprintf(nodes[1].info[1].value, sizeof(nodes[1].info[1].value), "0");
	rewind(f);
	assert_int_equal(ftruncate(fileno(f), 0), 0);
	assert_int_equal(mg_write_info(f, nodes, 2, "m", 0), 0);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	assert_string_equal(value_of(text, "finished", v, sizeof(v)), "0");
	fclose(f);
	free(nodes[0].info);
	free(nodes[1].info);
}

/*
 * OOM kills: oom_kills summed, each node's kills numbered anew with their
 * node, their times on the merged clock; a kill's keys never summed.
 */
static void test_write_info_oom(void **state)
{
	struct mg_node nodes[2] = { node("a", "77.0", 100, 5), node("b", "77.0", 101.5, 5) };
	char text[8192], v[64];
	FILE *f = tmpfile();
	size_t n;

	(void)state;
	assert_int_equal(mg_check_nodes(nodes, 2, text, sizeof(text)), 0);
	add(&nodes[0], "oom_watched", "1");
	add(&nodes[0], "oom_kills", "1");
	add(&nodes[0], "oom_kill_1_rank", "3");
	add(&nodes[0], "oom_kill_1_time_s", "1.000");
	add(&nodes[0], "oom_kill_1_rss_bytes:app", "4096");
	add(&nodes[1], "oom_watched", "1");
	add(&nodes[1], "oom_kills", "1");
	add(&nodes[1], "oom_kill_1_rank", "5");
	add(&nodes[1], "oom_kill_1_time_s", "0.500");
	add(&nodes[1], "oom_kill_1_sample_time_s", "");
	assert_int_equal(mg_write_info(f, nodes, 2, "m", 0), 0);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	assert_string_equal(value_of(text, "oom_watched", v, sizeof(v)), "1");
	assert_string_equal(value_of(text, "oom_kills", v, sizeof(v)), "2");
	assert_string_equal(value_of(text, "oom_kill_1_node", v, sizeof(v)), "a");
	assert_string_equal(value_of(text, "oom_kill_1_rank", v, sizeof(v)), "3");
	assert_string_equal(value_of(text, "oom_kill_1_time_s", v, sizeof(v)), "1.000");
	assert_string_equal(value_of(text, "oom_kill_1_rss_bytes:app", v, sizeof(v)), "4096");
	assert_string_equal(value_of(text, "oom_kill_2_node", v, sizeof(v)), "b");
	assert_string_equal(value_of(text, "oom_kill_2_rank", v, sizeof(v)), "5");
	assert_string_equal(value_of(text, "oom_kill_2_time_s", v, sizeof(v)), "2.000");
	assert_string_equal(value_of(text, "oom_kill_2_sample_time_s", v, sizeof(v)), "");
	fclose(f);
	free(nodes[0].info);
	free(nodes[1].info);
}

static void write_text(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0640);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *read_text(int dirfd, const char *name)
{
	static char buf[4096];
	int fd = openat(dirfd, name, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

/* A node's rank file onto the job's clock, its peaks recomputed; a cut last line left out. */
static void test_timeline(void **state)
{
	char in[] = "/tmp/mg-in.XXXXXX", outp[] = "/tmp/mg-out.XXXXXX", err[MG_ERRLEN];
	struct mg_node n = node("cn7", "9", 50, 1);
	struct mg_out o = { 0 };
	char sumbuf[1024];
	FILE *sum;

	(void)state;
	assert_non_null(mkdtemp(in));
	assert_non_null(mkdtemp(outp));
	n.dir = in;
	n.dirfd = open(in, O_RDONLY | O_DIRECTORY);
	n.offset = 2.5;
	write_text(n.dirfd, "rank-3.csv",
		   "time_s,rank,pid,component,rss_bytes,pss_bytes\n"
		   "0.100,3,77,total,100,50\n0.100,3,77,app,60,30\n"
		   "0.200,3,77,total,300,150\n0.200,3,77,app,200,100\n"
		   "0.300,3,77,total,300,120\n0.300,3,77,app,40,20\n"
		   "0.400,3,77,tot");
	assert_int_equal(outdir_open(&o.dir, outp, (uid_t)-1, (gid_t)-1, err, sizeof(err)), 0);
	sum = fmemopen(sumbuf, sizeof(sumbuf), "w");
	o.summary = sum;
	assert_int_equal(mg_timeline(&o, &n, "rank-3.csv", err, sizeof(err)), 0);
	fclose(sum);
	assert_string_equal(read_text(o.dir.dirfd, "rank-3.csv"),
			    CSV_HEADER_NODE "\n"
			    "2.600,3,77,total,100,50,cn7\n2.600,3,77,app,60,30,cn7\n"
			    "2.700,3,77,total,300,150,cn7\n2.700,3,77,app,200,100,cn7\n"
			    "2.800,3,77,total,300,120,cn7\n2.800,3,77,app,40,20,cn7\n");
	/* The first time the peak was reached; final values from the last sample. */
	assert_string_equal(sumbuf, "3,77,total,300,2.700,150,2.700,300,120,,,samples,,,cn7\n"
				    "3,77,app,200,2.700,100,2.700,40,20,,,,,,cn7\n");
	assert_int_equal(o.cut_lines, 1);

	/* A row of another rank in rank-3.csv: refused with its line. */
	write_text(n.dirfd, "rank-3.csv", "time_s,rank,pid,component,rss_bytes,pss_bytes\n0.1,4,77,total,1,1\n");
	sum = fmemopen(sumbuf, sizeof(sumbuf), "w");
	o.summary = sum;
	assert_int_equal(mg_timeline(&o, &n, "rank-3.csv", err, sizeof(err)), -1);
	fclose(sum);
	assert_non_null(strstr(err, "rank-3.csv:2: rank 4"));
	outdir_close(&o.dir);
	close(n.dirfd);
	assert_int_equal(system("rm -rf /tmp/mg-in.?????? /tmp/mg-out.??????"), 0);
}

/* The whole of dir/name, as merge wrote it. */
static char *slurp(const char *dir, const char *name)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	char *t;

	assert_true(fd >= 0);
	t = read_text(fd, name);
	close(fd);
	return t;
}

/*
 * Two nodes' datasets of one job, the second with an OOM kill of rank 5:
 * the merged summary.csv fills oom_kill_time_s (on the job's clock) and
 * oom_growth_bytes for the victim's rows only, each component's growth as
 * that node's run_info.csv has it (0 for one it does not list, as the
 * tracer's own summary writes it); a kill's bad time is refused in a line.
 */
static void test_merge_oom_summary(void **state)
{
	char a[] = "/tmp/mg-a.XXXXXX", b[] = "/tmp/mg-b.XXXXXX", out[64];
	char *argv[] = { "merge", a, b, "-o", out, NULL };
	int fa, fb;

	(void)state;
	assert_non_null(mkdtemp(a));
	assert_non_null(mkdtemp(b));
	snprintf(out, sizeof(out), "%s.out", a);
	fa = open(a, O_RDONLY | O_DIRECTORY);
	fb = open(b, O_RDONLY | O_DIRECTORY);
	write_text(fa, "run_info.csv", "key,value\nhostname,na\njob,77\nstart_time_unix_s,100.000\n"
		   "duration_s,5\nfinished,1\noom_watched,1\noom_kills,0\n");
	write_text(fa, "rank-3.csv", "time_s,rank,pid,component,rss_bytes,pss_bytes\n"
		   "0.100,3,77,total,100,50\n0.100,3,77,app,60,30\n");
	write_text(fb, "run_info.csv", "key,value\nhostname,nb\njob,77\nstart_time_unix_s,101.500\n"
		   "duration_s,5\nfinished,1\noom_watched,1\noom_kills,1\n"
		   "oom_kill_1_rank,5\noom_kill_1_pid,88\noom_kill_1_time_s,0.500\noom_kill_1_kind,cgroup\n"
		   "oom_kill_1_limit_bytes,4096\noom_kill_1_rss_bytes:total,400\n"
		   "oom_kill_1_growth_bytes:total,300\noom_kill_1_growth_bytes:app,200\n");
	write_text(fb, "rank-5.csv", "time_s,rank,pid,component,rss_bytes,pss_bytes\n"
		   "0.100,5,88,total,100,50\n0.100,5,88,app,60,30\n0.100,5,88,libc,40,20\n"
		   "0.400,5,88,total,400,200\n0.400,5,88,app,260,130\n0.400,5,88,libc,40,20\n");
	write_text(fb, "rank-6.csv", "time_s,rank,pid,component,rss_bytes,pss_bytes\n"
		   "0.100,6,89,total,10,5\n");
	assert_int_equal(merge_main(5, argv), 0);
	assert_string_equal(slurp(out, "summary.csv"),
			    SUMMARY_HEADER_NODE "\n"
			    "3,77,total,100,0.100,50,0.100,100,50,,,samples,,,na\n"
			    "3,77,app,60,0.100,30,0.100,60,30,,,,,,na\n"
			    "5,88,total,400,1.900,200,1.900,400,200,2.000,300,samples,,,nb\n"
			    "5,88,app,260,1.900,130,1.900,260,130,2.000,200,,,,nb\n"
			    "5,88,libc,40,1.600,20,1.600,40,20,2.000,0,,,,nb\n"
			    "6,89,total,10,1.600,5,1.600,10,5,,,samples,,,nb\n");

	/* A kill whose time is no number: one line, and no dataset. */
	assert_int_equal(system("rm -rf /tmp/mg-a.??????.out"), 0);
	write_text(fb, "run_info.csv", "key,value\nhostname,nb\njob,77\nstart_time_unix_s,101.500\n"
		   "oom_kills,1\noom_kill_1_pid,88\noom_kill_1_time_s,soon\n");
	assert_int_equal(merge_main(5, argv), 1);
	assert_int_equal(access(out, F_OK), -1);
	close(fa);
	close(fb);
	assert_int_equal(system("rm -rf /tmp/mg-a.?????? /tmp/mg-b.?????? /tmp/mg-a.??????.out"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand_path),
		cmocka_unit_test(test_node_name),
		cmocka_unit_test(test_timeline_rank),
		cmocka_unit_test(test_check_nodes),
		cmocka_unit_test(test_write_info),
		cmocka_unit_test(test_write_info_oom),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_merge_oom_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
