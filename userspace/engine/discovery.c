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

void job_step_of(pid_t pid, char *step, size_t len)
{
	struct environ_buf env = {0};
	struct slurm_cgroup sc;
	const char *v;

	step[0] = '\0';
	/* Slurm's cgroup first: an emptied environment cannot hide it. */
	if (!procfs_read_slurm_cgroup(pid, &sc)) {
		snprintf(step, len, "%s", sc.step);
		return;
	}
	if (procfs_read_environ(pid, &env, ENVIRON_MAX))
		return;
	v = environ_get(&env, "SLURM_STEP_ID");
	if (v)
		snprintf(step, len, "%s", v);
	environ_free(&env);
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

/*
 * A Slurm job ID, perhaps with a step: "1234", "1234.0", "1234.batch",
 * "1234.extern", "1234.interactive". step is "" for the whole job. False
 * for anything else (a PBS "1234.server" is matched by the environment).
 */
static bool parse_slurm_id(const char *id, uint64_t *job, char *step, size_t steplen)
{
	const char *dot = strchr(id, '.');
	char num[32];
	unsigned long v;

	if (!dot) {
		snprintf(step, steplen, "%s", "");
		return !num_parse_uint(id, 1, UINT32_MAX, &v) && (*job = v, true);
	}
	if ((size_t)(dot - id) >= sizeof(num))
		return false;
	memcpy(num, id, (size_t)(dot - id));
	num[dot - id] = '\0';
	if (num_parse_uint(num, 1, UINT32_MAX, &v))
		return false;
	*job = v;
	dot++;
	if (strcmp(dot, "batch") && strcmp(dot, "extern") && strcmp(dot, "interactive") &&
	    num_parse_uint(dot, 0, UINT32_MAX, &v))
		return false;
	snprintf(step, steplen, "%s", dot);
	return true;
}

struct env_scan {
	const char *id;
	pid_t self;
	bool (*known)(void *ctx, pid_t pid);
	void *ctx;
	struct pid_list *out;
	bool slurm;		/* id names a Slurm job (and maybe a step) */
	size_t in_cgroup;	/* processes found in the job's cgroups */
	uint64_t job;
	char step[64];
};

/*
 * The environment of a process with no Slurm cgroup: the job's variables
 * (SLURM_JOB_ID, PBS_JOBID, ...); with a step asked for, SLURM_STEP_ID too
 * (a batch script's processes have none).
 */
static bool env_in_job(const struct env_scan *s, const struct environ_buf *env)
{
	char job[32];
	const char *step;

	if (environ_matches_job(env, s->id))
		return true;
	if (!s->slurm || !s->step[0])
		return false;
	snprintf(job, sizeof(job), "%llu", (unsigned long long)s->job);
	if (!environ_matches_job(env, job))
		return false;
	step = environ_get(env, "SLURM_STEP_ID");
	return step ? !strcmp(step, s->step) : !strcmp(s->step, "batch");
}

static int match_env(pid_t pid, void *arg)
{
	struct env_scan *s = arg;
	struct environ_buf env = {0};
	struct slurm_cgroup sc;
	int ret = 0;

	if (pid == s->self || (s->known && s->known(s->ctx, pid)))
		return 0;
	/*
	 * Slurm's own record first: a process in a job's cgroup is that job's,
	 * whatever its environment says (an sbatch script's mpirun passes its
	 * variables on; a process in another job's cgroup is not ours).
	 */
	if (!procfs_read_slurm_cgroup(pid, &sc)) {
		if (s->slurm && sc.job == s->job && (!s->step[0] || !strcmp(sc.step, s->step))) {
			s->in_cgroup++;
			return pid_list_add(s->out, pid);
		}
		return 0;
	}
	if (procfs_read_environ(pid, &env, ENVIRON_MAX))
		return 0;	/* gone, a kernel thread, or not ours to read */
	if (env_in_job(s, &env))
		ret = pid_list_add(s->out, pid);
	environ_free(&env);
	return ret;
}

int job_scan_env(const char *id, pid_t self, bool (*known)(void *ctx, pid_t pid), void *ctx,
		 struct pid_list *out)
{
	struct env_scan s = { .id = id, .self = self, .known = known, .ctx = ctx, .out = out };
	int ret;

	s.slurm = parse_slurm_id(id, &s.job, s.step, sizeof(s.step));
	ret = for_each_pid(match_env, &s);
	/*
	 * A Slurm job with no process in a cgroup of it: this Slurm tracks
	 * processes otherwise (proctrack/linuxproc): ask it. Its list holds
	 * what no environment shows (an mpirun run under env -i).
	 */
	if (!ret && s.slurm && !s.in_cgroup && !known)
		ret = slurm_listpids(s.job, s.step, self, out) < 0 ? -ENOMEM : 0;
	return ret;
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
