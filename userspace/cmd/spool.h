/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node service's spool: SPOOL/<job>/ per job, named from the job ID
 * (which the job's owner chose, so it is made safe first) and, where only
 * the environment names the job, its uid; and the removal of job
 * directories older than the retention.
 */
#ifndef MEMATTR_SPOOL_H
#define MEMATTR_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A directory name for job id: letters, digits and ._-+@:= kept, anything
 * else '_', never "." or ".." or hidden, at most 128 bytes. Pure.
 */
void spool_job_name(const char *id, char *out, size_t outlen);

/* Create the spool directory if missing (0755); refuse a symlink or a non-directory. */
int spool_prepare(const char *dir, char *err, size_t errlen);

/*
 * A directory for job id that no earlier run wrote: SPOOL/<name> for a job
 * the batch system vouches for (trusted), SPOOL/<name>.u<uid> for one known
 * by its environment only (so no user can squat another's or a future
 * Slurm job's names), else with .1, .2, ... appended (a restarted service
 * or a reused PMIx namespace never overwrites figures). Not created here.
 */
int spool_job_dir(const char *spool, const char *id, uid_t uid, bool trusted, char *out,
		  size_t outlen);

/*
 * Remove job directories under spool last modified more than days ago,
 * except those in_use says are being written and, for SPOOL_OOM_KEEP_DAYS
 * whatever days says, those of a job the OOM killer hit (the post-mortem
 * is read after the fact). Returns how many were removed.
 */
#define SPOOL_OOM_KEEP_DAYS	7
int spool_retain(const char *spool, unsigned int days, bool (*in_use)(void *ctx, const char *path),
		 void *ctx);

/*
 * Whose a job directory is: the owner's uid in an attribute only root can
 * set (trusted.memattr_uid), so the spool's directories can be counted per
 * user across restarts (--max-spool-dirs-per-user). 0, or -errno
 * (-EOPNOTSUPP: a filesystem without trusted attributes).
 */
int spool_mark_owner(int dirfd, uid_t uid);

/* fn(ctx, uid) once per job directory of spool marked with its owner. 0, or -errno. */
int spool_count_owners(const char *spool, void (*fn)(void *ctx, uid_t uid), void *ctx);

#endif
