// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Spec files: parsing, the exact error messages users see, directory
 * loading order, and matching -- including the shipped uprobe_specs/
 * against every file a real Open MPI rank mapped (fixtures/ompi_rank.maps).
 * Run from tests/unit (paths below are relative to it).
 */
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "procfs.h"
#include "spec.h"

#define FIX	"fixtures/specs/"

static char err[512];

static void test_good_dir(void **state)
{
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_dir(&s, FIX "good", err, sizeof(err)), 0);
	/* 10-first: 8 rules for mpi, 3 for libc; 20-second: 2. Hidden and
	 * non-.spec files are skipped (.hidden.spec would not even parse). */
	assert_int_equal(s.n, 13);
	assert_int_equal(s.rules[0].kind, SPEC_LIBRARY);
	assert_string_equal(s.rules[0].pattern, "libmpi.so");
	assert_string_equal(s.rules[0].component, "mpi");
	assert_string_equal(s.rules[0].file, FIX "good/10-first.spec");
	assert_int_equal(s.rules[0].line, 3);
	assert_int_equal(s.rules[6].kind, SPEC_FUNCTION);
	assert_string_equal(s.rules[6].pattern, "MPI_Init");
	assert_int_equal(s.rules[7].kind, SPEC_THREAD);
	assert_int_equal(s.rules[10].kind, SPEC_PATH);
	/* '#' inside a word is part of the pattern; tabs separate words. */
	assert_string_equal(s.rules[10].pattern, "/opt/weird#dir/*");
	assert_string_equal(s.rules[10].component, "libc");
	assert_int_equal(s.rules[10].line, 15);
	assert_string_equal(s.rules[11].component, "lib:extra-1.0");
	assert_string_equal(s.rules[11].file, FIX "good/20-second.spec");
	spec_free(&s);
	assert_int_equal(s.n, 0);
	assert_null(s.rules);
}

static void test_matching(void **state)
{
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_dir(&s, FIX "good", err, sizeof(err)), 0);

#define OWNER(path) spec_component_for_path(&s, path)
	/* ".so" patterns match versioned names, by base name only. */
	assert_string_equal(OWNER("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4"), "mpi");
	assert_string_equal(OWNER("/opt/ompi/lib/libmpi.so"), "mpi");
	assert_string_equal(OWNER("libmpi.so.40"), "mpi");
	assert_string_equal(OWNER("/x/libevent_core-2.1.so.7.0.1"), "mpi");
	assert_string_equal(OWNER("/usr/lib/openmpi3/mca_btl_vader.so"), "mpi");
	/* Not a prefix match: libmpi_cxx is another file. */
	assert_string_equal(OWNER("/usr/lib/libmpi_cxx.so.40"), "lib:extra-1.0");
	/* Only ".so" patterns get the version rule. */
	assert_string_equal(OWNER("/lib/exact.so.3"), "mpi");
	assert_null(OWNER("/lib/exact.so.3.1"));
	/* The version rule needs the '.': "libmpi.sox" is another name. */
	assert_null(OWNER("/x/libmpi.sox"));
	/* The base name, not the directory, is what library matches. */
	assert_null(OWNER("/usr/lib/libmpi.so.40/data.bin"));
	/* path globs: full path, '*' crosses '/'. */
	assert_string_equal(OWNER("/dev/shm/vader_segment.vm.0.7e740001.1"), "mpi");
	assert_string_equal(OWNER("/tmp/ompi.vm.0/pid.4746/pmix_dstor_ds21_4746/smseg-1-0"), "mpi");
	assert_null(OWNER("/var/tmp/ompi.vm.0/x"));
	assert_string_equal(OWNER("/opt/weird#dir/a/b"), "libc");
	/* First matching rule in load order wins: libmpi stays mpi although
	 * libc's rule names it exactly and 20-second's lib*.so matches too. */
	assert_string_equal(OWNER("/usr/lib/libc.so.6"), "libc");
	assert_string_equal(OWNER("/usr/lib/libz.so.1"), "lib:extra-1.0");
	assert_null(OWNER("/usr/bin/a.out"));
	assert_null(OWNER("[heap]"));
	assert_null(OWNER(""));
	assert_null(OWNER(NULL));
#undef OWNER

	assert_string_equal(spec_component_for_thread(&s, "progress-7"), "mpi");
	assert_string_equal(spec_component_for_thread(&s, "a.out"), "lib:extra-1.0");
	assert_null(spec_component_for_thread(&s, NULL));
	spec_free(&s);
}

