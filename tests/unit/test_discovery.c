// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Discovery (engine/discovery.c) on a fake /proc: which processes are a
 * job's, whose job it is, each one's rank and step, which are launchers.
 * The fixture is the table below, written as /proc/PID/{stat,status,
 * environ,cgroup} files and Slurm's cgroup directories into a temporary
 * directory at the start (procfs_set_roots points the readers there), so
 * that each process's files sit next to what the tests expect of it, and
 * nothing depends on the machine's own processes, Slurm or uids.
 *
 * A Slurm cgroup is believed only when its directories are root's: the
 * tests that need Slurm's cgroups to be believed are skipped when not run
 * as root (mkdir would make them the user's).
 *
 * What each test catches (each mutation made, the test seen failing, the
 * mutation reverted; `make engine-mutants` does it again, from the same
 * list in tools/engine-mutants.py):
 *
 *   discovery.c match_env(): a process in a Slurm cgroup is also judged by
 *   its environment (drop the cgroup branch's close and return)
 *       -> test_scan_cgroup_beats_environment fails
 *   discovery.c match_env(): any Slurm cgroup of the job ID, whatever the
 *   step asked for (drop the step comparison)
 *       -> test_scan_one_step fails
 *   discovery.c env_in_job(): a claim without SLURM_STEP_ID is any step's
 *       -> test_scan_one_step fails
 *   discovery.c job_scan_env(): every uid's claims join (drop the owner test)
 *       -> test_scan_slurm_job fails
 *   discovery.c job_scan_env(): no -EEXIST when several uids claim the ID
 *       -> test_claims_of_two_users_are_ambiguous fails
 *   discovery.c note_cgroup_owner(): root's processes own the job (drop `who.uid != 0`)
 *       -> test_root_in_cgroup_owns_nothing fails
 *   discovery.c note_cgroup_owner(): the v1 path's uid_<U> ignored
 *       -> test_scan_v1_owner_from_path fails
 *   discovery.c job_step_of(): the environment's step only (no cgroup read)
 *       -> test_step_from_cgroup_before_environment fails
 *   discovery.c job_descendants(): children only (no walk of the grown list)
 *       -> test_find_launcher_and_descendants fails
 *   discovery.c job_descendants_of(): children only (no walk of the grown tree)
 *       -> test_descendants_of_several_roots fails
 *   discovery.c job_descendants_of(): the roots given back as descendants
 *       -> test_descendants_of_several_roots fails
 *   discovery.c is_live_pid(): a kernel thread taken for a launcher
 *       -> test_kernel_thread_launches_nothing fails
 *   discovery.c job_rank_of(): the task variables whatever `tasks` says
 *       -> test_rank_variables_in_order fails
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "discovery.h"
#include "procfs.h"
#include "spec.h"

#define SELF		9999	/* the tool's own pid in the fake tree: never found */
#define KTHREAD		0x00200000u

/* One process of the fake /proc. */
struct fake_proc {
	pid_t pid, ppid;
	const char *comm;
	uid_t uid;
	unsigned int flags;
	const char *cgroup;	/* /proc/PID/cgroup's text */
	const char *env[6];	/* KEY=VALUE, NULL-ended */
};

#define V2(job, step)	"0::/system.slice/slurmstepd.scope/job_" job "/step_" step "/user/task_0\n"
#define NO_SLURM	"0::/user.slice/user-1000.slice/session-1.scope\n"

static const struct fake_proc procs[] = {
	/* Slurm job 1234 (cgroup v2), user 1000: slurmstepd (root), two ranks, the batch script. */
	{ 101, 1, "slurmstepd", 0, 0, "0::/system.slice/slurmstepd.scope/job_1234/step_0/slurm\n", { NULL } },
	{ 102, 101, "lulesh", 1000, 0, V2("1234", "0"),
	  { "SLURM_JOB_ID=1234", "SLURM_STEP_ID=9", "SLURM_PROCID=0", "OMPI_COMM_WORLD_RANK=0", NULL } },
	{ 103, 101, "lulesh", 1000, 0, V2("1234", "0"),
	  { "SLURM_JOB_ID=1234", "SLURM_PROCID=1", "OMPI_COMM_WORLD_RANK=1", NULL } },
	{ 104, 1, "bash", 1000, 0, V2("1234", "batch"), { "SLURM_JOB_ID=1234", "SLURM_PROCID=0", NULL } },
	/* The same user's process in another job's cgroup, its environment naming 1234. */
	{ 201, 1, "lulesh", 1000, 0, V2("999", "0"), { "SLURM_JOB_ID=1234", NULL } },
	/* No Slurm cgroup: claims by environment, of the job's owner and of another user. */
	{ 301, 1, "helper", 1000, 0, NO_SLURM, { "SLURM_JOB_ID=1234", NULL } },
	{ 302, 1, "intruder", 2000, 0, NO_SLURM, { "SLURM_JOB_ID=1234", "SLURM_STEP_ID=3", NULL } },
	/* PBS job 77 claimed by two users' environments; rank variables of other MPIs. */
	{ 401, 1, "app", 1000, 0, NO_SLURM, { "PBS_JOBID=77.pbs1", NULL } },
	{ 402, 1, "app", 2000, 0, NO_SLURM, { "PBS_JOBID=77.pbs1", NULL } },
	{ 403, 1, "app", 1000, 0, NO_SLURM, { "PMI_RANK=5", "OMPI_COMM_WORLD_RANK=2", NULL } },
	{ 404, 1, "app", 1000, 0, NO_SLURM, { "MV2_COMM_WORLD_RANK=7", "PMI_RANK=3", NULL } },
	/* A launcher and its tree; an unrelated process; a kernel thread. */
	{ 501, 1, "mpirun", 1000, 0, NO_SLURM, { NULL } },
	{ 502, 501, "orted", 1000, 0, NO_SLURM, { NULL } },
	{ 503, 502, "app", 1000, 0, NO_SLURM, { NULL } },
	{ 504, 1, "app", 1000, 0, NO_SLURM, { NULL } },
	{ 2, 0, "kthreadd", 0, KTHREAD, "0::/\n", { NULL } },
	/* A job whose cgroup holds only slurmstepd (root's): it names no owner. */
	{ 801, 1, "slurmstepd", 0, 0, "0::/system.slice/slurmstepd.scope/job_888/step_0/slurm\n", { NULL } },
	/* A cgroup v1 job: its owner is the path's uid_<U>, not its process's (root). */
	{ 701, 1, "app", 0, 0, "4:freezer:/slurm/uid_1500/job_555/step_0\n", { NULL } },
	/* "slurm/job_1234" in a user's own (delegated) subtree: not Slurm's, not believed. */
	{ 601, 1, "forger", 1000, 0, "0::/user.slice/user-1000.slice/slurm/job_1234/step_0\n", { NULL } },
};

static char tree[] = "/tmp/test_discovery.XXXXXX";
static char proc_dir[64], cgroup_dir[64];
static struct spec_set specs;

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void make_proc(const struct fake_proc *p)
{
	char dir[128], text[512];
	size_t len = 0;

	snprintf(dir, sizeof(dir), "%s/%d", proc_dir, (int)p->pid);
	assert_int_equal(mkdir(dir, 0755), 0);
	/* Fields 1-9 (flags at 9), 10-21, then 22: the start time. */
	len = (size_t)snprintf(text, sizeof(text),
			       "%d (%s) S %d 0 0 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 %d 0\n",
			       (int)p->pid, p->comm, (int)p->ppid, p->flags, 1000 + (int)p->pid);
	write_file(dir, "stat", text, len);
	len = (size_t)snprintf(text, sizeof(text), "Name:\t%s\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n",
			       p->comm, p->uid, p->uid, p->uid, p->uid, p->uid, p->uid, p->uid, p->uid);
	write_file(dir, "status", text, len);
	write_file(dir, "cgroup", p->cgroup, strlen(p->cgroup));
	len = 0;
	for (size_t i = 0; p->env[i]; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s", p->env[i]) + 1;
	write_file(dir, "environ", text, len);
}

static void make_dirs(const char *path)
{
	char p[256];

	snprintf(p, sizeof(p), "%s", path);
	for (char *c = p + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(p, 0755);
			*c = '/';
		}
	mkdir(p, 0755);
}

static int group_setup(void **state)
{
	char path[256], err[256] = "";

	(void)state;
	assert_non_null(mkdtemp(tree));
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc", tree);
	snprintf(cgroup_dir, sizeof(cgroup_dir), "%s/cgroup", tree);
	assert_int_equal(mkdir(proc_dir, 0755), 0);
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		make_proc(&procs[i]);
	/* Slurm's directories (root's when run as root), and a user's own "slurm". */
	snprintf(path, sizeof(path), "%s/system.slice/slurmstepd.scope", cgroup_dir);
	make_dirs(path);
	snprintf(path, sizeof(path), "%s/freezer/slurm", cgroup_dir);
	make_dirs(path);
	snprintf(path, sizeof(path), "%s/user.slice/user-1000.slice/slurm", cgroup_dir);
	make_dirs(path);
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/user.slice/user-1000.slice", cgroup_dir);
		assert_int_equal(chown(path, 1000, 1000), 0);
	}
	procfs_set_roots(proc_dir, cgroup_dir);
	/* A Slurm job no cgroup shows is asked of scontrol: not this machine's. */
	setenv("PATH", "/nonexistent", 1);
	spec_init(&specs);
	/* The shipped specs: launchers and rank variables are theirs. */
	assert_int_equal(spec_load_dir(&specs, "../../uprobe_specs", err, sizeof(err)), 0);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int group_teardown(void **state)
{
	(void)state;
	procfs_set_roots(NULL, NULL);
	spec_free(&specs);
	return nftw(tree, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void need_root(void)
{
	/* Slurm's cgroup is believed only when its directories are root's. */
	if (geteuid() != 0)
		skip();
}

static bool has(const struct pid_list *l, pid_t pid)
{
	return pid_list_has(l, pid);
}

static void test_launchers_are_the_specs(void **state)
{
	(void)state;
	assert_true(job_is_launcher(&specs, "mpirun"));
	assert_true(job_is_launcher(&specs, "orted"));
	assert_true(job_is_launcher(&specs, "hydra_pmi_proxy"));
	assert_true(job_is_launcher(&specs, "srun"));
	assert_true(job_is_launcher(&specs, "slurmstepd"));
	/* MVAPICH's, from its spec file alone. */
	assert_true(job_is_launcher(&specs, "mpirun_rsh"));
	assert_true(job_is_launcher(&specs, "mpispawn"));
	assert_false(job_is_launcher(&specs, "lulesh"));
	assert_false(job_is_launcher(&specs, "bash"));
	assert_false(job_is_launcher(NULL, "mpirun"));
}

static void test_rank_variables_in_order(void **state)
{
	int rank = -2;

	(void)state;
	assert_int_equal(job_rank_of(&specs, 102, true, &rank), 0);
	assert_int_equal(rank, 0);
	assert_int_equal(job_rank_of(&specs, 103, true, &rank), 0);
	assert_int_equal(rank, 1);
	/* An MPI's own rank variable before a PMI's. */
	assert_int_equal(job_rank_of(&specs, 403, true, &rank), 0);
	assert_int_equal(rank, 2);
	assert_int_equal(job_rank_of(&specs, 404, true, &rank), 0);
	assert_int_equal(rank, 7);
	/* SLURM_PROCID is a task number: a rank only when tasks count. */
	assert_int_equal(job_rank_of(&specs, 104, false, &rank), 0);
	assert_int_equal(rank, -1);
	assert_int_equal(job_rank_of(&specs, 104, true, &rank), 0);
	assert_int_equal(rank, 0);
	assert_int_equal(job_rank_of(&specs, 501, true, &rank), 0);
	assert_int_equal(rank, -1);
	assert_int_equal(job_rank_of(&specs, 4242, true, &rank), -ENOENT);
}

static void test_step_from_cgroup_before_environment(void **state)
{
	char step[64];

	(void)state;
	need_root();
	/* Its environment says step 9: Slurm's cgroup says 0. */
	job_step_of(102, step, sizeof(step));
	assert_string_equal(step, "0");
	job_step_of(104, step, sizeof(step));
	assert_string_equal(step, "batch");
	/* No Slurm cgroup: the environment's, or none. */
	job_step_of(302, step, sizeof(step));
	assert_string_equal(step, "3");
	job_step_of(301, step, sizeof(step));
	assert_string_equal(step, "");
}

static void test_scan_slurm_job(void **state)
{
	struct pid_list l = {0};
	struct job_owner who;

	(void)state;
	need_root();
	assert_int_equal(job_scan_env("1234", JOB_ANY_UID, SELF, NULL, NULL, &l, &who), 0);
	/* Its cgroup's processes, slurmstepd's (root's) too, and its owner's claims. */
	assert_true(has(&l, 101));
	assert_true(has(&l, 102));
	assert_true(has(&l, 103));
	assert_true(has(&l, 104));
	assert_true(has(&l, 301));
	/* Another user's environment, a user's own "slurm" cgroup: nobody's proof. */
	assert_false(has(&l, 302));
	assert_false(has(&l, 601));
	assert_int_equal(l.n, 5);
	/* The owner is the tasks' (v2), not slurmstepd's root. */
	assert_int_equal(who.uid, 1000);
	assert_true(who.trusted);
	pid_list_free(&l);
}

static void test_scan_cgroup_beats_environment(void **state)
{
	struct pid_list l = {0};

	(void)state;
	need_root();
	/* 201 is in job 999's cgroup, whatever its environment claims. */
	assert_int_equal(job_scan_env("1234", 1000, SELF, NULL, NULL, &l, NULL), 0);
	assert_false(has(&l, 201));
	pid_list_free(&l);
	assert_int_equal(job_scan_env("999", JOB_ANY_UID, SELF, NULL, NULL, &l, NULL), 0);
	assert_true(has(&l, 201));
	assert_int_equal(l.n, 1);
	pid_list_free(&l);
}

static void test_scan_one_step(void **state)
{
	struct pid_list l = {0};

	(void)state;
	need_root();
	assert_int_equal(job_scan_env("1234.0", JOB_ANY_UID, SELF, NULL, NULL, &l, NULL), 0);
	assert_true(has(&l, 101));
	assert_true(has(&l, 102));
	assert_true(has(&l, 103));
	assert_false(has(&l, 104));
	/* No SLURM_STEP_ID: a batch script's process, not step 0's. */
	assert_false(has(&l, 301));
	pid_list_free(&l);
	assert_int_equal(job_scan_env("1234.batch", JOB_ANY_UID, SELF, NULL, NULL, &l, NULL), 0);
	assert_true(has(&l, 104));
	assert_true(has(&l, 301));
	assert_int_equal(l.n, 2);
	pid_list_free(&l);
}

static void test_scan_v1_owner_from_path(void **state)
{
	struct pid_list l = {0};
	struct job_owner who;

	(void)state;
	need_root();
	assert_int_equal(job_scan_env("555", JOB_ANY_UID, SELF, NULL, NULL, &l, &who), 0);
	assert_int_equal(l.n, 1);
	assert_true(has(&l, 701));
	assert_int_equal(who.uid, 1500);
	assert_true(who.trusted);
	pid_list_free(&l);
}

static void test_root_in_cgroup_owns_nothing(void **state)
{
	struct pid_list l = {0};
	struct job_owner who;

	(void)state;
	need_root();
	assert_int_equal(job_scan_env("888", JOB_ANY_UID, SELF, NULL, NULL, &l, &who), 0);
	assert_int_equal(l.n, 1);
	assert_true(has(&l, 801));
	assert_true(who.trusted);
	assert_int_equal(who.uid, JOB_ANY_UID);
	pid_list_free(&l);
}

static bool known_102(void *ctx, pid_t pid)
{
	(void)ctx;
	return pid == 102;
}

static void test_scan_skips_known_and_self(void **state)
{
	struct pid_list l = {0};

	(void)state;
	need_root();
	assert_int_equal(job_scan_env("1234", JOB_ANY_UID, 103, known_102, NULL, &l, NULL), 0);
	assert_false(has(&l, 102));
	assert_false(has(&l, 103));
	assert_true(has(&l, 104));
	pid_list_free(&l);
}

static void test_claims_of_two_users_are_ambiguous(void **state)
{
	struct pid_list l = {0};
	struct job_owner who;

	(void)state;
	assert_int_equal(job_scan_env("77", JOB_ANY_UID, SELF, NULL, NULL, &l, &who), -EEXIST);
	assert_int_equal(who.nclaimants, 2);
	assert_int_equal(who.uid, JOB_ANY_UID);
	assert_false(who.trusted);
	pid_list_free(&l);
	assert_int_equal(job_find("77", SELF, JOB_ANY_UID, &l, &who), JOB_MATCH_AMBIGUOUS);
	pid_list_free(&l);
	/* Named, one user's claim: theirs only. */
	assert_int_equal(job_find("77", SELF, 1000, &l, &who), JOB_MATCH_ENV);
	assert_int_equal(l.n, 1);
	assert_true(has(&l, 401));
	assert_int_equal(who.uid, 1000);
	pid_list_free(&l);
}

static void test_find_launcher_and_descendants(void **state)
{
	struct pid_list l = {0};
	struct job_owner who;

	(void)state;
	assert_int_equal(job_find("501", SELF, JOB_ANY_UID, &l, &who), JOB_MATCH_LAUNCHER);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.pids[0], 501);	/* the launcher first */
	assert_true(has(&l, 502));
	assert_true(has(&l, 503));
	pid_list_free(&l);
	/* The tool's own pid launches nothing of a job. */
	assert_int_equal(job_find("501", 501, JOB_ANY_UID, &l, &who), JOB_MATCH_NONE);
	pid_list_free(&l);
}

/* What a tracer adopts once it follows forks: the children of every process it knew, not those. */
static void test_descendants_of_several_roots(void **state)
{
	const pid_t roots[] = { 501, 101 }, nested[] = { 501, 502 };
	struct pid_list l = {0};

	(void)state;
	assert_int_equal(job_descendants_of(roots, 2, &l), 0);
	assert_int_equal(l.n, 4);
	assert_true(has(&l, 502));
	assert_true(has(&l, 503));	/* a grandchild */
	assert_true(has(&l, 102));
	assert_true(has(&l, 103));
	pid_list_free(&l);
	/* A root below another root is known already: not given back. */
	assert_int_equal(job_descendants_of(nested, 2, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.pids[0], 503);
	pid_list_free(&l);
}

static void test_kernel_thread_launches_nothing(void **state)
{
	struct pid_list l = {0};
	struct job_owner who;

	(void)state;
	assert_int_equal(job_find("2", SELF, JOB_ANY_UID, &l, &who), JOB_MATCH_NONE);
	pid_list_free(&l);
	assert_int_equal(job_find("4242", SELF, JOB_ANY_UID, &l, &who), JOB_MATCH_NONE);
	pid_list_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launchers_are_the_specs),
		cmocka_unit_test(test_rank_variables_in_order),
		cmocka_unit_test(test_step_from_cgroup_before_environment),
		cmocka_unit_test(test_scan_slurm_job),
		cmocka_unit_test(test_scan_cgroup_beats_environment),
		cmocka_unit_test(test_scan_one_step),
		cmocka_unit_test(test_scan_v1_owner_from_path),
		cmocka_unit_test(test_root_in_cgroup_owns_nothing),
		cmocka_unit_test(test_scan_skips_known_and_self),
		cmocka_unit_test(test_claims_of_two_users_are_ambiguous),
		cmocka_unit_test(test_find_launcher_and_descendants),
		cmocka_unit_test(test_descendants_of_several_roots),
		cmocka_unit_test(test_kernel_thread_launches_nothing),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
