// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The metrics exposition: names and labels as DESIGN.md lists them,
 * escaping, per-job series only by default (the user on the info metric
 * alone), rank="other" for processes that are not ranks and for ranks past
 * the cap, folding past the largest 16 components, series gone with the
 * job, both formats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_listen.h"
#include "metrics.h"

static char *render(const struct metrics *m, const struct mx_self *self, bool om)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics_render(f, m, self, om), 0);
	fclose(f);
	return buf;
}

static void must_have(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing: %s\n--- in ---\n%s", line, text);
}

static void must_not_have(const char *text, const char *what)
{
	if (strstr(text, what))
		fail_msg("unexpected: %s\n--- in ---\n%s", what, text);
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

static void test_escape(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	metrics_put_label(f, "a\\b\"c\nd");
	fclose(f);
	assert_string_equal(buf, "a\\\\\\\\b\\\"c\\nd");
	free(buf);
}

/* A label's bytes come from a user's environment: only valid UTF-8 reaches the page. */
static void test_escape_utf8(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "\xff" "A", "\\\\xffA" },			/* PBS_JOBID=$'\xffA' */
		{ "caf\xc3\xa9", "caf\xc3\xa9" },		/* valid 2 bytes kept */
		{ "\xe2\x82\xac\xf0\x9f\x98\x80", "\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "\xc3", "\\\\xc3" },				/* cut short */
		{ "\xc3(", "\\\\xc3(" },
		{ "\xc0\xaf", "\\\\xc0\\\\xaf" },		/* overlong '/' */
		{ "\xe0\x80\xaf", "\\\\xe0\\\\x80\\\\xaf" },	/* overlong, 3 bytes */
		{ "\xed\xa0\x80", "\\\\xed\\\\xa0\\\\x80" },	/* a surrogate */
		{ "\xf4\x90\x80\x80", "\\\\xf4\\\\x90\\\\x80\\\\x80" },	/* past U+10FFFF */
		{ "\x80x\"", "\\\\x80x\\\"" },
		{ "\\xff", "\\\\\\\\xff" },			/* the text, not the byte */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		metrics_put_label(f, cases[i].in);
		fclose(f);
		assert_string_equal(buf, cases[i].out);
		free(buf);
	}
}

static void test_ranks_and_other(void **state)
{
	struct metrics m = { .detail = MX_DETAIL_RANK };
	struct mx_job *j = metrics_job_add(&m, "42", "alice", 1001);
	struct mx_proc *r0 = NULL, *r1 = NULL, *x = NULL, *y = NULL;
	struct mx_comp t = { "total", 100, 80, 150 };
	struct mx_comp c[] = { { "app", 60, 50, 90 }, { "mpi", 40, 30, 60 } };
	struct mx_comp t2 = { "total", 10, 5, 20 }, c2[] = { { "app", 10, 5, 20 } };
	char *s;

	(void)state;
	assert_int_equal(metrics_proc_update(j, &r1, 1, "", &t, c, 2), 0);
	assert_int_equal(metrics_proc_update(j, &r0, 0, "", &t, c, 2), 0);
	assert_int_equal(metrics_proc_update(j, &x, -1, "", &t2, c2, 1), 0);
	assert_int_equal(metrics_proc_update(j, &y, -1, "", &t2, c2, 1), 0);
	s = render(&m, NULL, false);
	must_have(s, "# TYPE memattr_rank_resident_bytes gauge\n");
	must_have(s, "memattr_rank_resident_bytes{job=\"42\",uid=\"1001\",step=\"\",rank=\"0\",component=\"total\"} 100\n");
	must_have(s, "memattr_rank_resident_bytes{job=\"42\",uid=\"1001\",step=\"\",rank=\"1\",component=\"mpi\"} 40\n");
	must_have(s, "memattr_rank_proportional_bytes{job=\"42\",uid=\"1001\",step=\"\",rank=\"0\",component=\"app\"} 50\n");
	must_have(s, "memattr_rank_peak_resident_bytes{job=\"42\",uid=\"1001\",step=\"\",rank=\"1\",component=\"total\"} 150\n");
	/* Two non-rank processes: one series, summed. */
	must_have(s, "memattr_rank_resident_bytes{job=\"42\",uid=\"1001\",step=\"\",rank=\"other\",component=\"app\"} 20\n");
	/* The job: every process. */
	must_have(s, "memattr_job_resident_bytes{job=\"42\",uid=\"1001\",component=\"total\"} 220\n");
	must_have(s, "memattr_job_resident_bytes{job=\"42\",uid=\"1001\",component=\"app\"} 140\n");
	/* Ranks in order, "other" last. */
	assert_true(strstr(s, "rank=\"0\"") < strstr(s, "rank=\"1\""));
	assert_true(strstr(s, "rank=\"1\"") < strstr(s, "rank=\"other\""));
	must_have(s, "memattr_job_info{job=\"42\",uid=\"1001\",user=\"alice\"} 1\n");
	must_have(s, "memattr_job_ranks_folded{job=\"42\",uid=\"1001\"} 0\n");
	must_not_have(s, "user=\"alice\",");
	must_not_have(s, "# EOF");
	free(s);

	/* A process that ends takes its series; a job that ends takes all of its own. */
	metrics_proc_remove(&r1);
	assert_null(r1);
	s = render(&m, NULL, false);
	must_not_have(s, "rank=\"1\"");
	free(s);
	metrics_job_remove(&m, j);
	s = render(&m, NULL, false);
	must_not_have(s, "job=\"42\"");
	must_have(s, "# TYPE memattr_job_resident_bytes gauge\n");
	free(s);
}