static void test_empty_set(void **state)
{
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_null(spec_component_for_path(&s, "/usr/lib/libmpi.so.40"));
	assert_null(spec_component_for_thread(&s, "x"));
	assert_int_equal(spec_load_dir(&s, FIX "empty", err, sizeof(err)), 0);
	assert_int_equal(s.n, 0);
	spec_free(&s);
}

static void expect_error(const char *file, const char *msg)
{
	struct spec_set s;

	spec_init(&s);
	/* A rule loaded before stays; the failing file adds nothing. */
	assert_int_equal(spec_load_file(&s, FIX "good/20-second.spec", err, sizeof(err)), 0);
	assert_int_equal(s.n, 2);
	err[0] = '\0';
	assert_int_equal(spec_load_file(&s, file, err, sizeof(err)), -1);
	assert_string_equal(err, msg);
	assert_int_equal(s.n, 2);
	spec_free(&s);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(FIX "bad/keyword.spec",
		     FIX "bad/keyword.spec:3: unknown keyword 'libary'");
	expect_error(FIX "bad/missing.spec",
		     FIX "bad/missing.spec:4: missing argument to 'library'");
	expect_error(FIX "bad/extra.spec",
		     FIX "bad/extra.spec:2: extra arguments to 'library'");
	expect_error(FIX "bad/component_extra.spec",
		     FIX "bad/component_extra.spec:1: extra arguments to 'component'");
	expect_error(FIX "bad/name.spec",
		     FIX "bad/name.spec:1: invalid component name 'MPI' (want [a-z0-9_:.-], at most 63 characters)");
	expect_error(FIX "bad/longname.spec",
		     FIX "bad/longname.spec:1: invalid component name "
		     "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' "
		     "(want [a-z0-9_:.-], at most 63 characters)");
	expect_error(FIX "bad/before.spec",
		     FIX "bad/before.spec:2: 'path' before any 'component' line");
	expect_error(FIX "bad/offset_hex.spec",
		     FIX "bad/offset_hex.spec:3: want 'function NAME +OFFSET HEXBYTES' (offset 1-16, and at least that many bytes of hex, at most 16), got '+0x7 zz'");
	expect_error(FIX "bad/offset_short.spec",
		     FIX "bad/offset_short.spec:2: extra arguments to 'function'");
	expect_error(FIX "bad/offset_short_guard.spec",
		     FIX "bad/offset_short_guard.spec:2: want 'function NAME +OFFSET HEXBYTES' (offset 1-16, and at least that many bytes of hex, at most 16), got '+9 4885ff'");
	expect_error(FIX "bad/offset_sign.spec",
		     FIX "bad/offset_sign.spec:2: want 'function NAME +OFFSET HEXBYTES' (offset 1-16, and at least that many bytes of hex, at most 16), got '9 4885ff'");
	expect_error(FIX "bad/forward_kind.spec",
		     FIX "bad/forward_kind.spec:2: want 'forward library GLOB', 'forward function GLOB' or 'forward allocator LIBRARY-GLOB FUNCTION-GLOB'");
	expect_error(FIX "bad/forward_missing.spec",
		     FIX "bad/forward_missing.spec:1: want 'forward library GLOB', 'forward function GLOB' or 'forward allocator LIBRARY-GLOB FUNCTION-GLOB'");
	expect_error(FIX "bad/forward_extra.spec",
		     FIX "bad/forward_extra.spec:3: want 'forward library GLOB', 'forward function GLOB' or 'forward allocator LIBRARY-GLOB FUNCTION-GLOB'");
	expect_error(FIX "bad/forward_path.spec",
		     FIX "bad/forward_path.spec:1: want 'forward library GLOB', 'forward function GLOB' or 'forward allocator LIBRARY-GLOB FUNCTION-GLOB'");
	expect_error(FIX "bad/forward_allocator_short.spec",
		     FIX "bad/forward_allocator_short.spec:2: want 'forward library GLOB', 'forward function GLOB' or 'forward allocator LIBRARY-GLOB FUNCTION-GLOB'");
	expect_error(FIX "bad/rank_missing.spec",
		     FIX "bad/rank_missing.spec:2: want 'rank variable NAME' (NAME: letters, digits and '_', not a digit first)");
	expect_error(FIX "bad/rank_name.spec",
		     FIX "bad/rank_name.spec:2: want 'task variable NAME' (NAME: letters, digits and '_', not a digit first)");
	expect_error(FIX "bad/rank_word.spec",
		     FIX "bad/rank_word.spec:1: want 'pmi variable NAME' (NAME: letters, digits and '_', not a digit first)");
	expect_error(FIX "bad/launcher_long.spec",
		     FIX "bad/launcher_long.spec:1: want 'launcher NAME' (a process name: at most 15 characters, no '/')");
	expect_error(FIX "bad/launcher_path.spec",
		     FIX "bad/launcher_path.spec:1: want 'launcher NAME' (a process name: at most 15 characters, no '/')");
	expect_error(FIX "bad/launcher_extra.spec",
		     FIX "bad/launcher_extra.spec:1: want 'launcher NAME' (a process name: at most 15 characters, no '/')");
	expect_error(FIX "bad/patched_name.spec",
		     FIX "bad/patched_name.spec:2: want 'patched FUNCTION' (a C symbol: letters, digits and '_', not a digit first)");
	expect_error(FIX "bad/patched_missing.spec",
		     FIX "bad/patched_missing.spec:1: want 'patched FUNCTION' (a C symbol: letters, digits and '_', not a digit first)");
	expect_error(FIX "nope.spec", FIX "nope.spec: No such file or directory");
	expect_error(FIX "good", FIX "good: Is a directory");
}

