// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Command-line parsing: the contract in DESIGN.md and the refusals of bad input. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <cmocka.h>

#include "cli.h"

static char err[512];

static int parse(struct options *o, ...)
{
	char *argv[32] = { "memattr-bpf" };
	int argc = 1;
	va_list ap;
	char *a;

	va_start(ap, o);
	while ((a = va_arg(ap, char *)) && argc < 31)
		argv[argc++] = a;
	va_end(ap);
	err[0] = '\0';
	return cli_parse(argc, argv, o, err, sizeof(err));
}

static void test_job_defaults(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--job", "1234", NULL), 0);
	assert_int_equal(o.target, TARGET_JOB);
	assert_string_equal(o.job, "1234");
	assert_int_equal(o.interval_ms, 100);
	assert_int_equal(o.pss_interval_ms, 1000);
	assert_null(o.output);
	assert_true(o.duration_s == 0);
	cli_free(&o);
}

/* --job-user: whose claim of an ID several users' processes carry. */
static void test_job_user(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--job", "5002", NULL), 0);
	assert_int_equal(o.job_uid, (uid_t)-1);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "5002", "--job-user", "root", NULL), 0);
	assert_int_equal(o.job_uid, 0);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "5002", "--job-user", "1001", NULL), 0);
	assert_int_equal(o.job_uid, 1001);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "5002", "--job-user", "no-such-user-here", NULL), -1);
	assert_non_null(strstr(err, "neither a user name nor a uid"));
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "5002", "--job-user", "-1", NULL), -1);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "5002", "--job-user", "4294967295", NULL), -1);
	cli_free(&o);
	assert_int_equal(parse(&o, "--pid", "1", "--job-user", "root", NULL), -1);
	assert_non_null(strstr(err, "--job-user applies to --job only"));
	cli_free(&o);
}

/* The inference at attach: on by default (budget 0: the default), --no-infer, a budget (0: no limit). */
static void test_infer_options(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--job", "1", NULL), 0);
	assert_false(o.no_infer);
	assert_int_equal(o.infer_budget_mib, 0);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "1", "--no-infer", NULL), 0);
	assert_true(o.no_infer);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "1", "--infer-budget", "256", NULL), 0);
	assert_int_equal(o.infer_budget_mib, 256);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "1", "--infer-budget", "0", NULL), 0);
	assert_int_equal(o.infer_budget_mib, UINT_MAX);
	cli_free(&o);
	assert_int_not_equal(parse(&o, "--job", "1", "--infer-budget", "1G", NULL), 0);
	assert_non_null(strstr(err, "--infer-budget: '1G' is not a number of MiB"));
	cli_free(&o);
}

/* --attribution: exact by default, sampled on request, refused beside --mpi-calls. */
static void test_attribution_option(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--job", "1", NULL), 0);
	assert_false(o.sampled);
	cli_free(&o);
	assert_int_equal(parse(&o, "--job", "1", "--attribution", "sampled", "--heap", NULL), 0);
	assert_true(o.sampled);
	cli_free(&o);
	assert_int_not_equal(parse(&o, "--job", "1", "--attribution", "fast", NULL), 0);
	assert_non_null(strstr(err, "--attribution: 'fast' is not exact or sampled"));
	cli_free(&o);
	assert_int_not_equal(parse(&o, "--job", "1", "--attribution", "sampled", "--mpi-calls", NULL), 0);
	assert_non_null(strstr(err, "--mpi-calls needs --attribution exact"));
	cli_free(&o);
}

static void test_all_options(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--job", "77", "--output", "/tmp/x", "--interval", "250",
			       "--duration", "2.5", "--spec", "a.spec", "--spec", "b.spec",
			       "--pss-interval", "3000", "--wait", NULL), 0);
	assert_string_equal(o.output, "/tmp/x");
	assert_int_equal(o.interval_ms, 250);
	assert_true(o.duration_s == 2.5);
	assert_int_equal(o.nspecs, 2);
	assert_string_equal(o.specs[1], "b.spec");
	assert_int_equal(o.pss_interval_ms, 3000);
	assert_true(o.wait);
	cli_free(&o);
}

