// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

/* Under sudo the command runs as the invoking user, never as root. */
int launch_drop_to_sudo_user(void)
{
	const char *uid_s = getenv("SUDO_UID"), *gid_s = getenv("SUDO_GID");
	struct passwd *pw;
	uid_t uid;
	gid_t gid;

	if (!uid_s || !gid_s)
		return 0;
	uid = (uid_t)strtoul(uid_s, NULL, 10);
	gid = (gid_t)strtoul(gid_s, NULL, 10);
	pw = getpwuid(uid);
	if (pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL))
		return -1;
	if (setgid(gid) || setuid(uid))
		return -1;
	if (pw) {
		setenv("HOME", pw->pw_dir, 1);
		setenv("USER", pw->pw_name, 1);
		setenv("LOGNAME", pw->pw_name, 1);
	}
	return 0;
}

static void child(int gate, char **cmd, const struct sigaction *caller_sigpipe)
{
	char c;

	/* EOF instead of a byte: the tool failed to attach, do not run untraced. */
	if (read(gate, &c, 1) != 1)
		_exit(125);
	close(gate);
	/* The tool ignores SIGPIPE; its command must not inherit that (exec keeps SIG_IGN). */
	sigaction(SIGPIPE, caller_sigpipe, NULL);
	if (launch_drop_to_sudo_user()) {
		fprintf(stderr, "memattr-bpf: cannot switch to the sudo user: %s\n", strerror(errno));
		_exit(126);
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "memattr-bpf: cannot run %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

int launch_prepare(struct launch *l, char **cmd, const struct sigaction *caller_sigpipe,
		   char *err, size_t errlen)
{
	int fds[2];

	l->pid = -1;
	l->gate_fd = -1;
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	l->pid = fork();
	if (l->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (l->pid == 0) {
		close(fds[1]);
		child(fds[0], cmd, caller_sigpipe);
	}
	close(fds[0]);
	l->gate_fd = fds[1];
	return 0;
}

void launch_go(struct launch *l)
{
	if (l->gate_fd < 0)
		return;
	if (write(l->gate_fd, "g", 1) != 1)
		perror("memattr-bpf: starting the command");
	close(l->gate_fd);
	l->gate_fd = -1;
}

void launch_abort(struct launch *l)
{
	int status;

	if (l->gate_fd >= 0)
		close(l->gate_fd);
	l->gate_fd = -1;
	if (l->pid > 0)
		waitpid(l->pid, &status, 0);
	l->pid = -1;
}

int launch_reap(struct launch *l, int *status)
{
	if (l->pid <= 0)
		return 0;
	if (waitpid(l->pid, status, WNOHANG) != l->pid)
		return 0;
	l->pid = -1;
	return 1;
}

int launch_exit_code(const char *cmd, int status)
{
	int code = 0;

	if (WIFEXITED(status))
		code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		code = 128 + WTERMSIG(status);
	if (!code)
		return 0;
	if (WIFSIGNALED(status))
		fprintf(stderr, "memattr-bpf: %s was killed by signal %d (every file was written)\n",
			cmd, WTERMSIG(status));
	else
		fprintf(stderr, "memattr-bpf: %s exited with status %d (every file was written)\n",
			cmd, code);
	return code;
}