/*
 * forward lines: anywhere in a file, whatever the current component, and
 * they name none; they never make a file a component's.
 */
static void test_forward(void **state)
{
	struct spec_set s;
	int allocators = 0;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, FIX "forward.spec", err, sizeof(err)), 0);
	assert_int_equal(s.n, 6);
	assert_int_equal(s.rules[0].kind, SPEC_FORWARD_LIBRARY);
	assert_string_equal(s.rules[0].pattern, "libucm.so");
	assert_string_equal(s.rules[0].component, "");
	assert_int_equal(s.rules[0].line, 2);
	assert_int_equal(s.rules[1].kind, SPEC_FORWARD_FUNCTION);
	assert_int_equal(s.rules[3].kind, SPEC_FORWARD_FUNCTION);
	assert_string_equal(s.rules[3].pattern, "ofi_intercept_*");
	assert_string_equal(s.rules[3].component, "");
	assert_int_equal(s.rules[4].kind, SPEC_FORWARD_LIBRARY);
	assert_int_equal(s.rules[5].kind, SPEC_FORWARD_ALLOCATOR);
	assert_string_equal(s.rules[5].pattern, "my_new*");
	assert_string_equal(s.rules[5].library, "libmyalloc.so");
	assert_string_equal(s.rules[5].component, "");
	/* An allocator is looked for in its library only, and forwards like a forward function. */
	assert_true(spec_allocator_in(&s.rules[5], "/opt/lib/libmyalloc.so.2"));
	assert_false(spec_allocator_in(&s.rules[5], "/opt/lib/libother.so"));
	assert_false(spec_allocator_in(&s.rules[1], "/opt/lib/libmyalloc.so"));
	assert_true(spec_forwards_function(&s, "my_new_aligned"));

	assert_true(spec_forwards_library(&s, "/usr/lib/x86_64-linux-gnu/libucm.so.0.0.0"));
	assert_true(spec_forwards_library(&s, "libjemalloc.so.2"));
	assert_false(spec_forwards_library(&s, "/usr/lib/x86_64-linux-gnu/libucp.so.0"));
	assert_false(spec_forwards_library(&s, "/usr/lib/libmpi.so.40"));
	assert_false(spec_forwards_library(&s, NULL));
	assert_true(spec_forwards_function(&s, "_Znwm"));
	assert_true(spec_forwards_function(&s, "_ZnwmSt11align_val_tRKSt9nothrow_t"));
	assert_false(spec_forwards_function(&s, "_Znam"));	/* not listed here */
	assert_true(spec_forwards_function(&s, "ofi_intercept_mmap"));
	assert_false(spec_forwards_function(&s, "malloc"));
	assert_false(spec_forwards_function(&s, NULL));
	assert_true(spec_has_forward_functions(&s));
	/* A forwarding library is not claimed by any component for that. */
	assert_null(spec_component_for_path(&s, "/usr/lib/libucm.so.0"));
	assert_string_equal(spec_component_for_path(&s, "/usr/lib/libmpi.so.40"), "mpi");
	spec_free(&s);

	spec_init(&s);
	assert_false(spec_has_forward_functions(&s));
	assert_int_equal(spec_load_dir(&s, "../../uprobe_specs", err, sizeof(err)), 0);
	/* The shipped specs: operator new in every variant, UCX's hooks. */
	assert_true(spec_forwards_function(&s, "_Znwm"));
	assert_true(spec_forwards_function(&s, "_Znam"));
	assert_true(spec_forwards_function(&s, "_ZnamRKSt9nothrow_t"));
	assert_true(spec_forwards_function(&s, "_ZnwmSt11align_val_t"));
	assert_false(spec_forwards_function(&s, "_ZNSt6vectorIdSaIdEEC2Ev"));
	/* ... and --heap counts operator new's blocks at its callers: it probes them in libstdc++. */
	for (size_t i = 0; i < s.n; i++)
		if (s.rules[i].kind == SPEC_FORWARD_ALLOCATOR && !fnmatch(s.rules[i].pattern, "_Znwm", 0) &&
		    spec_allocator_in(&s.rules[i], "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"))
			allocators++;
	assert_int_equal(allocators, 1);
	assert_false(spec_forwards_function(&s, "_ZdlPv"));	/* delete frees, asks for nothing */
	assert_true(spec_forwards_library(&s, "/usr/lib/x86_64-linux-gnu/libucm.so.0"));
	assert_false(spec_forwards_library(&s, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"));
	spec_free(&s);
}

/* A probe offset comes with the bytes that make it safe to use. */
static void test_function_offsets(void **state)
{
	struct spec_set s;
	char err[256];

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, FIX "offsets.spec", err, sizeof(err)), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.rules[0].pattern, "malloc");
	assert_int_equal(s.rules[0].offset, 0);
	assert_int_equal(s.rules[0].nexpect, 0);
	assert_string_equal(s.rules[1].pattern, "free");
	assert_int_equal(s.rules[1].offset, 9);
	assert_int_equal(s.rules[1].nexpect, 9);
	assert_memory_equal(s.rules[1].expect, "\x48\x85\xff\x0f\x84\xbf\x00\x00\x00", 9);
	assert_int_equal(s.rules[2].offset, 7);
	assert_int_equal(s.rules[2].nexpect, 7);
	spec_free(&s);
}

