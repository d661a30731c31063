// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A process's /proc files through one directory descriptor (see proc_at.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_at.h"
#include "proc_owner.h"

#define STATUS_MAX	4096
#define STAT_MAX	1024	/* comm is at most 16 bytes; 52 numbers after it */

int proc_at_open(pid_t pid)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", procfs_root(), (int)pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int open_in(int pfd, const char *name)
{
	int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int proc_at_read(int pfd, const char *name, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n = 0;
	int fd = open_in(pfd, name), err;

	if (fd < 0)
		return fd;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	err = n < 0 ? -errno : 0;
	close(fd);
	buf[got] = '\0';
	return err;
}

int proc_at_parse_start(const char *text, unsigned long long *start)
{
	/* The comm may hold ')' and spaces: the fields start after the last ')'. */
	const char *p = strrchr(text, ')');
	char *end;

	if (!p)
		return -EINVAL;
	p++;
	/* Field 3 (state) is the first after it; the start time is field 22. */
	for (int field = 2; field < 22; field++) {
		if (*p != ' ')
			return -EINVAL;
		p++;
		if (field == 21)
			break;
		while (*p && *p != ' ')
			p++;
	}
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	*start = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	return 0;
}

int proc_at_who(int pfd, struct proc_who *who)
{
	char buf[STATUS_MAX];
	int ret = proc_at_read(pfd, "stat", buf, STAT_MAX);

	if (ret || (ret = proc_at_parse_start(buf, &who->start)))
		return ret;
	ret = proc_at_read(pfd, "status", buf, sizeof(buf));
	return ret ? ret : proc_owner_parse_status(buf, &who->uid, &who->gid);
}

bool proc_at_still(int pfd, const struct proc_who *who)
{
	struct proc_who now;

	return !proc_at_who(pfd, &now) && now.start == who->start && now.uid == who->uid;
}

int proc_at_environ(int pfd, struct environ_buf *env, size_t max)
{
	int fd = open_in(pfd, "environ"), ret;

	env->data = NULL;
	env->len = 0;
	if (fd < 0)
		return fd;
	ret = procfs_read_environ_fd(fd, env, max);
	close(fd);
	return ret;
}

int proc_at_slurm_cgroup(int pfd, struct slurm_cgroup *sc, uid_t *v1_owner)
{
	char buf[4096];
	int ret = proc_at_read(pfd, "cgroup", buf, sizeof(buf));

	if (ret || (ret = procfs_parse_slurm_cgroup(buf, sc)) ||
	    (ret = procfs_slurm_cgroup_trusted(NULL, sc)))
		return ret;
	if (proc_owner_parse_slurm_uid(buf, v1_owner))
		*v1_owner = (uid_t)-1;
	return 0;
}
