// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "num_arg.h"
#include "procfs.h"

#define ENVIRON_MAX	(1 << 20)

void pid_list_free(struct pid_list *l)
{
	free(l->pids);
	memset(l, 0, sizeof(*l));
}

int pid_list_add(struct pid_list *l, pid_t pid)
{
	if (pid_list_has(l, pid))
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		pid_t *p = realloc(l->pids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->pids = p;
		l->cap = cap;
	}
	l->pids[l->n++] = pid;
	return 0;
}

bool pid_list_has(const struct pid_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->pids[i] == pid)
			return true;
	return false;
}

/* Launchers and daemons: followed to their children, never accounted. One a line. */
static const char *const launchers[] = {
	"mpirun", "mpiexec", "orterun", "prterun", "prte", "orted", "prted",
	"srun", "slurmstepd", "hydra_pmi_proxy", "mpiexec.hydra", "flux-shell",
	"mpirun.mpich", "mpiexec.mpich", "mpirun.openmpi", "mpiexec.openmpi", /* Debian: comm is the symlink run */
};

bool job_is_launcher(const char *comm)
{
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (!strcmp(comm, launchers[i]))
			return true;
	return false;
}

int job_rank_of(pid_t pid, int *rank)
{
	struct environ_buf env = {0};
	int ret = procfs_read_environ(pid, &env, ENVIRON_MAX);

	if (ret)
		return ret;
	*rank = environ_rank(&env);
	environ_free(&env);
	return 0;
}

/* Calls fn for each numeric entry of /proc. */
static int for_each_pid(int (*fn)(pid_t pid, void *arg), void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		ret = fn((pid_t)strtol(de->d_name, NULL, 10), arg);
	}
	closedir(d);
	return ret;
}

struct env_scan {
	const char *id;
	pid_t self;
	bool (*known)(void *ctx, pid_t pid);
	void *ctx;
	struct pid_list *out;
};

static int match_env(pid_t pid, void *arg)
{
	struct env_scan *s = arg;
	struct environ_buf env = {0};
	int ret = 0;

	if (pid == s->self || (s->known && s->known(s->ctx, pid)))
		return 0;
	if (procfs_read_environ(pid, &env, ENVIRON_MAX))
		return 0;	/* gone, a kernel thread, or not ours to read */
	if (environ_matches_job(&env, s->id))
		ret = pid_list_add(s->out, pid);
	environ_free(&env);
	return ret;
}

int job_scan_env(const char *id, pid_t self, bool (*known)(void *ctx, pid_t pid), void *ctx,
		 struct pid_list *out)
{
	struct env_scan s = { id, self, known, ctx, out };

	return for_each_pid(match_env, &s);
}

struct parent_map {
	pid_t *pid, *ppid;
	size_t n, cap;
};

static int record_parent(pid_t pid, void *arg)
{
	struct parent_map *m = arg;
	struct proc_stat st;

	if (procfs_read_stat(pid, &st))
		return 0;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		pid_t *a = realloc(m->pid, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		m->pid = a;
		a = realloc(m->ppid, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		m->ppid = a;
		m->cap = cap;
	}
	m->pid[m->n] = pid;
	m->ppid[m->n++] = st.ppid;
	return 0;
}

int job_descendants(pid_t pid, struct pid_list *out)
{
	struct parent_map m = {0};
	int ret;

	ret = for_each_pid(record_parent, &m);
	if (!ret)
		ret = pid_list_add(out, pid);
	/* Breadth-first: out grows while we walk it. */
	for (size_t i = 0; !ret && i < out->n; i++)
		for (size_t j = 0; !ret && j < m.n; j++)
			if (m.ppid[j] == out->pids[i])
				ret = pid_list_add(out, m.pid[j]);
	free(m.pid);
	free(m.ppid);
	return ret;
}

static bool is_live_pid(const char *id, pid_t *pid)
{
	struct proc_stat st;
	unsigned long v;

	if (num_parse_uint(id, 1, 1 << 22, &v))
		return false;
	*pid = (pid_t)v;
	/* A kernel thread launches no job: kthreadd's descendants are kernel threads. */
	return procfs_read_stat(*pid, &st) == 0 && !(st.flags & PROC_PF_KTHREAD);
}

enum job_match job_find(const char *id, pid_t self, struct pid_list *out)
{
	pid_t launcher;

	if (job_scan_env(id, self, NULL, NULL, out) == 0 && out->n)
		return JOB_MATCH_ENV;
	if (is_live_pid(id, &launcher) && launcher != self &&
	    job_descendants(launcher, out) == 0)
		return JOB_MATCH_LAUNCHER;
	return JOB_MATCH_NONE;
}