static void test_small_err_buffer(void **state)
{
	struct spec_set s;
	char small[8];

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, FIX "bad/keyword.spec", small, sizeof(small)), -1);
	assert_string_equal(small, "fixture");
	assert_int_equal(spec_load_file(&s, FIX "bad/keyword.spec", NULL, 0), -1);
	spec_free(&s);
}

static void test_longest_name(void **state)
{
	char path[] = "/tmp/memattr-spec-XXXXXX";
	char name[SPEC_NAME_MAX];
	struct spec_set s;
	FILE *f;
	int fd;

	(void)state;
	memset(name, 'z', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "component %s\nthread worker?\n", name);
	fclose(f);
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, path, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.rules[0].component, name);
	assert_string_equal(spec_component_for_thread(&s, "worker1"), name);
	assert_null(spec_component_for_thread(&s, "worker12"));
	spec_free(&s);
}

static void test_crlf(void **state)
{
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, FIX "crlf.spec", err, sizeof(err)), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.rules[0].component, "ok");
	assert_string_equal(s.rules[0].pattern, "win.so");
	spec_free(&s);
}

static void test_dir_stops_at_first_error(void **state)
{
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_dir(&s, FIX "baddir", err, sizeof(err)), -1);
	assert_string_equal(err, FIX "baddir/20-b.spec:3: unknown keyword 'bogus'");
	/* 10-a loaded, 20-b dropped whole, 30-c (also bad) never read. */
	assert_int_equal(s.n, 1);
	assert_string_equal(s.rules[0].component, "a");
	spec_free(&s);

	spec_init(&s);
	assert_int_equal(spec_load_dir(&s, FIX "no-such-dir", err, sizeof(err)), -1);
	assert_string_equal(err, FIX "no-such-dir: No such file or directory");
	spec_free(&s);
}

/* ---- the shipped specs against a real Open MPI rank ---- */

struct shipped {
	const struct spec_set *s;
	int mpi, libc, none, vmas;
	char unexpected[4096];
};

