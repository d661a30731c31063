// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Starting memattr-bpf from slurmstepd for a step's held tasks, and waiting
 * for it at the step's end.
 *
 * The tracer must outlive the tasks (it writes its last figures after they
 * exit) and must not be one of the step's processes: Slurm kills whatever
 * is in the step's cgroup when the step ends, slurmstepd reaps any child
 * it has, and the job's own --job lookups would count it. So an
 * intermediate child moves itself into the root cgroup of each hierarchy,
 * starts the tracer and exits; the tracer is followed through a pidfd.
 * It writes into DIR/<node>/ through a descriptor the job's user opened
 * (spank_user.c): root never resolves a path the user chose, and its
 * stderr goes to DIR/<node>.log, likewise opened by the user.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spank_memattr.h"

#define READY_TIMEOUT_MS	60000	/* BPF load and attach take seconds: ample, yet not for ever */

/* Into the root of every cgroup hierarchy this process is in (v1 and v2). */
static void leave_step_cgroups(void)
{
	char line[512], path[PATH_MAX];
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *end;
		int fd;

		if (!ctrl || !(end = strchr(++ctrl, ':')))
			continue;
		*end = '\0';
		if (!ctrl[0])
			snprintf(path, sizeof(path), "/sys/fs/cgroup/cgroup.procs");
		else
			snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs",
				 strncmp(ctrl, "name=", 5) ? ctrl : ctrl + 5);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dprintf(fd, "%d\n", (int)getpid());
			close(fd);
		}
	}
	if (f)
		fclose(f);
}

/* The tracer's command line and environment; exec'd, never returns. */
static void exec_tracer(const char *bin, const pid_t *pids, size_t n, const char *node,
			const char *job, const char *modes, uid_t uid, gid_t gid)
{
	static char pidlist[MA_MAX_TASKS * 12], env_node[96], env_job[48], env_uid[32], env_gid[32];
	const char *argv[16];
	char *envp[8];
	size_t a = 0, off = 0;

	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(pidlist + off, sizeof(pidlist) - off, "%s%d", i ? "," : "", (int)pids[i]);
	argv[a++] = bin;
	argv[a++] = "--quiet";
	argv[a++] = "--pid";
	argv[a++] = pidlist;
	/* The directory the user opened, as fd 4: "." below its /proc link resolves to it and nothing else. */
	argv[a++] = "--output";
	argv[a++] = "/proc/self/fd/4/.";
	argv[a++] = "--ready-fd";
	argv[a++] = "3";
	if (strstr(modes, "mpi-calls"))
		argv[a++] = "--mpi-calls";
	if (strstr(modes, "heap"))
		argv[a++] = "--heap";
	argv[a] = NULL;
	/* The files go to the job's user, as under sudo; the dataset names its node and job. */
	snprintf(env_node, sizeof(env_node), "SLURMD_NODENAME=%s", node);
	snprintf(env_job, sizeof(env_job), "SLURM_JOB_ID=%s", job);
	snprintf(env_uid, sizeof(env_uid), "SUDO_UID=%u", (unsigned int)uid);
	snprintf(env_gid, sizeof(env_gid), "SUDO_GID=%u", (unsigned int)gid);
	envp[0] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	envp[1] = env_node;
	envp[2] = env_job;
	envp[3] = env_uid;
	envp[4] = env_gid;
	envp[5] = NULL;
	execve(bin, (char *const *)argv, envp);
	dprintf(2, "memattr: cannot run %s: %s\n", bin, strerror(errno));
	_exit(127);
}

/* The intermediate child: out of the step, the tracer started, its pid told, gone. */
static void intermediate(int ready_w, int pid_w, const char *bin, const pid_t *pids, size_t n,
			 int nodefd, int log, const char *node, const char *job, const char *modes,
			 uid_t uid, gid_t gid)
{
	int devnull = open("/dev/null", O_RDWR);
	pid_t t;

	setsid();
	leave_step_cgroups();
	t = fork();
	if (t == 0) {
		/* fd 3 is the ready pipe; 0-2 are not the step's (it may be gone before us). */
		if (dup2(ready_w, 3) < 0 || dup2(nodefd, 4) < 0 || dup2(devnull, 0) < 0 ||
		    dup2(devnull, 1) < 0 || dup2(log >= 0 ? log : devnull, 2) < 0)
			_exit(127);
		exec_tracer(bin, pids, n, node, job, modes, uid, gid);
	}
	if (write(pid_w, &t, sizeof(t)) != sizeof(t))
		_exit(1);
	_exit(t > 0 ? 0 : 1);
}

static int fail(char *why, size_t len, const char *fmt, const char *arg)
{
	snprintf(why, len, fmt, arg);
	return -1;
}

/* "ready" from the tracer, or why not (it exited: its log says why). */
static int await_ready(int ready_r, const char *logname, char *why, size_t whylen)
{
	struct pollfd pfd = { .fd = ready_r, .events = POLLIN };
	char buf[16];
	ssize_t n;
	int r;

	do
		r = poll(&pfd, 1, READY_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return fail(why, whylen, "memattr-bpf did not start within 60 s (see %s)", logname);
	n = read(ready_r, buf, sizeof(buf));
	if (n < 5 || strncmp(buf, "ready", 5))
		return fail(why, whylen, "memattr-bpf exited before tracing (see %s)", logname);
	return 0;
}

int ma_tracer_start(struct ma_tracer *t, const char *bin, const pid_t *pids, size_t n,
		    int nodefd, int logfd, const char *logname, const char *node, const char *job,
		    const char *modes, uid_t uid, gid_t gid, char *why, size_t whylen)
{
	int ready[2], pidp[2], ret = -1;
	pid_t mid;

	if (pipe2(ready, O_CLOEXEC))
		return fail(why, whylen, "pipe: %s", strerror(errno));
	if (pipe2(pidp, O_CLOEXEC)) {
		close(ready[0]);
		close(ready[1]);
		return fail(why, whylen, "pipe: %s", strerror(errno));
	}
	mid = fork();
	if (mid == 0)
		intermediate(ready[1], pidp[1], bin, pids, n, nodefd, logfd, node, job, modes, uid, gid);
	close(ready[1]);
	close(pidp[1]);
	if (mid < 0) {
		fail(why, whylen, "fork: %s", strerror(errno));
		goto out;
	}
	if (read(pidp[0], &t->pid, sizeof(t->pid)) != sizeof(t->pid) || t->pid <= 0) {
		fail(why, whylen, "could not start %s", bin);
		goto out;
	}
	waitpid(mid, NULL, 0);	/* ECHILD if slurmstepd reaped it first: fine */
	/* Before it can exit and its pid be reused: the pidfd follows this process only. */
	t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	ret = await_ready(ready[0], logname, why, whylen);
out:
	close(ready[0]);
	close(pidp[0]);
	return ret;
}

void ma_tracer_wait(struct ma_tracer *t, double timeout_s)
{
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (t->pidfd < 0)
		return;
	if (poll(&pfd, 1, (int)(timeout_s * 1000)) == 0) {
		/* SIGTERM: it flushes every file and detaches. */
		syscall(SYS_pidfd_send_signal, t->pidfd, SIGTERM, NULL, 0);
		if (poll(&pfd, 1, 10000) == 0)
			syscall(SYS_pidfd_send_signal, t->pidfd, SIGKILL, NULL, 0);
	}
	close(t->pidfd);
	t->pidfd = -1;
}
