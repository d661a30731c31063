/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Discovery: which processes are a job's, and who each one is. A job ID
 * matches Slurm's cgroup of a process (the step cgroups of v1 and v2:
 * "1234" any step, "1234.0" or "1234.batch" one), else the batch system's
 * variables in the environment (SLURM_JOB_ID with SLURM_STEP_ID, PBS_JOBID,
 * LSB_JOBID, FLUX_JOB_ID, PMIX_NAMESPACE); failing that, a live PID names
 * a launcher (mpirun) whose descendants are the job. Once traced,
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

enum job_match {
	JOB_MATCH_NONE,
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

/*
 * Processes of job id now (excluding self). For a launcher match the
 * launcher comes first. Returns how the job matched.
 */
enum job_match job_find(const char *id, pid_t self, struct pid_list *out);

/*
 * Processes whose environment names job id (for following an env-matched
 * job). known(ctx, pid) true: skipped without reading its environment.
 */
int job_scan_env(const char *id, pid_t self, bool (*known)(void *ctx, pid_t pid), void *ctx,
		 struct pid_list *out);

/* pid and every live descendant of it, pid first. */
int job_descendants(pid_t pid, struct pid_list *out);

/* Launchers and daemons (mpirun, srun, orted, ...) are followed, not accounted. */
bool job_is_launcher(const char *comm);

/* *rank: the MPI rank pid's environment gives (OMPI_COMM_WORLD_RANK, ...), -1: none. 0 or -errno (unreadable). */
int job_rank_of(pid_t pid, int *rank);

/*
 * slurm_listpids.c: add the pids `scontrol listpids` gives for job (and
 * step, "" for all) on this node, not self, none twice; how many were
 * added, 0 when scontrol is missing or does not know the job, -ENOMEM.
 */
int slurm_listpids(uint64_t job, const char *step, pid_t self, struct pid_list *out);
/* pid's Slurm step: its cgroup's ("0", "batch", ...), else SLURM_STEP_ID; "" when neither says. */
void job_step_of(pid_t pid, char *step, size_t len);

#endif
