// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SPANK entry points of memattr_spank.so: the --memattr options, where
 * the output goes, and when the tracer starts, stops and is merged (see
 * spank_memattr.h for the sequence).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "spank_memattr.h"

SPANK_PLUGIN(memattr, 1);

#ifndef MEMATTR_BIN
#define MEMATTR_BIN "/usr/local/sbin/memattr-bpf"
#endif

static bool enabled;
static char modes[32];		/* "mpi-calls,heap" */
static char dir_opt[PATH_MAX];	/* --memattr-dir, relative to srun's cwd */
static char bin[PATH_MAX] = MEMATTR_BIN;

/* Remote: the node's tasks as they are forked, and the tracer once started. */
static pid_t task_pids[MA_MAX_TASKS];
static size_t ntasks;
static struct ma_tracer tracer = { .pid = -1, .pidfd = -1 };
/* A batch step's own directory, merged by the step itself at its end (no srun to do it). */
static bool batch_step;
static char step_dir[PATH_MAX];
static struct ma_user step_user;

/* "mpi-calls", "heap", "mpi-calls,heap" (either order) or nothing. */
static int opt_memattr(int val, const char *arg, int remote)
{
	char copy[64], *tok, *save = NULL;
	bool calls = false, heap = false;

	(void)val;
	(void)remote;
	enabled = true;
	if (!arg || !arg[0])
		return 0;
	if (strlen(arg) >= sizeof(copy)) {
		slurm_error("--memattr: '%.40s...' is too long (modes: mpi-calls,heap)", arg);
		return -1;
	}
	strcpy(copy, arg);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "mpi-calls")) {
			calls = true;
		} else if (!strcmp(tok, "heap")) {
			heap = true;
		} else {
			slurm_error("--memattr: unknown mode '%s' (modes: mpi-calls, heap)", tok);
			return -1;
		}
	}
	snprintf(modes, sizeof(modes), "%s%s%s", calls ? "mpi-calls" : "", calls && heap ? "," : "",
		 heap ? "heap" : "");
	return 0;
}

static int opt_dir(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	if (!arg || !arg[0] || strlen(arg) >= sizeof(dir_opt)) {
		slurm_error("--memattr-dir: give a directory");
		return -1;
	}
	enabled = true;
	strcpy(dir_opt, arg);
	return 0;
}

/* Registered in slurm_spank_init: also for sbatch and salloc (#SBATCH --memattr). */
static struct spank_option options[] = {
	{ "memattr", "[modes]",
	  "Trace each rank's memory by library with memattr-bpf from the first instruction; "
	  "modes: mpi-calls,heap (comma-separated, optional)", 2, 0, opt_memattr },
	{ "memattr-dir", "DIR",
	  "Where --memattr writes (default ./memattr-<job>.<step>): DIR/<node>/ per node, DIR/job/ merged; "
	  "implies --memattr",
	  1, 0, opt_dir },
	SPANK_OPTIONS_TABLE_END
};

