// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Component table: fixed ids, interning, the "lib:<name>.so" rule and the
 * fold into "lib:other" once the table is full. The table is global, so the
 * overflow test runs last.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "components.h"

static void test_fixed_ids(void **state)
{
	(void)state;
	assert_int_equal(COMP_UNATTRIBUTED, 0);
	assert_string_equal(component_name(COMP_UNATTRIBUTED), "unattributed");
	assert_string_equal(component_name(COMP_APP), "app");
	assert_string_equal(component_name(COMP_STACK), "stack");
	assert_int_equal(component_count(), COMP_FIXED_COUNT);
	assert_int_equal(component_id("app"), COMP_APP);
	assert_int_equal(component_id("stack"), COMP_STACK);
	assert_int_equal(component_id("unattributed"), COMP_UNATTRIBUTED);
	/* Nothing to name: unattributed, and nothing interned. */
	assert_int_equal(component_id(""), COMP_UNATTRIBUTED);
	assert_int_equal(component_id(NULL), COMP_UNATTRIBUTED);
	assert_int_equal(component_count(), COMP_FIXED_COUNT);
}

static void test_interning(void **state)
{
	char name[32];
	comp_id mpi, libc;

	(void)state;
	mpi = component_id("mpi");
	libc = component_id("libc");
	assert_int_equal(mpi, COMP_FIXED_COUNT);
	assert_int_equal(libc, COMP_FIXED_COUNT + 1);
	assert_int_equal(component_count(), COMP_FIXED_COUNT + 2);
	/* A different buffer with the same text is the same component. */
	strcpy(name, "mpi");
	assert_int_equal(component_id(name), mpi);
	strcpy(name, "xyz");	/* the table keeps its own copy */
	assert_string_equal(component_name(mpi), "mpi");
	assert_string_equal(component_name(libc), "libc");
	assert_int_equal(component_count(), COMP_FIXED_COUNT + 2);
	assert_null(component_name(COMPONENTS_MAX));
	assert_null(component_name((comp_id)component_count()));
}

static void lib(const char *path, const char *want)
{
	char out[80];

	memset(out, 'X', sizeof(out));
	component_lib_name(path, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_lib_name(void **state)
{
	char small[10];

	(void)state;
	lib("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", "lib:libz.so");
	lib("/opt/x/plugin.so", "lib:plugin.so");
	lib("/opt/data.bin", "lib:data.bin");
	lib("/usr/lib/x86_64-linux-gnu/libc.so.6", "lib:libc.so");
	lib("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "lib:ld-linux-x86-64.so");
	lib("/usr/lib/x86_64-linux-gnu/libevent_core-2.1.so.7.0.1", "lib:libevent_core-2.1.so");
	/* ".so" must end the name or precede a '.': not ".sound". */
	lib("/a/libx.sound.so.2", "lib:libx.sound.so");
	lib("/a/libsocket.so", "lib:libsocket.so");
	/* A ".so" in a directory name does not count. */
	lib("/x.so/lib y.so.1", "lib:lib y.so");
	lib("libbare.so.3", "lib:libbare.so");
	lib("/tmp/", "lib:other");
	lib("", "lib:other");

	/* Truncated, always terminated. */
	component_lib_name("/usr/lib/libverylongname.so.1", small, sizeof(small));
	assert_string_equal(small, "lib:libve");
	component_lib_name("/usr/lib/libz.so", small, 5);
	assert_string_equal(small, "lib:");
	component_lib_name("/usr/lib/libz.so", small, 1);
	assert_string_equal(small, "");
}

/* Runs last: fills the table. */
static void test_overflow_folds_into_other(void **state)
{
	size_t start = component_count();
	comp_id other, id;
	char name[32];

	(void)state;
	/* Fill every slot but the last, which is kept for lib:other. */
	for (size_t i = start; i < COMPONENTS_MAX - 1; i++) {
		snprintf(name, sizeof(name), "lib:fill%zu.so", i);
		id = component_id(name);
		assert_int_equal(id, i);
	}
	assert_int_equal(component_count(), COMPONENTS_MAX - 1);

	other = component_id("lib:one-too-many.so");
	assert_int_equal(other, COMPONENTS_MAX - 1);
	assert_string_equal(component_name(other), "lib:other");
	assert_int_equal(component_count(), COMPONENTS_MAX);

	/* Further new names fold too; known names keep their ids. */
	assert_int_equal(component_id("lib:another.so"), other);
	assert_int_equal(component_id("lib:other"), other);
	assert_int_equal(component_id("mpi"), COMP_FIXED_COUNT);
	snprintf(name, sizeof(name), "lib:fill%d.so", COMPONENTS_MAX - 2);
	assert_int_equal(component_id(name), COMPONENTS_MAX - 2);
	assert_int_equal(component_count(), COMPONENTS_MAX);
	assert_null(component_name(COMPONENTS_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_ids),
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_lib_name),
		cmocka_unit_test(test_overflow_folds_into_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
