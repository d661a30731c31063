// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A run's output directory: checked early, made as the sudo user (see output_dir.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "output_dir.h"

bool output_under_sudo(void)
{
	const char *uid = getenv("SUDO_UID");

	return geteuid() == 0 && uid && getenv("SUDO_GID") && strtoul(uid, NULL, 10) != 0;
}

/*
 * Refuse an output path we could not use, without creating anything yet:
 * everything outdir_open will refuse once BPF is attached is refused here.
 */
static int check_here(const char *arg, char *err, size_t errlen)
{
	char path[PATH_MAX], copy[PATH_MAX], *parent;
	size_t len = strlen(arg);
	struct stat st;

	if (len >= sizeof(path)) {
		snprintf(err, errlen, "--output: path too long");
		return -1;
	}
	memcpy(path, arg, len + 1);
	/* "link/" would resolve through the symlink: look at "link" itself, as outdir_open does. */
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			snprintf(err, errlen, "output %s is a symbolic link: give a real directory", path);
		else if (!S_ISDIR(st.st_mode))
			snprintf(err, errlen, "output %s exists and is not a directory", path);
		else if (access(path, W_OK | X_OK))
			snprintf(err, errlen, "output directory %s is not writable: %s", path, strerror(errno));
		else
			return 0;
		return -1;
	}
	if (errno != ENOENT) {
		/* A name over NAME_MAX, a file as a parent, a loop: mkdir would fail the same way. */
		snprintf(err, errlen, "output %.200s%s: %s", path, len > 200 ? "..." : "", strerror(errno));
		return -1;
	}
	strcpy(copy, path);
	parent = dirname(copy);
	if (stat(parent, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot create output %s: %s does not exist or is not a directory",
			 path, parent);
		return -1;
	}
	if (access(parent, W_OK | X_OK)) {
		snprintf(err, errlen, "cannot create output %s: %s is not writable", path, parent);
		return -1;
	}
	/* Root passes access() where mkdir fails (/proc, a read-only mount): try it, leave nothing. */
	if (mkdir(path, 0700)) {
		snprintf(err, errlen, "cannot create output %s: %s", path, strerror(errno));
		return -1;
	}
	rmdir(path);
	return 0;
}

/* What the user's child says: its error text, and a descriptor with success. */
struct verdict {
	int ok;
	char err[1000];
};

/*
 * Run in a child that became the sudo user: fn's verdict (and the
 * descriptor it opened, if any) back through a socket pair.
 */
static int as_sudo_user(int (*fn)(const char *path, int *fd, char *err, size_t errlen),
			const char *path, int *fd, char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct verdict v = {0};
	struct iovec iov = { .iov_base = &v, .iov_len = sizeof(v) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int sv[2], status, got = -1;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		snprintf(err, errlen, "output %s: %s", path, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int out = -1;

		close(sv[0]);
		if (launch_drop_to_sudo_user())
			snprintf(v.err, sizeof(v.err), "output %s: cannot become the sudo user: %s", path,
				 strerror(errno));
		else
			v.ok = !fn(path, &out, v.err, sizeof(v.err));
		if (out >= 0) {
			memset(&u, 0, sizeof(u));
			msg.msg_control = u.buf;
			msg.msg_controllen = sizeof(u.buf);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &out, sizeof(int));
		}
		_exit(sendmsg(sv[1], &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(v) ? 0 : 1);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		snprintf(err, errlen, "output %s: fork: %s", path, strerror(errno));
		return -1;
	}
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	if (recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) == (ssize_t)sizeof(v)) {
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				memcpy(&got, CMSG_DATA(cm), sizeof(int));
	} else {
		v.ok = 0;
		snprintf(v.err, sizeof(v.err), "output %s: the sudo user's helper ended without a word", path);
	}
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	v.err[sizeof(v.err) - 1] = '\0';
	if (!v.ok) {
		if (got >= 0)
			close(got);
		snprintf(err, errlen, "%s", v.err);
		return -1;
	}
	if (fd)
		*fd = got;
	else if (got >= 0)
		close(got);
	return 0;
}

static int check_fn(const char *path, int *fd, char *err, size_t errlen)
{
	(void)fd;
	return check_here(path, err, errlen);
}

int output_check(const char *path, char *err, size_t errlen)
{
	if (!output_under_sudo())
		return check_here(path, err, errlen);
	return as_sudo_user(check_fn, path, NULL, err, errlen);
}

/* As the user: the directory made if missing, never through a symlink on its own name. */
static int open_fn(const char *arg, int *fd, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t len = strlen(arg);
	struct stat st;

	if (len >= sizeof(path)) {
		snprintf(err, errlen, "--output: path too long");
		return -1;
	}
	memcpy(path, arg, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (mkdir(path, 0750) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create output %s: %s", path, strerror(errno));
		return -1;
	}
	*fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0 || access(path, W_OK | X_OK)) {
		snprintf(err, errlen, "output directory %s: %s", path,
			 errno == ELOOP ? "is a symbolic link: give a real directory" : strerror(errno));
		return -1;
	}
	/*
	 * Root replaces and removes files in it (sticky bit or not): in a
	 * shared directory (/tmp, a group's) those could be another user's.
	 */
	if (fstat(*fd, &st) || st.st_uid != getuid()) {
		snprintf(err, errlen, "output directory %s is not yours: give a directory of your own", path);
		return -1;
	}
	return 0;
}

int output_open_as_user(const char *path, int *fd, char *fdpath, size_t fdlen, char *err,
			size_t errlen)
{
	if (as_sudo_user(open_fn, path, fd, err, errlen))
		return -1;
	if (*fd < 0) {
		snprintf(err, errlen, "output %s: no directory came back from the sudo user", path);
		return -1;
	}
	snprintf(fdpath, fdlen, "/proc/self/fd/%d/.", *fd);
	return 0;
}