static void test_fold_top16(void **state)
{
	struct metrics m = { .detail = MX_DETAIL_RANK };
	struct mx_job *j = metrics_job_add(&m, "big", "bob", 1002);
	struct mx_proc *p = NULL;
	struct mx_comp t = { "total", 0, 0, 0 }, c[20];
	char names[20][32], *s;
	int64_t other = 0;

	(void)state;
	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "lib:l%02d.so", i);
		c[i] = (struct mx_comp){ names[i], 1000 - i, 1, 1 };
		t.rss += c[i].rss;
		if (i >= METRICS_TOP_COMPONENTS)
			other += c[i].rss;
	}
	assert_int_equal(metrics_proc_update(j, &p, 3, "0", &t, c, 20), 0);
	s = render(&m, NULL, false);
	must_have(s, "component=\"lib:l00.so\"} 1000\n");
	must_have(s, "component=\"lib:l15.so\"} 985\n");
	must_not_have(s, "lib:l16.so");
	must_not_have(s, "lib:l19.so");
	{
		char line[160];

		snprintf(line, sizeof(line),
			 "memattr_rank_resident_bytes{job=\"big\",uid=\"1002\",step=\"0\",rank=\"3\",component=\"other\"} %lld\n",
			 (long long)other);
		must_have(s, line);
	}
	free(s);
	metrics_job_remove(&m, j);
}