static int check_vma(const struct vma_info *v, void *arg)
{
	static const char *const not_mpi[] = {
		"", "[heap]", "[stack]", "[vdso]", "[vvar]", "[vvar_vclock]",
		"[vsyscall]", "/tmp/ompicap/r",
		/* Linked by MPI here, but common in applications: kept apart. */
		"/usr/lib/x86_64-linux-gnu/libm.so.6",
		"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
	};
	struct shipped *sh = arg;
	const char *c = spec_component_for_path(sh->s, v->path);
	const char *want = "mpi";
	size_t len;

	sh->vmas++;
	for (size_t i = 0; i < sizeof(not_mpi) / sizeof(not_mpi[0]); i++)
		if (!strcmp(v->path, not_mpi[i]))
			want = NULL;
	if (strstr(v->path, "/libc.so.6") || strstr(v->path, "/ld-linux-x86-64.so.2"))
		want = "libc";
	if (c && !strcmp(c, "mpi"))
		sh->mpi++;
	else if (c && !strcmp(c, "libc"))
		sh->libc++;
	else if (!c)
		sh->none++;
	if ((!c != !want) || (c && strcmp(c, want))) {
		len = strlen(sh->unexpected);
		snprintf(sh->unexpected + len, sizeof(sh->unexpected) - len, "%s -> %s\n",
			 v->path, c ? c : "(none)");
	}
	return 0;
}

static void test_shipped_specs_on_real_rank(void **state)
{
	struct shipped sh = { 0 };
	struct spec_set s;
	FILE *f;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_dir(&s, "../../uprobe_specs", err, sizeof(err)), 0);
	sh.s = &s;
	f = fopen("fixtures/ompi_rank.maps", "r");
	assert_non_null(f);
	assert_int_equal(procfs_parse_maps(f, false, check_vma, &sh), 0);
	fclose(f);
	if (sh.unexpected[0])
		fail_msg("misclassified:\n%s", sh.unexpected);
	/* Counts from the fixture (awk over its path column). */
	assert_int_equal(sh.vmas, 282);
	assert_int_equal(sh.libc, 10);
	assert_int_equal(sh.none, 39);
	assert_int_equal(sh.mpi, 282 - 10 - 39);

	/* Paths this rank did not map but the same install would. */
	assert_string_equal(spec_component_for_path(&s,
		"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_pml_ucx.so"), "mpi");
	assert_string_equal(spec_component_for_path(&s,
		"/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0"), "mpi");
	assert_string_equal(spec_component_for_path(&s,
		"/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/pmix_mca_prm_slurm.so"), "mpi");
	assert_string_equal(spec_component_for_path(&s,
		"/scratch/tmp/ompi.node7.1000/pid.99/1/shared_mem_pool.node7"), "mpi");
	assert_string_equal(spec_component_for_path(&s,
		"/usr/lib/x86_64-linux-gnu/libpthread.so.0"), "libc");
	assert_null(spec_component_for_path(&s, "/usr/lib/x86_64-linux-gnu/libevent-2.1.so.7"));
	assert_null(spec_component_for_path(&s, "/home/u/libmpi_helper.so"));
	spec_free(&s);
}

/*
 * Launchers are the specs' data: every name discovery followed before the
 * specs held them, Intel MPI's and MVAPICH's from their files alone, and a
 * site's from its own spec.
 */
static void test_launchers(void **state)
{
	static const char *const shipped[] = {
		"mpirun", "mpiexec", "orterun", "prterun", "prte", "orted", "prted",
		"srun", "slurmstepd", "hydra_pmi_proxy", "mpiexec.hydra", "flux-shell",
		"mpirun.mpich", "mpiexec.mpich", "mpirun.openmpi", "mpiexec.openmpi",
		"mpirun_rsh", "mpispawn", "hydra_bstrap_pr", "hydra_nameserve",
	};
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_false(spec_is_launcher(&s, "mpirun"));		/* nothing built in */
	assert_false(spec_is_launcher(NULL, "mpirun"));
	assert_int_equal(spec_load_dir(&s, "../../uprobe_specs", err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++)
		if (!spec_is_launcher(&s, shipped[i]))
			fail_msg("%s is not a launcher", shipped[i]);
	/* Exact names, not globs or prefixes; a rank's program is none. */
	assert_false(spec_is_launcher(&s, "mpirun_rs"));
	assert_false(spec_is_launcher(&s, "mpi*"));
	assert_false(spec_is_launcher(&s, "a.out"));
	assert_false(spec_is_launcher(&s, "bash"));
	assert_false(spec_is_launcher(&s, NULL));
	assert_false(spec_is_launcher(&s, "memattr-launch"));
	assert_int_equal(spec_load_file(&s, FIX "rankvar.spec", err, sizeof(err)), 0);
	assert_true(spec_is_launcher(&s, "memattr-launch"));
	/* Identity lines name no component and match no file. */
	for (size_t i = 0; i < s.n; i++)
		if (s.rules[i].kind == SPEC_LAUNCHER || s.rules[i].kind == SPEC_RANK_VARIABLE ||
		    s.rules[i].kind == SPEC_PMI_VARIABLE || s.rules[i].kind == SPEC_TASK_VARIABLE) {
			assert_string_equal(s.rules[i].component, "");
			assert_false(spec_rule_matches(&s.rules[i], s.rules[i].pattern));
		}
	spec_free(&s);

	/* MVAPICH's launcher comes from mvapich.spec alone. */
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, "../../uprobe_specs/openmpi.spec", err, sizeof(err)), 0);
	assert_false(spec_is_launcher(&s, "mpirun_rsh"));
	assert_int_equal(spec_load_file(&s, "../../uprobe_specs/mvapich.spec", err, sizeof(err)), 0);
	assert_true(spec_is_launcher(&s, "mpirun_rsh"));
	spec_free(&s);
}

