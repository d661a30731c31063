// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The user socket's protocol: what the client sends, what the daemon accepts and answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sock_proto.h"

static void test_request_round_trip(void **state)
{
	char line[JSP_LINE_MAX], job[JSP_JOB_MAX + 1], err[256];
	uid_t uid;
	static const char *const ids[] = { "1234", "1234.server", "prterun-node1-4242@1", "a_b" };

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		int n = jsp_format_request(line, sizeof(line), ids[i], JSP_ANY_UID);

		assert_true(n > 0);
		assert_int_equal(n, strlen(line));
		assert_int_equal(line[n - 1], '\n');
		assert_int_equal(jsp_parse_request(line, job, sizeof(job), &uid, err, sizeof(err)), 0);
		assert_string_equal(job, ids[i]);
	}
	assert_string_equal((jsp_format_request(line, sizeof(line), "77", JSP_ANY_UID), line), "MEMATTR/1 JOB 77\n");
	/* Without its newline, as read up to it. */
	assert_int_equal(jsp_parse_request("MEMATTR/1 JOB 77", job, sizeof(job), &uid, err, sizeof(err)), 0);
	assert_string_equal(job, "77");
	assert_int_equal(uid, JSP_ANY_UID);
	/* Root naming whose job of an ID several users carry. */
	assert_string_equal((jsp_format_request(line, sizeof(line), "5002", 1001), line),
			    "MEMATTR/1 JOB 5002 UID 1001\n");
	assert_int_equal(jsp_parse_request(line, job, sizeof(job), &uid, err, sizeof(err)), 0);
	assert_string_equal(job, "5002");
	assert_int_equal(uid, 1001);
	assert_int_equal(jsp_parse_request("MEMATTR/1 JOB 7 UID 0\n", job, sizeof(job), &uid, err, sizeof(err)), 0);
	assert_int_equal(uid, 0);
}

static void test_bad_requests(void **state)
{
	char job[JSP_JOB_MAX + 1], err[256], longid[JSP_JOB_MAX + 2], line[JSP_LINE_MAX + 64];
	uid_t uid;
	static const char *const bad[] = {
		"", "\n", "GET / HTTP/1.0\r\n", "MEMATTR/1 JOB \n", "MEMATTR/1 JOB a b\n",
		"MEMATTR/1 JOB 12 UID\n", "MEMATTR/1 JOB 12 UID \n", "MEMATTR/1 JOB 12 UID x\n",
		"MEMATTR/1 JOB 12 UID 1 2\n", "MEMATTR/1 JOB 12 UID -1\n", "MEMATTR/1 JOB 12 UID 4294967295\n",
		"MEMATTR/1 JOB 12 uid 5\n", "MEMATTR/1 JOB UID 5\n",
		"MEMATTR/1 JOB a\tb\n", "MEMATTR/1 JOB 12\n34\n", "MEMATTR/1 job 12\n",
		"MEMATTR/1 JOB \x01\n", "MEMATTR/1 JOB caf\xc3\xa9\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(jsp_parse_request(bad[i], job, sizeof(job), &uid, err, sizeof(err)), -1);
		assert_memory_equal(err, "ERR bad ", 8);
		assert_int_equal(err[strlen(err) - 1], '\n');
	}
	/* Another version: told which one this daemon speaks. */
	assert_int_equal(jsp_parse_request("MEMATTR/2 JOB 1\n", job, sizeof(job), &uid, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "MEMATTR/1"));
	/* IDs the client may not even ask for. */
	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(jsp_format_request(line, sizeof(line), longid, JSP_ANY_UID), -1);
	assert_int_equal(jsp_format_request(line, sizeof(line), "", JSP_ANY_UID), -1);
	assert_int_equal(jsp_format_request(line, sizeof(line), "a b", JSP_ANY_UID), -1);
	/* Too small a buffer on the daemon's side: refused, never cut. */
	assert_int_equal(jsp_parse_request("MEMATTR/1 JOB 123456\n", job, 4, &uid, err, sizeof(err)), -1);
	longid[JSP_JOB_MAX] = '\0';
	assert_true(jsp_format_request(line, sizeof(line), longid, JSP_ANY_UID) > 0);
	assert_int_equal(jsp_parse_request(line, job, sizeof(job), &uid, err, sizeof(err)), 0);
	assert_int_equal(strlen(job), JSP_JOB_MAX);
}

