/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Readers for /proc/PID files. The parsers take a FILE* or a buffer so unit
 * tests can feed them fixtures; the procfs_read_* wrappers open /proc.
 */
#ifndef MEMATTR_PROCFS_H
#define MEMATTR_PROCFS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Where the kernel's files are: "/proc" and "/sys/fs/cgroup". Every reader
 * of this folder's (procfs, proc_at, proc_owner) and discovery's scan of
 * /proc go through them, so that the unit tests can point them at a fake
 * tree of fixtures (tests/unit/test_discovery.c). Nothing else sets them;
 * set before any read, the strings must outlive the reads (NULL: the
 * kernel's own again).
 */
const char *procfs_root(void);
const char *procfs_cgroup_root(void);
void procfs_set_roots(const char *proc, const char *cgroup);

/* ---- /proc/PID/environ ---- */

/* NUL-separated KEY=VALUE strings, as the kernel gives them. */
struct environ_buf {
	char *data;
	size_t len;
};

/* Read up to max bytes of /proc/PID/environ. 0 or -errno. */
int procfs_read_environ(pid_t pid, struct environ_buf *env, size_t max);
/* The same from an open environ file (proc_at.c), which stays open. */
int procfs_read_environ_fd(int fd, struct environ_buf *env, size_t max);
void environ_free(struct environ_buf *env);

/* Value of key, or NULL. Pointer into env->data. */
const char *environ_get(const struct environ_buf *env, const char *key);

/* The job ID the environment carries: the first set of the variables environ_matches_job reads. */
const char *environ_job_id(const struct environ_buf *env);

/*
 * MPI rank from the first of keys[0..nkeys) that holds a non-negative
 * decimal integer; -1 when none does. Which variables, in which order, is
 * the specs' knowledge (rank and task variable lines: spec_rank_variables).
 */
int environ_rank(const struct environ_buf *env, const char *const *keys, size_t nkeys);

/*
 * True when one of SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID,
 * PMIX_NAMESPACE equals jobid. PBS_JOBID "1234.server" also matches "1234".
 */
bool environ_matches_job(const struct environ_buf *env, const char *jobid);

/*
 * The Slurm job and step whose cgroup holds a process, from its
 * /proc/PID/cgroup text: the path names them as .../job_<J>/step_<S>/...
 * below a Slurm directory, in the cgroup v1 layout (every controller:
 * /slurm_<node>/uid_<U>/job_<J>/step_<S>[/task_<T>], or /slurm/uid_...)
 * and the v2 one (/system.slice/slurmstepd.scope/job_<J>/step_<S>/...).
 * step: "0", "1", ..., "batch", "extern", "interactive".
 */
struct slurm_cgroup {
	uint64_t job;
	char step[64];
	/* Where Slurm's own directories start: "/slurm_<node>", "/system.slice/slurmstepd.scope". */
	char anchor[256];
	/* The v1 hierarchy's controllers ("freezer"); empty on v2. */
	char controllers[64];
};

/* 0, or -ENOENT when the text names no Slurm step. */
int procfs_parse_slurm_cgroup(const char *text, struct slurm_cgroup *out);
/*
 * The same for a live process, believed only if the cgroup directories down
 * to Slurm's anchor, under cgroup_root (NULL: /sys/fs/cgroup), are root's: a
 * user who may create cgroups (a delegated subtree) could otherwise build
 * "slurm/uid_<O>/job_<J>" and claim another user's job. 0, -ENOENT, -EPERM
 * (named Slurm but not Slurm's), or -errno reading it.
 */
int procfs_read_slurm_cgroup(pid_t pid, struct slurm_cgroup *out);
int procfs_slurm_cgroup_trusted(const char *cgroup_root, const struct slurm_cgroup *sc);

/* ---- /proc/PID/maps and smaps ---- */

struct vma_info {
	uint64_t start, end;
	char perms[5];
	uint64_t offset;
	uint64_t inode;
	char path[PATH_MAX];	/* "" for anonymous, "[heap]", "[stack]", ... */
	bool deleted;		/* path ended in " (deleted)" (suffix removed) */
	/* smaps only, in bytes; 0 when read from maps */
	uint64_t rss, pss, shared_clean, shared_dirty, private_clean,
		 private_dirty, anonymous, swap;
};

typedef int (*vma_cb)(const struct vma_info *vma, void *arg);

/*
 * Parse maps (with_smaps=false) or smaps (true) text from f, calling cb once
 * per mapping with every field filled. A non-zero cb return stops parsing
 * and is returned. Malformed input returns -EINVAL.
 */
int procfs_parse_maps(FILE *f, bool with_smaps, vma_cb cb, void *arg);

int procfs_read_maps(pid_t pid, bool with_smaps, vma_cb cb, void *arg);

/*
 * One mapping of a file, asked of the kernel through maps_fd
 * (procfs_maps_open) without reading every mapping (PROCMAP_QUERY, Linux
 * 6.11): QUERY_CODE_AT, the executable one holding addr; QUERY_FILE_FROM,
 * the first one holding addr or above it. -ENOENT: none; -EOPNOTSUPP: an
 * older kernel. The smaps figures are left 0.
 */
enum vma_query { QUERY_CODE_AT, QUERY_FILE_FROM };
int procfs_maps_open(pid_t pid);
int procfs_query_file(int maps_fd, uint64_t addr, enum vma_query how, struct vma_info *v);

/*
 * Bytes of [start, end) in memory (present in /proc/PID/pagemap, open as
 * fd from procfs_pagemap_open): exact residency of part of a mapping, which
 * smaps gives only per mapping. -errno on failure.
 */
int procfs_pagemap_open(pid_t pid);
int64_t procfs_pagemap_resident(int fd, uint64_t start, uint64_t end);

/*
 * /proc/PID/mem, for reading a running process's memory without stopping
 * it (root, or PTRACE_MODE_ATTACH over it). -errno on failure.
 */
int procfs_mem_open(pid_t pid);

/*
 * Which pages of [start, start + npages * 4096) are in memory (pagemap
 * bit 63): present[i] for page i. 0 or -errno.
 */
int procfs_pagemap_present(int fd, uint64_t start, size_t npages, bool *present);

/*
 * A thread's stack pointer and program counter while it waits in a
 * syscall (/proc/PID/task/TID/syscall: "NR args... SP PC", or "-1 SP PC"
 * when blocked outside one). -EAGAIN while it runs (no registers there
 * without stopping it), -errno otherwise.
 */
int procfs_parse_thread_regs(const char *text, uint64_t *sp, uint64_t *pc);
int procfs_read_thread_regs(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc);

/* ---- small files ---- */

/* Resident set (VmRSS) in bytes from /proc/PID/statm. 0 or -errno. */
int procfs_read_rss(pid_t pid, uint64_t *rss_bytes);
int procfs_parse_statm(const char *text, long page_size, uint64_t *rss_bytes);

/* Pss in bytes from /proc/PID/smaps_rollup. */
int procfs_read_pss(pid_t pid, uint64_t *pss_bytes);

/*
 * The kernel's high-water mark of the resident set (VmHWM) in bytes, from
 * /proc/PID/status. 0, -EINVAL without the line (a zombie has none), or
 * -errno.
 */
int procfs_read_hwm(pid_t pid, uint64_t *bytes);
int procfs_parse_hwm(const char *status, uint64_t *bytes);

struct proc_stat {
	pid_t pid, ppid;
	char comm[17];
	char state;
	unsigned int flags;	/* PF_* (field 9) */
	uint64_t starttime;	/* clock ticks after boot (field 22) */
};

#define PROC_PF_KTHREAD	0x00200000u	/* a kernel thread: no user memory to trace */

/* Parse /proc/PID/stat text (comm may hold spaces and parentheses). */
int procfs_parse_stat(const char *text, struct proc_stat *st);
int procfs_read_stat(pid_t pid, struct proc_stat *st);

/* Path of /proc/PID/exe, "" on failure. */
int procfs_read_exe(pid_t pid, char *buf, size_t len);

#endif