/* Plugin arguments from plugstack.conf: bin=PATH of memattr-bpf. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	for (size_t i = 0; options[i].name; i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS)
			return slurm_error("memattr: cannot register --%s", options[i].name), -1;
	for (int i = 0; i < ac; i++) {
		if (!strncmp(av[i], "bin=", 4) && av[i][4] == '/' && strlen(av[i] + 4) < sizeof(bin)) {
			strcpy(bin, av[i] + 4);
		} else {
			slurm_error("memattr: unknown plugin argument '%s' (bin=/absolute/path/memattr-bpf)", av[i]);
			return -1;
		}
	}
	return 0;
}

/* srun, as the user, with the job and step known: make DIR and tell the nodes where it is. */
int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	char cwd[PATH_MAX], path[PATH_MAX];
	uint32_t job = 0, step = 0;
	int n;

	(void)ac;
	(void)av;
	if (!enabled)
		return 0;
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	if (!getcwd(cwd, sizeof(cwd)))
		return slurm_error("--memattr: cannot get the working directory: %m"), -1;
	if (dir_opt[0] == '/')
		n = snprintf(path, sizeof(path), "%s", dir_opt);
	else if (dir_opt[0])
		n = snprintf(path, sizeof(path), "%s/%s", cwd, dir_opt);
	else
		n = snprintf(path, sizeof(path), "%s/memattr-%u.%u", cwd, job, step);
	if (n < 0 || (size_t)n >= sizeof(path))
		return slurm_error("--memattr: output path too long"), -1;
	if (mkdir(path, 0750) && errno != EEXIST)
		return slurm_error("--memattr: cannot create %s: %m", path), -1;
	/* srun is the user: a directory they cannot write fails here, not on every node. */
	if (access(path, W_OK | X_OK))
		return slurm_error("--memattr-dir %s: not a directory you can write: %m", path), -1;
	/* srun's environment is the job's: the nodes read it (spank_getenv) from there. */
	if (setenv(MA_ENV_DIR, path, 1) || setenv(MA_ENV_MODES, modes, 1))
		return slurm_error("--memattr: cannot pass the output directory to the nodes: %m"), -1;
	return 0;
}

/*
 * This node's name as Slurm calls it (a site's node names need not be its
 * hostnames): slurmd's own SLURMD_NODENAME, which slurmstepd inherits
 * from it, read from this process's environment, never the job's (the
 * user writes that); the hostname when it is not there. Only
 * [A-Za-z0-9._-] are kept: the name is a file name under DIR.
 */
static void node_of(char *buf, size_t len)
{
	const char *slurmd = getenv("SLURMD_NODENAME");

	if (slurmd && slurmd[0])
		snprintf(buf, len, "%s", slurmd);
	else if (gethostname(buf, len) || !buf[0])
		snprintf(buf, len, "node");
	buf[len - 1] = '\0';
	for (char *c = buf; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-'))
			*c = '_';
	if (buf[0] == '.')
		buf[0] = '_';	/* never ".", "..", or hidden */
}

/*
 * The batch script's step (#SBATCH --memattr): no srun made the directory.
 * It is the submit directory's --memattr-dir, or memattr-<job>.batch
 * there, made (by ma_open_outputs, as the user) if missing.
 */
static int batch_dir(spank_t sp, uint32_t job, char *dir, size_t len)
{
	char submit[PATH_MAX];
	int n;

	if (dir_opt[0] == '/')
		n = snprintf(dir, len, "%s", dir_opt);
	else if (spank_getenv(sp, "SLURM_SUBMIT_DIR", submit, sizeof(submit)) == ESPANK_SUCCESS &&
		 submit[0] == '/')
		n = dir_opt[0] ? snprintf(dir, len, "%s/%s", submit, dir_opt)
			       : snprintf(dir, len, "%s/memattr-%u.batch", submit, job);
	else
		return slurm_error("memattr: the batch step has no submit directory"), -1;
	if (n < 0 || (size_t)n >= len)
		return slurm_error("memattr: output path too long"), -1;
	return 0;
}

/* The job's user as slurmstepd knows them; the groups copied (the step's memory may move). */
static int user_of(spank_t sp, struct ma_user *u)
{
	gid_t *groups = NULL;
	int n = 0;

	memset(u, 0, sizeof(*u));
	if (spank_get_item(sp, S_JOB_UID, &u->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &u->gid) != ESPANK_SUCCESS)
		return slurm_error("memattr: cannot learn the job's user"), -1;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &n) == ESPANK_SUCCESS && n > 0 &&
	    groups && (u->groups = calloc((size_t)n, sizeof(gid_t)))) {
		memcpy(u->groups, groups, (size_t)n * sizeof(gid_t));
		u->ngroups = (size_t)n;
	} else {
		/* No list: the primary group alone, never root's groups. */
		u->groups = calloc(1, sizeof(gid_t));
		if (!u->groups)
			return -1;
		u->groups[0] = u->gid;
		u->ngroups = 1;
	}
	return 0;
}