static void test_replies(void **state)
{
	struct jsp_reply r;
	char line[JSP_LINE_MAX];

	(void)state;
	assert_int_equal(jsp_parse_reply("JOB running\n", &r), 0);
	assert_int_equal(r.kind, JSP_JOB);
	assert_false(r.ended);
	assert_int_equal(jsp_parse_reply("JOB ended\n", &r), 0);
	assert_true(r.ended);
	assert_int_equal(jsp_parse_reply("END\n", &r), 0);
	assert_int_equal(r.kind, JSP_END);
	assert_int_equal(jsp_parse_reply("FILE rank-12.csv.gz\n", &r), 0);
	assert_int_equal(r.kind, JSP_FILE);
	assert_string_equal(r.text, "rank-12.csv.gz");

	/* The refusals as the daemon words them, as the client reads them. */
	jsp_format_denied(line, sizeof(line), "1234");
	assert_int_equal(jsp_parse_reply(line, &r), 0);
	assert_int_equal(r.kind, JSP_ERR);
	assert_string_equal(r.code, "denied");
	assert_string_equal(r.text, "job 1234 belongs to another user");
	jsp_format_nojob(line, sizeof(line), "1234");
	assert_int_equal(jsp_parse_reply(line, &r), 0);
	assert_string_equal(r.code, "nojob");
	assert_string_equal(r.text, "no job 1234 is traced by the daemon on this node");
	jsp_format_busy(line, sizeof(line), "try again");
	assert_int_equal(jsp_parse_reply(line, &r), 0);
	assert_string_equal(r.code, "busy");
	assert_string_equal(r.text, "try again");

	/* Malformed: refused, so the client stops rather than guess. */
	assert_int_equal(jsp_parse_reply("JOB paused\n", &r), -1);
	assert_int_equal(jsp_parse_reply("ENDX\n", &r), -1);
	assert_int_equal(jsp_parse_reply("ERR denied\n", &r), -1);
	assert_int_equal(jsp_parse_reply("ERR  text\n", &r), -1);
	assert_int_equal(jsp_parse_reply("ERR averyveryverylongcode text\n", &r), -1);
	assert_int_equal(jsp_parse_reply("END\nEND\n", &r), -1);
	assert_int_equal(jsp_parse_reply("", &r), -1);
	/* A file name the client would not write: a path, a dot file, another kind. */
	assert_int_equal(jsp_parse_reply("FILE ../etc/passwd\n", &r), -1);
	assert_int_equal(jsp_parse_reply("FILE rank-0.csv.gz/x\n", &r), -1);
	assert_int_equal(jsp_parse_reply("FILE .summary.csv.tmp.12\n", &r), -1);
	assert_int_equal(jsp_parse_reply("FILE heap_sites.csv\n", &r), -1);
	assert_int_equal(jsp_parse_reply("FILE \n", &r), -1);
}

static void test_file_names(void **state)
{
	char out[JSP_NAME_MAX];

	(void)state;
	assert_true(jsp_file_served("summary.csv"));
	assert_true(jsp_file_served("run_info.csv"));
	assert_true(jsp_file_served("mpi_calls.csv"));
	assert_int_equal(jsp_whole_file("mpi_calls.csv"), 2);
	assert_int_equal(jsp_whole_file("rank-0.csv.gz"), -1);
	/* The allocation stacks: rewritten whole, written under their own name, compressed or not. */
	assert_true(jsp_file_served("alloc_stacks.csv"));
	assert_int_equal(jsp_whole_file("alloc_stacks.csv"), 3);
	assert_true(jsp_whole_file("alloc_stacks.csv") < JSP_NWHOLE);
	assert_int_equal(jsp_local_name("alloc_stacks.csv", false, out, sizeof(out)), 0);
	assert_string_equal(out, "alloc_stacks.csv");
	assert_int_equal(jsp_local_name("alloc_stacks.csv", true, out, sizeof(out)), 0);
	assert_string_equal(out, "alloc_stacks.csv");
	assert_false(jsp_file_served("alloc_stacks.csv.tmp"));
	assert_false(jsp_file_served("alloc_stacks.csv.gz"));
	assert_false(jsp_file_served("../alloc_stacks.csv"));
	assert_false(jsp_file_served("heap_sites.csv"));
	assert_true(jsp_file_served("rank-0.csv.gz"));
	assert_true(jsp_file_served("pid-48121.csv.gz"));
	assert_false(jsp_file_served("rank-.csv.gz"));
	assert_false(jsp_file_served("rank--1.csv.gz"));
	assert_false(jsp_file_served("rank-0.csv"));
	assert_false(jsp_file_served("rank-0.csv.gz.tmp"));
	assert_false(jsp_file_served("rank-12345678901.csv.gz"));
	assert_false(jsp_file_served("."));
	assert_false(jsp_file_served(".."));

	assert_int_equal(jsp_local_name("rank-3.csv.gz", false, out, sizeof(out)), 0);
	assert_string_equal(out, "rank-3.csv");
	assert_int_equal(jsp_local_name("rank-3.csv.gz", true, out, sizeof(out)), 0);
	assert_string_equal(out, "rank-3.csv.gz");
	assert_int_equal(jsp_local_name("pid-7.csv.gz", false, out, sizeof(out)), 0);
	assert_string_equal(out, "pid-7.csv");
	assert_int_equal(jsp_local_name("summary.csv", false, out, sizeof(out)), 0);
	assert_string_equal(out, "summary.csv");
	assert_int_equal(jsp_local_name("heap_sites.csv", false, out, sizeof(out)), -1);
	assert_int_equal(jsp_local_name("rank-3.csv.gz", false, out, 5), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_file_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
