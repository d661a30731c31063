// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The filesystem work slurmstepd (root) does for a --memattr step, done as
 * the job's user: --memattr-dir comes from the user (the job's environment,
 * the batch script's options), so every path under it is opened by a
 * forked child that has become the user (setgroups, setgid, setuid: for
 * good, not just its effective ids), one component at a time relative to
 * the previous one, never through a symlink. What the user may not do
 * there, the child cannot either; what it opened it hands back to root as
 * descriptors (SCM_RIGHTS), so root never looks a user-chosen path up
 * again. Nothing is chowned or unlinked as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spank_memattr.h"

/*
 * slurmstepd's descriptors (its sockets, Slurm's files) must not reach a
 * process the user owns: once it runs as the user, the user may ptrace it.
 */
static void close_inherited(int keep)
{
	if (keep > 3)
		close_range(3, (unsigned int)keep - 1, 0);
	close_range(keep >= 3 ? (unsigned int)keep + 1 : 3, ~0U, 0);
}

int ma_become(const struct ma_user *u)
{
	/* Groups first: after setuid, setgroups is no longer allowed. */
	if (setgroups(u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid))
		return -1;
	/* Root cannot come back: a setuid that only changed the effective id would let it. */
	if (u->uid != 0 && (setuid(0) == 0 || geteuid() == 0))
		return -1;
	return 0;
}

/* One reply from the child: a status line and up to two descriptors. */
struct reply {
	int err;		/* 0, or an errno */
	char why[448];
};

static void send_reply(int sock, const struct reply *r, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)r, .iov_len = sizeof(*r) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (nfds) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
		_exit(1);
}

static int recv_reply(int sock, struct reply *r, int *fds, int max)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = r, .iov_len = sizeof(*r) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int n = 0;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*r))
		return -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (n > max)
			n = max;
		memcpy(fds, CMSG_DATA(cm), (size_t)n * sizeof(int));
	}
	return n;
}

/* An error the user can act on, in r; -1. */
__attribute__((format(printf, 3, 4)))
static int say(struct reply *r, int err, const char *fmt, ...)
{
	va_list ap;

	r->err = err ? err : EINVAL;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * dir (absolute), walked from / as the user: each component a directory,
 * not a symlink; the last made 0750 when missing. An O_PATH descriptor.
 */
static int walk(const char *dir, struct reply *r)
{
	char comp[NAME_MAX + 1];
	const char *p = dir;
	int fd, next;

	if (dir[0] != '/')
		return say(r, EINVAL, "%s: not an absolute path", dir);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0) {
		size_t n;
		bool last;

		while (*p == '/')
			p++;
		if (!*p)
			return fd;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			close(fd);
			return say(r, ENAMETOOLONG, "%s: a name in it is too long", dir);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		last = !p[strspn(p, "/")];
		if (!strcmp(comp, ".."))
			return close(fd), say(r, EINVAL, "%s: '..' in it: give the directory's own path", dir);
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && last &&
		    (!mkdirat(fd, comp, 0750) || errno == EEXIST))
			next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			struct stat st;
			int e = errno;

			if (!fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
				say(r, ELOOP, "%s: '%s' in it is a symbolic link (not followed: give the real path)",
				    dir, comp);
			else
				say(r, e, "%s: %s", dir, strerror(e));
			close(fd);
			return -1;
		}
		close(fd);
		fd = next;
	}
	return say(r, errno, "%s: %s", dir, strerror(errno));
}

/* The child, as the user: DIR, DIR/<node>/ (the user's own) and DIR/<node>.log. Never returns. */
static void open_as_user(int sock, const struct ma_user *u, const char *dir, const char *node)
{
	struct reply r = {0};
	char log[NAME_MAX + 1];
	struct stat st;
	int dfd, fds[2] = { -1, -1 };

	close_inherited(sock);
	if (ma_become(u)) {
		say(&r, errno, "cannot become the job's user: %s", strerror(errno));
		goto out;
	}
	dfd = walk(dir, &r);
	if (dfd < 0)
		goto out;
	if (mkdirat(dfd, node, 0750) && errno != EEXIST) {
		say(&r, errno, "cannot create %s/%s as the job's user: %s", dir, node, strerror(errno));
		goto out;
	}
	fds[0] = openat(dfd, node, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* The tracer (root) writes in it: it must be the user's, so nobody else plants links there. */
	if (fds[0] < 0 || fstat(fds[0], &st) || st.st_uid != u->uid) {
		say(&r, fds[0] < 0 ? errno : EPERM, "%s/%s is not a directory of the job's user", dir, node);
		goto out;
	}
	snprintf(log, sizeof(log), "%s.log", node);
	/* O_NONBLOCK: a FIFO on the name fails at once instead of hanging the step. */
	fds[1] = openat(dfd, log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0640);
	if (fds[1] < 0 || fstat(fds[1], &st) || !S_ISREG(st.st_mode) ||
	    fcntl(fds[1], F_SETFL, O_WRONLY)) {
		say(&r, fds[1] < 0 ? errno : EINVAL, "%s/%s is not a file the job's user can write", dir, log);
		goto out;
	}
	send_reply(sock, &r, fds, 2);
	_exit(0);
out:
	send_reply(sock, &r, NULL, 0);
	_exit(1);
}

static const struct timeval helper_deadline = { .tv_sec = 30 };

int ma_open_outputs(const struct ma_user *u, const char *dir, const char *node, int *nodefd,
		    int *logfd, char *why, size_t whylen)
{
	struct reply r = {0};
	int sv[2], fds[2] = { -1, -1 }, n, status;
	pid_t pid;

	*nodefd = *logfd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		snprintf(why, whylen, "socketpair: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		open_as_user(sv[1], u, dir, node);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return -1;
	}
	/* The helper is the user's: stopped or stuck on a slow file system, it may not hold the step. */
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &helper_deadline, sizeof(helper_deadline));
	n = recv_reply(sv[0], &r, fds, 2);
	close(sv[0]);
	if (n < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == 2 && !r.err) {
		*nodefd = fds[0];
		*logfd = fds[1];
		return 0;
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	r.why[sizeof(r.why) - 1] = '\0';
	snprintf(why, whylen, "%s", n < 0 ? "the job user's helper ended without a word" : r.why);
	return -1;
}

int ma_run_as_user(const struct ma_user *u, int (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		close_inherited(-1);
		_exit(ma_become(u) ? 126 : fn(arg) ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
