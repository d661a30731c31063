// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one number syntax of every option: decimal digits, nothing around them, in range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "num_arg.h"

static void test_uint_good(void **state)
{
	unsigned long v = 0;

	(void)state;
	assert_int_equal(num_parse_uint("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(num_parse_uint("0010", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(num_parse_uint("3600000", 1, 3600000, &v), 0);
	assert_int_equal(v, 3600000);
}

static void test_uint_bad(void **state)
{
	static const char *const bad[] = {
		"", " 5", "5 ", "\t5", "5\n", "+5", "-5", "0x10", "1e3", "5ms", "5.0",
		"1,000", "99999999999999999999999", "١",
	};
	unsigned long v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (num_parse_uint(bad[i], 0, ~0UL, &v) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(v, 42);	/* untouched */
	}
	assert_int_equal(num_parse_uint(NULL, 0, 10, &v), -1);
	assert_int_equal(num_parse_uint("11", 0, 10, &v), -1);	/* range */
	assert_int_equal(num_parse_uint("0", 1, 10, &v), -1);
}

static void test_positive(void **state)
{
	static const char *const bad[] = {
		"", "0", "0.0", " 2", "2 ", "+2", "-2", "0x10", "1e3", "2.", ".5", "2..5",
		"inf", "nan", "2s", "2.5.1", "1.0000000001", "1000000001",
	};
	double v = 42;

	(void)state;
	assert_int_equal(num_parse_positive("2.5", 1e9, &v), 0);
	assert_true(v == 2.5);
	assert_int_equal(num_parse_positive("16", 1e9, &v), 0);
	assert_true(v == 16);
	assert_int_equal(num_parse_positive("0.001", 1e9, &v), 0);
	assert_true(v == 0.001);
	v = 42;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (num_parse_positive(bad[i], 1e9, &v) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_true(v == 42);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uint_good),
		cmocka_unit_test(test_uint_bad),
		cmocka_unit_test(test_positive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
