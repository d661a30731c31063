/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Discovery: which processes are a job's, and who each one is. A job ID
 * matches Slurm's cgroup of a process (the step cgroups of v1 and v2:
 * "1234" any step, "1234.0" or "1234.batch" one), else the batch system's
 * variables in the environment (SLURM_JOB_ID with SLURM_STEP_ID, PBS_JOBID,
 * LSB_JOBID, FLUX_JOB_ID, PMIX_NAMESPACE); failing that, a live PID names
 * a launcher (mpirun) whose descendants are the job.
 *
 * Who may claim a job: a process in a Slurm job's cgroup is that job's
 * (Slurm put it there; no process leaves it), and the job's owner is the
 * cgroup's (uid_<U> in v1, its processes' real uid in v2). An environment
 * is what its writer chose: a process that only claims a job ID by its
 * variables joins a job only if its real uid is the job's owner's. Two
 * users' processes claiming the same ID outside any cgroup are two jobs,
 * one per uid: the caller names whose (uid), or learns that it must.
 * Once traced,
 * a job grows by the kernel's fork and exec events (a traced process's
 * children are traced; an exec is when a process's rank is read, once);
 * the environment scan is only for processes that join without a traced
 * ancestor, and never rereads a process already known.
 */
#ifndef MEMATTR_DISCOVERY_H
#define MEMATTR_DISCOVERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct spec_set;

#define JOB_ANY_UID	((uid_t)-1)	/* whose claim counts: not named yet */
#define JOB_MAX_CLAIMANTS 8

enum job_match {
	JOB_MATCH_NONE,
	JOB_MATCH_AMBIGUOUS,	/* processes of several uids claim the ID, none named */
	JOB_MATCH_ENV,		/* processes Slurm's cgroup or whose environment names the job */
	JOB_MATCH_LAUNCHER,	/* a launcher PID and its descendants */
};

struct pid_list {
	pid_t *pids;
	size_t n, cap;
};

void pid_list_free(struct pid_list *l);
int pid_list_add(struct pid_list *l, pid_t pid);
bool pid_list_has(const struct pid_list *l, pid_t pid);

/* Whose job was found: its owner, and how sure that is. */
struct job_owner {
	uid_t uid;			/* JOB_ANY_UID: none found (or ambiguous) */
	bool trusted;			/* Slurm's cgroup said so, not only environments */
	uid_t claimants[JOB_MAX_CLAIMANTS];	/* JOB_MATCH_AMBIGUOUS: the uids claiming it */
	size_t nclaimants;
};

/*
 * Processes of job id now (excluding self), of uid's claim (JOB_ANY_UID:
 * whoever claims it, when that is one uid). For a launcher match the
 * launcher comes first. Returns how the job matched; *who its owner.
 */
enum job_match job_find(const char *id, pid_t self, uid_t uid, struct pid_list *out,
			struct job_owner *who);

/*
 * Processes of job id now (for following an env-matched job): those in its
 * Slurm cgroup, and those of uid (JOB_ANY_UID: of the only uid claiming
 * it) whose environment names it. known(ctx, pid) true: skipped without
 * reading it. 0, -EEXIST (several uids claim it, none named), -errno.
 * who (may be NULL): the owner found.
 */
int job_scan_env(const char *id, uid_t uid, pid_t self, bool (*known)(void *ctx, pid_t pid),
		 void *ctx, struct pid_list *out, struct job_owner *who);

/* pid and every live descendant of it, pid first. */
int job_descendants(pid_t pid, struct pid_list *out);

/*
 * Every live descendant of the nroots processes of roots, none of roots
 * itself, added to out (none twice), from one reading of /proc. For the
 * children a tracer's scan missed: forked before their parent's fork
 * events were followed. 0 or -errno.
 */
int job_descendants_of(const pid_t *roots, size_t nroots, struct pid_list *out);

/*
 * Launchers and daemons (mpirun, srun, orted, ...) are followed, not
 * accounted: the specs' launcher lines name them (NULL specs: none).
 */
bool job_is_launcher(const struct spec_set *specs, const char *comm);

/*
 * *rank: the MPI rank pid's environment gives by the specs' rank and task
 * variables (OMPI_COMM_WORLD_RANK, ..., SLURM_PROCID; the task variables
 * only when tasks), -1: none. 0 or -errno (unreadable).
 */
int job_rank_of(const struct spec_set *specs, pid_t pid, bool tasks, int *rank);

/*
 * slurm_listpids.c: add the pids `scontrol listpids` gives for job (and
 * step, "" for all) on this node, not self, none twice; how many were
 * added, 0 when scontrol is missing or does not know the job, -ENOMEM.
 */
int slurm_listpids(uint64_t job, const char *step, pid_t self, struct pid_list *out);
/* pid's Slurm step: its cgroup's ("0", "batch", ...), else SLURM_STEP_ID; "" when neither says. */
void job_step_of(pid_t pid, char *step, size_t len);

#endif
