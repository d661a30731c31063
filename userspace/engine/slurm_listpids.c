// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A Slurm job's processes as Slurm itself lists them, for sites whose
 * Slurm does not track processes by cgroup (proctrack/linuxproc, pgid):
 * `scontrol listpids JOB` on this node, filtered by step (scontrol takes
 * numeric steps only; its list names "batch" and "extern"). Used only when the job's
 * cgroups gave nothing; scontrol missing, the job unknown or a slow
 * slurmd all mean no process from here, never an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "discovery.h"
#include "num_arg.h"

#define LISTPIDS_TIMEOUT_MS	5000
#define LISTPIDS_MAX_OUTPUT	(1 << 20)

/* scontrol's whole output (NUL-terminated, malloc'ed) within the time limit, or NULL. */
static char *run_listpids(const char *id)
{
	int fds[2], devnull, status;
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	pid_t pid;

	if (!out || pipe2(fds, O_CLOEXEC)) {
		free(out);
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		if (dup2(fds[1], 1) < 0 || dup2(devnull, 2) < 0 || dup2(devnull, 0) < 0)
			_exit(127);
		execlp("scontrol", "scontrol", "listpids", id, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (pid > 0) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, LISTPIDS_TIMEOUT_MS) <= 0) {
			kill(pid, SIGKILL);	/* a slurmd that does not answer */
			len = 0;
			break;
		}
		if (len + 1 >= cap) {
			char *grown = cap < LISTPIDS_MAX_OUTPUT ? realloc(out, cap * 2) : NULL;

			if (!grown)
				break;
			out = grown;
			cap *= 2;
		}
		n = read(fds[0], out + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fds[0]);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (pid <= 0 || !len || !WIFEXITED(status) || WEXITSTATUS(status)) {
		free(out);
		return NULL;
	}
	out[len] = '\0';
	return out;
}

int slurm_listpids(uint64_t job, const char *step, pid_t self, struct pid_list *out)
{
	char id[24], *text, *line, *save = NULL;
	size_t before = out->n;

	snprintf(id, sizeof(id), "%llu", (unsigned long long)job);
	text = run_listpids(id);
	if (!text)
		return 0;
	/* "PID JOBID STEPID LOCALID GLOBALID" then one line per process. */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char first[16], stepid[24];
		unsigned long v;

		if (sscanf(line, "%15s %*s %23s", first, stepid) != 2 ||
		    num_parse_uint(first, 1, 1 << 22, &v) || (step[0] && strcmp(stepid, step)))
			continue;
		if ((pid_t)v != self && !pid_list_has(out, (pid_t)v) && pid_list_add(out, (pid_t)v)) {
			free(text);
			return -ENOMEM;
		}
	}
	free(text);
	return (int)(out->n - before);
}
