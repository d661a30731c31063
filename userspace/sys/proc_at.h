/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One process's /proc files read through one descriptor of its /proc/PID
 * directory. Separate opens of /proc/PID/status, cgroup and environ can
 * each find a different process when the PID is reused between them (one
 * process's uid paired with another's environment); through the
 * directory descriptor every read is the first process's, or fails with
 * ESRCH once it is gone. An exec (a setuid program) keeps the PID and the
 * directory: callers read the owner again after the environment
 * (proc_at_still).
 */
#ifndef MEMATTR_PROC_AT_H
#define MEMATTR_PROC_AT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "procfs.h"

/* Who the process is: real ids (status) and start time (stat, clock ticks since boot). */
struct proc_who {
	uid_t uid;
	gid_t gid;
	unsigned long long start;
};

/* /proc/PID as a directory descriptor (O_CLOEXEC), or -errno. */
int proc_at_open(pid_t pid);
/* The file name of pfd into buf, NUL-terminated (cut at size-1). 0, or -errno. */
int proc_at_read(int pfd, const char *name, char *buf, size_t size);
/* The start time of a /proc/PID/stat text: field 22, after the comm's last ')'. 0, or -EINVAL. */
int proc_at_parse_start(const char *stat_text, unsigned long long *start);
int proc_at_who(int pfd, struct proc_who *who);
/* Still the process who was: same start time and real uid (no setuid exec since). */
bool proc_at_still(int pfd, const struct proc_who *who);
/* procfs_read_environ through pfd. */
int proc_at_environ(int pfd, struct environ_buf *env, size_t max);
/*
 * procfs_read_slurm_cgroup through pfd; *v1_owner: the uid_<U> of a
 * cgroup v1 path (proc_owner_parse_slurm_uid), (uid_t)-1 where it has none.
 */
int proc_at_slurm_cgroup(int pfd, struct slurm_cgroup *sc, uid_t *v1_owner);

#endif