/* The default: per-job series, no rank label anywhere, the user on the info series alone. */
static void test_job_detail(void **state)
{
	struct metrics m = {0};
	struct mx_job *a = metrics_job_add(&m, "7", "alice", 1001);
	struct mx_job *b = metrics_job_add(&m, "7", "mallory", 1003);
	struct mx_proc *r0 = NULL, *r1 = NULL, *x = NULL;
	struct mx_comp t0 = { "total", 100, 80, 150 }, t1 = { "total", 300, 200, 310 };
	struct mx_comp c[] = { { "app", 60, 50, 90 }, { "mpi", 40, 30, 60 } };
	char *s;

	(void)state;
	assert_int_equal(metrics_proc_update(a, &r0, 0, "0", &t0, c, 2), 0);
	assert_int_equal(metrics_proc_update(a, &r1, 1, "0", &t1, c, 2), 0);
	assert_int_equal(metrics_proc_update(b, &x, 0, "", &t0, c, 2), 0);
	metrics_oom_count(&m, a, 1);
	b->dropped = 12;
	s = render(&m, NULL, false);
	must_not_have(s, "rank=\"0\"");
	must_not_have(s, "memattr_rank_");
	must_not_have(s, "step=");
	must_not_have(s, "memattr_job_ranks_folded");
	/* Two users' jobs of one ID stay apart by uid; names only on the info series. */
	must_have(s, "# TYPE memattr_job_info gauge\n");
	must_have(s, "memattr_job_info{job=\"7\",uid=\"1001\",user=\"alice\"} 1\n");
	must_have(s, "memattr_job_info{job=\"7\",uid=\"1003\",user=\"mallory\"} 1\n");
	assert_int_equal(count_of(s, "user="), 2);
	must_have(s, "memattr_job_resident_bytes{job=\"7\",uid=\"1001\",component=\"total\"} 400\n");
	must_have(s, "memattr_job_resident_bytes{job=\"7\",uid=\"1003\",component=\"total\"} 100\n");
	must_have(s, "memattr_job_proportional_bytes{job=\"7\",uid=\"1001\",component=\"app\"} 100\n");
	/* The largest rank's peak, not the sum. */
	must_have(s, "memattr_job_rank_peak_resident_bytes{job=\"7\",uid=\"1001\"} 310\n");
	must_have(s, "memattr_oom_kills_total{job=\"7\",uid=\"1001\",rank=\"1\"} 1\n");
	/* Each job its own drops: one job's storm is not charged to the other. */
	must_have(s, "memattr_job_events_dropped_total{job=\"7\",uid=\"1001\"} 0\n");
	must_have(s, "memattr_job_events_dropped_total{job=\"7\",uid=\"1003\"} 12\n");
	free(s);
	metrics_proc_remove(&x);
	metrics_job_remove(&m, a);
	metrics_job_remove(&m, b);
}

/* Rank series past the cap: the largest ranks kept, the rest in rank="other", counted. */
static void test_rank_cap(void **state)
{
	struct metrics m = { .detail = MX_DETAIL_RANK, .max_ranks = 2 };
	struct mx_job *j = metrics_job_add(&m, "9", "carol", 1004);
	struct mx_proc *p[5] = { NULL };
	struct mx_comp c[] = { { "app", 0, 0, 0 } };
	char *s;

	(void)state;
	for (int r = 0; r < 4; r++) {
		struct mx_comp t = { "total", 10 * (r + 1), 1, 10 * (r + 1) };

		c[0].rss = t.rss;
		assert_int_equal(metrics_proc_update(j, &p[r], r, "0", &t, c, 1), 0);
	}
	{
		struct mx_comp t = { "total", 5, 1, 5 };

		c[0].rss = 5;
		assert_int_equal(metrics_proc_update(j, &p[4], -1, "0", &t, c, 1), 0);
	}
	s = render(&m, NULL, false);
	/* Ranks 3 and 2 are the largest; 0 and 1 join the non-rank process. */
	must_have(s, "memattr_rank_resident_bytes{job=\"9\",uid=\"1004\",step=\"0\",rank=\"3\",component=\"total\"} 40\n");
	must_have(s, "memattr_rank_resident_bytes{job=\"9\",uid=\"1004\",step=\"0\",rank=\"2\",component=\"total\"} 30\n");
	must_not_have(s, "rank=\"1\"");
	must_not_have(s, "rank=\"0\"");
	must_have(s, "memattr_rank_resident_bytes{job=\"9\",uid=\"1004\",step=\"0\",rank=\"other\",component=\"total\"} 35\n");
	must_have(s, "memattr_job_ranks_folded{job=\"9\",uid=\"1004\"} 2\n");
	/* The job's own figures see every rank. */
	must_have(s, "memattr_job_resident_bytes{job=\"9\",uid=\"1004\",component=\"total\"} 105\n");
	must_have(s, "memattr_job_rank_peak_resident_bytes{job=\"9\",uid=\"1004\"} 40\n");
	free(s);
	metrics_job_remove(&m, j);
}

