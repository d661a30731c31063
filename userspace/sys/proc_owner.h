/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who a process is, from what its user cannot change: the real uid and
 * gid in /proc/PID/status (an environment says what its writer wants),
 * and the uid_<U> of the Slurm cgroup v1 path slurmstepd put it in
 * (/slurm_<node>/uid_<U>/job_<J>/step_<S>: no process leaves the cgroup
 * Slurm chose, and uid_<U> is the job's owner's). Cgroup v2 paths carry
 * no uid; there the job's owner is its processes' real uid.
 * The parsers are pure (unit-tested); the readers read /proc.
 */
#ifndef MEMATTR_PROC_OWNER_H
#define MEMATTR_PROC_OWNER_H

#include <sys/types.h>

/* The real uid and gid of a /proc/PID/status text. 0, or -EINVAL. */
int proc_owner_parse_status(const char *text, uid_t *uid, gid_t *gid);
/* The same for a live process: 0, or -errno (gone: -ENOENT). */
int proc_owner_read(pid_t pid, uid_t *uid, gid_t *gid);

/*
 * The uid_<U> component right above the job_<J> of a Slurm cgroup v1 path
 * in a /proc/PID/cgroup text (any line). 0, or -ENOENT (none: v2, or no
 * Slurm cgroup).
 */
int proc_owner_parse_slurm_uid(const char *cgroup_text, uid_t *uid);
/* The same for a live process. */
int proc_owner_read_slurm_uid(pid_t pid, uid_t *uid);

#endif
