/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memory limit a process lives under: its memory cgroup's and its
 * ancestors' (cgroup v2 memory.max, v1 memory.limit_in_bytes), else the
 * node's memory. What an OOM post-mortem reports as the limit that was hit.
 *
 * Every path is read under root ("" on a live system; a fake tree in the
 * unit tests): root/proc/PID/cgroup, root/proc/meminfo, and the memory
 * controller's hierarchy at root/sys/fs/cgroup/memory (v1, as on hybrid
 * machines) or root/sys/fs/cgroup (v2).
 */
#ifndef MEMATTR_MEMCG_H
#define MEMATTR_MEMCG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define MEMCG_PATH_LEN	256

/* A process's memory cgroup, as /proc/PID/cgroup names it. */
struct memcg_ref {
	bool v1;			/* the v1 memory controller's hierarchy */
	char path[MEMCG_PATH_LEN];	/* "/slurm/uid_1000/job_42", "/" */
};

struct memcg_limit {
	uint64_t limit_bytes;		/* the limit below the node's memory, else the node's memory */
	bool cgroup;			/* limit_bytes is a cgroup's, and its counters say it was reached */
	char dir[MEMCG_PATH_LEN];	/* that cgroup's path in its hierarchy, "" when none */
};

/*
 * pid's memory cgroup from root/proc/PID/cgroup: the v1 memory line where
 * there is one, else the v2 line. 0, or -errno (-ENOENT: the process is
 * gone; -EINVAL: no such line or a path that climbs).
 */
int memcg_of(const char *root, pid_t pid, struct memcg_ref *ref);

/*
 * The limit ref lives under. Of the limits on its path (the cgroup and its
 * ancestors) below the node's memory, the smallest whose cgroup says it was
 * reached (v2: memory.events "oom" above 0, the cgroup's own OOMs and its
 * descendants'; v1: memory.failcnt above 0) is the cgroup's; with none
 * reached, the OOM was the node's and the limit is the node's MemTotal.
 * ref NULL: the node's. 0, or -errno when not even MemTotal could be read.
 */
int memcg_limit(const char *root, const struct memcg_ref *ref, struct memcg_limit *out);

/* "cgroup" or "global": the kind of OOM a limit says it was. */
const char *memcg_oom_kind(const struct memcg_limit *l);

#endif