static int start_tracer(spank_t sp)
{
	char dir[PATH_MAX], logname[PATH_MAX + 80], node[64], job[32], mode_env[32], why[512];
	uint32_t jobid = 0;
	int nodefd, logfd, ret;

	spank_get_item(sp, S_JOB_ID, &jobid);
	if (user_of(sp, &step_user))
		return -1;
	if (spank_getenv(sp, MA_ENV_DIR, dir, sizeof(dir)) != ESPANK_SUCCESS || dir[0] != '/') {
		if (batch_dir(sp, jobid, dir, sizeof(dir)))
			return -1;
		batch_step = true;
		snprintf(step_dir, sizeof(step_dir), "%s", dir);
	}
	if (spank_getenv(sp, MA_ENV_MODES, mode_env, sizeof(mode_env)) != ESPANK_SUCCESS)
		snprintf(mode_env, sizeof(mode_env), "%s", modes);
	node_of(node, sizeof(node));
	snprintf(job, sizeof(job), "%u", jobid);
	/* The user's path, opened as the user: root only ever holds what they could open. */
	/*
	 * A directory the user cannot write is the user's mistake: the step
	 * runs untraced and says why. Failing it would fail the batch launch,
	 * and Slurm drains a node whose batch launch fails.
	 */
	if (ma_open_outputs(&step_user, dir, node, &nodefd, &logfd, why, sizeof(why))) {
		slurm_error("memattr: the step runs untraced: %s", why);
		batch_step = false;
		return 0;
	}
	snprintf(logname, sizeof(logname), "%s/%s.log", dir, node);
	ret = ma_tracer_start(&tracer, bin, task_pids, ntasks, nodefd, logfd, logname, node, job,
			      mode_env, step_user.uid, step_user.gid, why, sizeof(why));
	close(nodefd);
	close(logfd);
	if (ret) {
		slurm_error("memattr: the step is not traced: %s", why);
		return -1;
	}
	return 0;
}

/*
 * slurmstepd, as root, each task forked but held before its exec: once the
 * node's last task is here, the tracer starts and takes them all.
 */
int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	uint32_t local = 0;
	pid_t pid = -1;

	(void)ac;
	(void)av;
	if (!enabled || spank_remote(sp) != 1)
		return 0;
	if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0 ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS)
		return slurm_error("memattr: cannot learn the task's pid"), -1;
	if (ntasks == MA_MAX_TASKS)
		return slurm_error("memattr: more than %d tasks on one node", MA_MAX_TASKS), -1;
	task_pids[ntasks++] = pid;
	return ntasks == local ? start_tracer(sp) : 0;
}

static int merge_batch(void *arg)
{
	char why[512];

	(void)arg;
	if (!ma_merge_step(bin, step_dir, 1, 10, why, sizeof(why)))
		return 0;
	slurm_error("memattr: %s", why);
	return -1;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], why[512];
	uint32_t nnodes = 0;

	(void)ac;
	(void)av;
	if (!enabled)
		return 0;
	if (spank_remote(sp) == 1) {
		/* The tasks are gone: the tracer writes its last figures and ends. */
		if (tracer.pid > 0)
			ma_tracer_wait(&tracer, 30);
		/* The batch step's own merge: in the user's directory, so as the user. */
		if (tracer.pid > 0 && batch_step)
			ma_run_as_user(&step_user, merge_batch, NULL);
		free(step_user.groups);
		step_user.groups = NULL;
		return 0;
	}
	if (spank_context() != S_CTX_LOCAL || !getenv(MA_ENV_DIR) ||
	    snprintf(dir, sizeof(dir), "%s", getenv(MA_ENV_DIR)) >= (int)sizeof(dir))
		return 0;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS || !nnodes) {
		const char *env = getenv("SLURM_STEP_NUM_NODES") ?: getenv("SLURM_NNODES");

		nnodes = env ? (uint32_t)strtoul(env, NULL, 10) : 0;
	}
	if (ma_merge_step(bin, dir, nnodes, 60, why, sizeof(why)))
		fprintf(stderr, "memattr: %s\n", why);
	return 0;
}