/*
 * libc's functions interposers patch are glibc.spec's data (the requester
 * follows a request through them): none built in, none twice.
 */
static void test_patched_functions(void **state)
{
	static const char *const shipped[] = {
		"mmap", "mmap64", "munmap", "mremap", "madvise", "brk", "sbrk", "shmat", "shmdt",
		"mprotect", "malloc", "calloc", "realloc", "free",
	};
	const char *names[SPEC_PATCHED_MAX];
	struct spec_set s;
	size_t n;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_patched_functions(&s, names, SPEC_PATCHED_MAX), 0);
	assert_int_equal(spec_patched_functions(NULL, names, SPEC_PATCHED_MAX), 0);
	assert_int_equal(spec_load_dir(&s, "../../uprobe_specs", err, sizeof(err)), 0);
	n = spec_patched_functions(&s, names, SPEC_PATCHED_MAX);
	assert_int_equal(n, sizeof(shipped) / sizeof(shipped[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], shipped[i]);
	/* Loaded again: still once each. */
	assert_int_equal(spec_load_file(&s, "../../uprobe_specs/glibc.spec", err, sizeof(err)), 0);
	assert_int_equal(spec_patched_functions(&s, names, SPEC_PATCHED_MAX), n);
	assert_int_equal(spec_patched_functions(&s, names, 3), 3);
	for (size_t i = 0; i < s.n; i++)
		if (s.rules[i].kind == SPEC_PATCHED) {
			assert_string_equal(s.rules[i].component, "");
			assert_false(spec_rule_matches(&s.rules[i], s.rules[i].pattern));
		}
	spec_free(&s);
}

/* Intel MPI's and MVAPICH's libraries are mpi by their specs. */
static void test_new_mpis(void **state)
{
	struct spec_set s;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_file(&s, "../../uprobe_specs/intelmpi.spec", err, sizeof(err)), 0);
	assert_string_equal(spec_component_for_path(&s,
		"/opt/intel/oneapi/mpi/2021.10.0/lib/release/libmpi.so.12.0.0"), "mpi");
	assert_string_equal(spec_component_for_path(&s,
		"/opt/intel/oneapi/mpi/2021.10.0/opt/mpi/libfabric/lib/prov/libtcp-fi.so"), "mpi");
	assert_string_equal(spec_component_for_path(&s,
		"/opt/intel/oneapi/mpi/2021.13/lib/libmpifort.so.12"), "mpi");
	assert_null(spec_component_for_path(&s, "/usr/lib/x86_64-linux-gnu/libm.so.6"));
	spec_free(&s);

	spec_init(&s);
	assert_int_equal(spec_load_file(&s, "../../uprobe_specs/mvapich.spec", err, sizeof(err)), 0);
	assert_string_equal(spec_component_for_path(&s,
		"/opt/mvapich2/2.3.7/lib/libmpi.so.12.1.1"), "mpi");
	assert_string_equal(spec_component_for_path(&s, "/usr/lib64/libibumad.so.3"), "mpi");
	assert_null(spec_component_for_path(&s, "/usr/lib64/libz.so.1"));
	spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_dir),
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_empty_set),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_function_offsets),
		cmocka_unit_test(test_small_err_buffer),
		cmocka_unit_test(test_longest_name),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_dir_stops_at_first_error),
		cmocka_unit_test(test_shipped_specs_on_real_rank),
		cmocka_unit_test(test_launchers),
		cmocka_unit_test(test_patched_functions),
		cmocka_unit_test(test_new_mpis),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
