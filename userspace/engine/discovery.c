// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discovery.h"
#include "num_arg.h"
#include "proc_at.h"
#include "proc_owner.h"
#include "procfs.h"
#include "spec.h"

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

bool job_is_launcher(const struct spec_set *specs, const char *comm)
{
	return spec_is_launcher(specs, comm);
}

int job_rank_of(const struct spec_set *specs, pid_t pid, bool tasks, int *rank)
{
	const char *keys[SPEC_RANK_VARS_MAX];
	size_t nkeys = spec_rank_variables(specs, tasks, keys, SPEC_RANK_VARS_MAX);
	struct environ_buf env = {0};
	int ret;

	ret = procfs_read_environ(pid, &env, ENVIRON_MAX);
	if (ret)
		return ret;
	*rank = environ_rank(&env, keys, nkeys);
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
	DIR *d = opendir(procfs_root());
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

struct claim {
	pid_t pid;
	uid_t uid;
};

struct env_scan {
	const char *id;
	pid_t self;
	bool (*known)(void *ctx, pid_t pid);
	void *ctx;
	struct pid_list *out;
	bool slurm;		/* id names a Slurm job (and maybe a step) */
	size_t in_cgroup;	/* processes found in the job's cgroups */
	uid_t cg_owner;		/* the cgroup's owner, JOB_ANY_UID until known */
	uint64_t job;
	char step[64];
	struct claim *claims;	/* processes whose environment alone names the job */
	size_t nclaims, cap;
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

/* The owner a process of the job's cgroup gives it: v1's uid_<U>, else a user's real uid. */
static void note_cgroup_owner(struct env_scan *s, int pfd, uid_t v1_owner)
{
	struct proc_who who;

	if (s->cg_owner != JOB_ANY_UID)
		return;
	if (v1_owner != (uid_t)-1)
		s->cg_owner = v1_owner;
	/* v2: slurmstepd (root) sits in the job's cgroup too; its tasks are the user's. */
	else if (!proc_at_who(pfd, &who) && who.uid != 0)
		s->cg_owner = who.uid;
}

static int add_claim(struct env_scan *s, pid_t pid, uid_t uid)
{
	if (s->nclaims == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct claim *c = realloc(s->claims, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		s->claims = c;
		s->cap = cap;
	}
	s->claims[s->nclaims++] = (struct claim){ .pid = pid, .uid = uid };
	return 0;
}

static int match_env(pid_t pid, void *arg)
{
	struct env_scan *s = arg;
	struct environ_buf env = {0};
	struct slurm_cgroup sc;
	struct proc_who who;
	uid_t v1_owner;
	int pfd, ret = 0;

	if (pid == s->self || (s->known && s->known(s->ctx, pid)))
		return 0;
	/* Every file through one /proc/PID descriptor: a reused PID cannot mix two processes. */
	pfd = proc_at_open(pid);
	if (pfd < 0)
		return 0;
	/*
	 * Slurm's own record first: a process in a job's cgroup is that job's,
	 * whatever its environment says (an sbatch script's mpirun passes its
	 * variables on; a process in another job's cgroup is not ours).
	 */
	if (!proc_at_slurm_cgroup(pfd, &sc, &v1_owner)) {
		if (s->slurm && sc.job == s->job && (!s->step[0] || !strcmp(sc.step, s->step))) {
			s->in_cgroup++;
			note_cgroup_owner(s, pfd, v1_owner);
			ret = pid_list_add(s->out, pid);
		}
		close(pfd);
		return ret;
	}
	/*
	 * Whose claim it is comes from the kernel, not from the claim: read
	 * before the environment and again after it (a setuid exec between).
	 */
	if (!proc_at_who(pfd, &who) && !proc_at_environ(pfd, &env, ENVIRON_MAX)) {
		if (env_in_job(s, &env) && proc_at_still(pfd, &who))
			ret = add_claim(s, pid, who.uid);
		environ_free(&env);
	}
	close(pfd);
	return ret;
}

/* The processes `scontrol listpids` gives for the job: as good as its cgroup. */
static int slurm_listed(struct env_scan *s)
{
	struct pid_list l = {0};
	int n = slurm_listpids(s->job, s->step, s->self, &l);
	uid_t uid;
	gid_t gid;

	if (n < 0)
		return -ENOMEM;
	for (size_t i = 0; i < l.n; i++) {
		if (pid_list_add(s->out, l.pids[i])) {
			pid_list_free(&l);
			return -ENOMEM;
		}
		s->in_cgroup++;
		if (s->cg_owner == JOB_ANY_UID && !proc_owner_read(l.pids[i], &uid, &gid) && uid != 0)
			s->cg_owner = uid;
	}
	pid_list_free(&l);
	return 0;
}

/*
 * Whose claims count: the cgroup's owner when Slurm vouches for the job,
 * else uid, else the one uid that claims it. JOB_ANY_UID: several do.
 */
static uid_t claim_owner(const struct env_scan *s, uid_t uid, struct job_owner *who)
{
	uid_t only = JOB_ANY_UID;

	if (s->in_cgroup)
		return s->cg_owner != JOB_ANY_UID ? s->cg_owner : uid;
	if (uid != JOB_ANY_UID)
		return uid;
	for (size_t i = 0; i < s->nclaims; i++) {
		bool seen = false;

		for (size_t k = 0; k < who->nclaimants; k++)
			seen |= who->claimants[k] == s->claims[i].uid;
		if (!seen && who->nclaimants < JOB_MAX_CLAIMANTS)
			who->claimants[who->nclaimants++] = s->claims[i].uid;
		only = s->claims[i].uid;
	}
	return who->nclaimants > 1 ? JOB_ANY_UID : only;
}

int job_scan_env(const char *id, uid_t uid, pid_t self, bool (*known)(void *ctx, pid_t pid),
		 void *ctx, struct pid_list *out, struct job_owner *who)
{
	struct env_scan s = { .id = id, .self = self, .known = known, .ctx = ctx, .out = out,
			      .cg_owner = JOB_ANY_UID };
	struct job_owner local;
	uid_t owner;
	int ret;

	if (!who)
		who = &local;
	memset(who, 0, sizeof(*who));
	who->uid = JOB_ANY_UID;
	s.slurm = parse_slurm_id(id, &s.job, s.step, sizeof(s.step));
	ret = for_each_pid(match_env, &s);
	/*
	 * A Slurm job with no process in a cgroup of it: this Slurm tracks
	 * processes otherwise (proctrack/linuxproc): ask it. Its list holds
	 * what no environment shows (an mpirun run under env -i), and what it
	 * lists is the job's as surely as a cgroup.
	 */
	if (!ret && s.slurm && !s.in_cgroup && !known)
		ret = slurm_listed(&s);
	owner = claim_owner(&s, uid, who);
	if (!ret && owner == JOB_ANY_UID && who->nclaimants > 1)
		ret = -EEXIST;
	/* Only the owner's claims: another user's environment joins nothing of theirs. */
	for (size_t i = 0; !ret && i < s.nclaims; i++)
		if (s.claims[i].uid == owner)
			ret = pid_list_add(out, s.claims[i].pid);
	free(s.claims);
	who->trusted = s.in_cgroup > 0;
	who->uid = owner;
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

int job_descendants_of(const pid_t *roots, size_t nroots, struct pid_list *out)
{
	struct parent_map m = {0};
	struct pid_list tree = {0};
	int ret;

	ret = for_each_pid(record_parent, &m);
	for (size_t i = 0; !ret && i < nroots; i++)
		ret = pid_list_add(&tree, roots[i]);
	/* Breadth-first: tree grows while we walk it; what it gained past the roots is out's. */
	for (size_t i = 0; !ret && i < tree.n; i++)
		for (size_t j = 0; !ret && j < m.n; j++)
			if (m.ppid[j] == tree.pids[i] && !pid_list_has(&tree, m.pid[j])) {
				ret = pid_list_add(&tree, m.pid[j]);
				if (!ret)
					ret = pid_list_add(out, m.pid[j]);
			}
	pid_list_free(&tree);
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

enum job_match job_find(const char *id, pid_t self, uid_t uid, struct pid_list *out,
			struct job_owner *who)
{
	pid_t launcher;
	int ret = job_scan_env(id, uid, self, NULL, NULL, out, who);

	if (ret == -EEXIST)
		return JOB_MATCH_AMBIGUOUS;
	if (ret == 0 && out->n)
		return JOB_MATCH_ENV;
	if (is_live_pid(id, &launcher) && launcher != self &&
	    job_descendants(launcher, out) == 0)
		return JOB_MATCH_LAUNCHER;
	return JOB_MATCH_NONE;
}