static void test_pid_list(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--pid", "12,34,5", NULL), 0);
	assert_int_equal(o.target, TARGET_PIDS);
	assert_int_equal(o.npids, 3);
	assert_int_equal(o.pids[0], 12);
	assert_int_equal(o.pids[2], 5);
	cli_free(&o);
}

static void test_launch_keeps_command_flags(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(parse(&o, "--interval", "50", "--", "mpirun", "-np", "4", "./a.out", NULL), 0);
	assert_int_equal(o.target, TARGET_LAUNCH);
	assert_string_equal(o.cmd[0], "mpirun");
	assert_string_equal(o.cmd[1], "-np");
	assert_string_equal(o.cmd[3], "./a.out");
	assert_null(o.cmd[4]);
	cli_free(&o);
}

static void expect_error(const char *needle, int ret)
{
	assert_int_equal(ret, -1);
	assert_non_null(strstr(err, needle));
	assert_null(strchr(err, '\n'));	/* one line */
}

static void test_refusals(void **state)
{
	struct options o;

	(void)state;
	expect_error("unknown option '--frobnicate'", parse(&o, "--job", "1", "--frobnicate", NULL));
	cli_free(&o);
	expect_error("'abc' is not a process ID", parse(&o, "--pid", "abc", NULL));
	cli_free(&o);
	expect_error("'-3' is not a process ID", parse(&o, "--pid", "1,-3", NULL));
	cli_free(&o);
	expect_error("--interval: '-5'", parse(&o, "--job", "1", "--interval", "-5", NULL));
	cli_free(&o);
	expect_error("--interval: '0'", parse(&o, "--job", "1", "--interval", "0", NULL));
	cli_free(&o);
	expect_error("--interval: '10ms'", parse(&o, "--job", "1", "--interval", "10ms", NULL));
	cli_free(&o);
	expect_error("--duration: 'soon'", parse(&o, "--job", "1", "--duration", "soon", NULL));
	cli_free(&o);
	expect_error("--duration: '-1'", parse(&o, "--job", "1", "--duration", "-1", NULL));
	cli_free(&o);
	expect_error("nothing to trace", parse(&o, "--interval", "5", NULL));
	cli_free(&o);
	expect_error("only one of", parse(&o, "--job", "1", "--pid", "2", NULL));
	cli_free(&o);
	expect_error("needs a value", parse(&o, "--job", NULL));
	cli_free(&o);
	expect_error("unexpected argument 'stray'", parse(&o, "--job", "1", "stray", NULL));
	cli_free(&o);
	expect_error("--wait applies to --job", parse(&o, "--pid", "1", "--wait", NULL));
	cli_free(&o);
	expect_error("power of two", parse(&o, "--job", "1", "--ringbuf-mb", "3", NULL));
	cli_free(&o);
}

/* One syntax for every number: what one option refuses, every option refuses. */
static void test_one_number_syntax(void **state)
{
	static const char *const opts[] = {
		"--interval", "--pss-interval", "--duration", "--ringbuf-mb", "--pid",
	};
	static const char *const bad[] = { "0x10", " 16", "16 ", "+16", "1e1", "16s", "" };
	struct options o;

	(void)state;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			int ret = !strcmp(opts[i], "--pid") ? parse(&o, "--pid", bad[k], NULL)
							    : parse(&o, "--job", "1", opts[i], bad[k], NULL);

			if (ret != -1)
				fail_msg("%s '%s' accepted", opts[i], bad[k]);
			assert_null(strchr(err, '\n'));
			cli_free(&o);
		}
	}
	/* The plain forms still pass. */
	assert_int_equal(parse(&o, "--job", "1", "--duration", "16", "--interval", "16",
			       "--ringbuf-mb", "16", NULL), 0);
	assert_true(o.duration_s == 16);
	cli_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_defaults),
		cmocka_unit_test(test_job_user),
		cmocka_unit_test(test_infer_options),
		cmocka_unit_test(test_attribution_option),
		cmocka_unit_test(test_all_options),
		cmocka_unit_test(test_pid_list),
		cmocka_unit_test(test_launch_keeps_command_flags),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_one_number_syntax),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
