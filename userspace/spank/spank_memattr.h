/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SPANK plugin: `srun --memattr[=mpi-calls,heap] ./app` traces the
 * step's tasks from their first instruction.
 *
 * On each node (remote context, in slurmstepd, as root) the step's tasks
 * are forked and held before their exec until every plugin's
 * task_post_fork returned: once the last local task is forked, the plugin
 * starts one memattr-bpf for the node's tasks (spank_tracer.c) and lets
 * them go only when it reports that they are traced. The tracer writes
 * DIR/<node>/ and ends with the tasks; the step's end waits for it. On the
 * submitting side (local context, in srun, as the user), once the step is
 * over and every node's dataset is final, DIR/<node>/... are merged into
 * DIR/job/ with its report (spank_merge.c): one dataset for the job where
 * DIR is on a filesystem the nodes share.
 *
 * plugstack.conf: required /usr/local/lib/memattr-bpf/memattr_spank.so [bin=PATH]
 */
#ifndef MEMATTR_SPANK_H
#define MEMATTR_SPANK_H

#include <stdbool.h>
#include <sys/types.h>

#define MA_ENV_DIR	"MEMATTR_SPANK_DIR"	/* the absolute DIR, from srun to the nodes */
#define MA_ENV_MODES	"MEMATTR_SPANK_MODES"	/* "", "mpi-calls", "heap", "mpi-calls,heap" */
#define MA_MAX_TASKS	1024			/* tasks of one step on one node */

/* The job's user, as slurmstepd knows them (S_JOB_UID, S_JOB_GID, S_JOB_SUPPLEMENTARY_GIDS). */
struct ma_user {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
};

/*
 * spank_user.c: the step's filesystem work as the job's user.
 * ma_become: this process becomes u for good (a forked child). 0, or -1.
 * ma_open_outputs: in a child that became u, dir (absolute; walked from /
 * without following a symlink, its last component made 0750 if missing),
 * then dir/<node>/ (made 0750; must be u's) and dir/<node>.log (made or
 * truncated, a regular file): descriptors to both, root's from now on.
 * 0, or -1 with why. ma_run_as_user: fn(arg) in a child that became u;
 * 0 when it returned 0.
 */
int ma_become(const struct ma_user *u);
int ma_open_outputs(const struct ma_user *u, const char *dir, const char *node, int *nodefd,
		    int *logfd, char *why, size_t whylen);
int ma_run_as_user(const struct ma_user *u, int (*fn)(void *arg), void *arg);

struct ma_tracer {
	pid_t pid;	/* the memattr-bpf, not our child (it left the step's cgroup) */
	int pidfd;	/* readable when it exits */
};

/*
 * spank_tracer.c: start memattr-bpf for the held tasks, writing into the
 * directory nodefd is open on (ma_open_outputs), its stderr to logfd
 * (logname: how messages name it); 0 once it traces them, -1 with why.
 */
int ma_tracer_start(struct ma_tracer *t, const char *bin, const pid_t *pids, size_t n,
		    int nodefd, int logfd, const char *logname, const char *node, const char *job,
		    const char *modes, uid_t uid, gid_t gid, char *why, size_t whylen);
/* Wait up to timeout_s for it to end (files final), then SIGTERM, then SIGKILL. */
void ma_tracer_wait(struct ma_tracer *t, double timeout_s);

/*
 * spank_merge.c: wait for every node's final dataset in dir, merge into
 * dir/job, report it, as the caller (the user: srun, or a child of
 * slurmstepd that became them).
 */
int ma_merge_step(const char *bin, const char *dir, unsigned int nnodes, double timeout_s,
		  char *why, size_t whylen);

#endif
