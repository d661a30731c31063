// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Attribution rules that do not depend on events: who owns a mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "classify.h"

static struct spec_set specs;
static struct classifier cls;

static int setup(void **state)
{
	char err[256];

	(void)state;
	spec_init(&specs);
	/* The specs shipped with the tool: the tests check what users get. */
	if (spec_load_dir(&specs, "../../uprobe_specs", err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	classifier_init(&cls, &specs);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	classifier_free(&cls);
	spec_free(&specs);
	return 0;
}

static const char *owner(const char *path, const char *exe, bool *code)
{
	return component_name(classify_path(&cls, path, exe, code));
}

static void test_files(void **state)
{
	const char *exe = "/home/u/bin/solver";
	bool code;

	(void)state;
	assert_string_equal(owner(exe, exe, &code), "app");
	assert_true(code);
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4", exe, &code), "mpi");
	assert_true(code);
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so",
				  exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libopen-pal.so.40.30.2", exe, &code), "mpi");
	assert_string_equal(owner("/dev/shm/vader_segment.vm.3a1f0001.0", exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libc.so.6", exe, &code), "libc");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", exe, &code), "libc");
	assert_string_equal(owner("/home/u/lib/libhelper.so", exe, &code), "lib:libhelper.so");
	assert_true(code);
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libm.so.6", exe, &code), "lib:libm.so");
}

/* MPICH 4.0.2 as Debian installs it: files seen mapped in a rank (mpich.spec). */
static void test_mpich_files(void **state)
{
	const char *exe = "/home/u/bin/solver";
	bool code;

	(void)state;
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libmpich.so.12.2.2", exe, &code), "mpi");
	assert_true(code);
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libmpichfort.so.12.2.2", exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libucm.so.0.0.0", exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so.0.0.0", exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/hwloc/hwloc_pci.so", exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libXNVCtrl.so.0.0.0", exe, &code), "mpi");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libnl-route-3.so.200.26.0", exe, &code), "mpi");
	assert_string_equal(owner("/dev/shm/mpich_shar_tmpDD2fav", exe, &code), "mpi");
	assert_string_equal(owner("/dev/shm/ucx_shm_posix_29174cfc", exe, &code), "mpi");
	assert_string_equal(owner("/SYSV00000000", exe, &code), "mpi");
	/* Pulled in by hwloc's plugins too, but an application may use them itself. */
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", exe, &code),
			    "lib:libstdc++.so");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libxml2.so.2.9.14", exe, &code),
			    "lib:libxml2.so");
	assert_string_equal(owner("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1.0.0", exe, &code),
			    "lib:libOpenCL.so");
}

static void test_special_and_data(void **state)
{
	bool code;

	(void)state;
	assert_string_equal(owner("[stack]", "/bin/x", &code), "stack");
	assert_false(code);
	assert_string_equal(owner("[heap]", "/bin/x", &code), "unattributed");
	assert_string_equal(owner("[vdso]", "/bin/x", &code), "unattributed");
	assert_string_equal(owner("", "/bin/x", &code), "unattributed");
	/* A data file is not its own owner: whoever mapped it is. */
	assert_string_equal(owner("/usr/lib/locale/locale-archive", "/bin/x", &code), "unattributed");
	assert_false(code);
}

/*
 * Paths are remembered once classified, in fewer slots than a node maps:
 * more paths than slots, each classified twice, the second time from the
 * cache or after its slot went to another path, always keep their own
 * owner and kind (a library, MPI's, a data file).
 */
static void test_cache_keeps_each_paths_owner(void **state)
{
	const char *exe = "/home/u/bin/solver";
	char path[64], want[64];
	bool code;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 4 * CLASSIFY_CACHE_SLOTS; i++) {
			switch (i % 3) {
			case 0:
				/* Few names: the component table has room for some libraries only. */
				snprintf(path, sizeof(path), "/opt/l%d/libpart%d.so", i, i % 8);
				snprintf(want, sizeof(want), "lib:libpart%d.so", i % 8);
				break;
			case 1:
				snprintf(path, sizeof(path), "/dev/shm/vader_segment.n%d", i);
				snprintf(want, sizeof(want), "mpi");
				break;
			default:
				snprintf(path, sizeof(path), "/data/input-%d.bin", i);
				snprintf(want, sizeof(want), "unattributed");
			}
			assert_string_equal(owner(path, exe, &code), want);
			assert_int_equal(code, i % 3 != 2);
		}
	}
}

static void test_anon_caller(void **state)
{
	comp_id mpi = component_id("mpi"), helper = component_id("lib:libhelper.so");

	(void)state;
	assert_int_equal(classify_anon_caller(&cls, COMP_APP, false), COMP_APP);
	assert_int_equal(classify_anon_caller(&cls, mpi, false), mpi);
	assert_int_equal(classify_anon_caller(&cls, helper, false), helper);
	/* libc never owns what it maps for others: if libc is all we know, unknown. */
	assert_int_equal(classify_anon_caller(&cls, component_id("libc"), false), COMP_UNATTRIBUTED);
	assert_int_equal(classify_anon_caller(&cls, component_id("libc"), true), COMP_STACK);
	/* The program's thread stacks are `stack`; MPI's threads' stacks are MPI's. */
	assert_int_equal(classify_anon_caller(&cls, COMP_APP, true), COMP_STACK);
	assert_int_equal(classify_anon_caller(&cls, mpi, true), mpi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_mpich_files),
		cmocka_unit_test(test_special_and_data),
		cmocka_unit_test(test_cache_keeps_each_paths_owner),
		cmocka_unit_test(test_anon_caller),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
