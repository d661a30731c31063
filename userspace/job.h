/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Finding a job's processes on this node from /proc. A job ID matches the
 * batch system's variables in the environment (SLURM_JOB_ID, PBS_JOBID,
 * LSB_JOBID, FLUX_JOB_ID, PMIX_NAMESPACE); failing that, a live PID names a
 * launcher (mpirun) whose descendants are the job.
 */
#ifndef MEMATTR_JOB_H
#define MEMATTR_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum job_match {
	JOB_MATCH_NONE,
	JOB_MATCH_ENV,		/* processes whose environment names the job */
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

/* Processes whose environment names job id (for following an env-matched job). */
int job_scan_env(const char *id, pid_t self, struct pid_list *out);

/* pid and every live descendant of it, pid first. */
int job_descendants(pid_t pid, struct pid_list *out);

/* Launchers and daemons (mpirun, srun, orted, ...) are followed, not accounted. */
bool job_is_launcher(const char *comm);

#endif