static void test_self_and_openmetrics(void **state)
{
	struct metrics m = { .detail = MX_DETAIL_RANK };
	struct mx_self x = {
		.events = 7, .dropped = 1, .jobs = 2, .processes = 9,
		.refused = { 3, 0, 0 }, .nmaps = 1, .version = "0.1.0", .attribution = "sampled",
		.memory_calls = "tracepoints", .rss_bytes = 4096, .cpu_seconds = 1.5,
		.maps = { { "traced", 5, 16384 } },
	};
	char *s;

	(void)state;
	s = render(&m, &x, false);
	must_have(s, "# TYPE memattr_events_total counter\nmemattr_events_total 7\n");
	must_have(s, "memattr_events_dropped_total 1\n");
	must_have(s, "memattr_jobs 2\n");
	must_have(s, "memattr_processes 9\n");
	must_have(s, "memattr_refused_total{reason=\"max_jobs\"} 3\n");
	must_have(s, "memattr_bpf_map_entries{map=\"traced\"} 5\n");
	must_have(s, "memattr_bpf_map_max_entries{map=\"traced\"} 16384\n");
	must_have(s, "memattr_build_info{version=\"0.1.0\"} 1\n");
	must_have(s, "# TYPE memattr_attribution_info gauge\nmemattr_attribution_info{mode=\"sampled\"} 1\n");
	/* After a fentry link was refused: the tracepoints, for good (bpf_loader.c). */
	must_have(s, "# TYPE memattr_memory_calls_info gauge\nmemattr_memory_calls_info{hooks=\"tracepoints\"} 1\n");
	must_have(s, "memattr_daemon_resident_bytes 4096\n");
	must_have(s, "memattr_daemon_cpu_seconds_total 1.500\n");
	free(s);
	s = render(&m, &x, true);
	/* OpenMetrics: counters' families lose _total, units declared, # EOF last. */
	must_have(s, "# TYPE memattr_events counter\nmemattr_events_total 7\n");
	must_have(s, "# TYPE memattr_rank_resident_bytes gauge\n# UNIT memattr_rank_resident_bytes bytes\n");
	must_have(s, "# TYPE memattr_build info\n");
	must_have(s, "# TYPE memattr_attribution info\nmemattr_attribution_info{mode=\"sampled\"} 1\n");
	must_have(s, "# TYPE memattr_memory_calls info\nmemattr_memory_calls_info{hooks=\"tracepoints\"} 1\n");
	assert_true(strlen(s) >= 6 && !strcmp(s + strlen(s) - 6, "# EOF\n"));
	free(s);
}

static void test_http_helpers(void **state)
{
	char host[64];
	unsigned int port;

	(void)state;
	assert_int_equal(http_split_addr("127.0.0.1:9466", host, sizeof(host), &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 9466);
	assert_int_equal(http_split_addr("[::1]:80", host, sizeof(host), &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(http_split_addr("127.0.0.1", host, sizeof(host), &port), -1);
	assert_int_equal(http_split_addr("127.0.0.1:0", host, sizeof(host), &port), -1);
	assert_int_equal(http_split_addr("127.0.0.1:70000", host, sizeof(host), &port), -1);
	assert_int_equal(http_split_addr(":9466", host, sizeof(host), &port), -1);
	assert_int_equal(http_split_addr("h:-1", host, sizeof(host), &port), -1);
	assert_true(http_wants_openmetrics("GET /metrics HTTP/1.1\r\nHost: x\r\n"
		"Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n"));
	assert_true(http_wants_openmetrics("GET /metrics HTTP/1.1\r\naccept: application/openmetrics-text\r\n\r\n"));
	assert_false(http_wants_openmetrics("GET /metrics HTTP/1.1\r\nAccept: text/plain\r\n\r\n"));
	assert_false(http_wants_openmetrics("GET /metrics HTTP/1.1\r\nX-Note: application/openmetrics-text\r\n\r\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_utf8),
		cmocka_unit_test(test_ranks_and_other),
		cmocka_unit_test(test_fold_top16),
		cmocka_unit_test(test_job_detail),
		cmocka_unit_test(test_rank_cap),
		cmocka_unit_test(test_self_and_openmetrics),
		cmocka_unit_test(test_http_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
