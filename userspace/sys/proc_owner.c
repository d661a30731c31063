// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A process's owner from the kernel's records (see proc_owner.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_owner.h"
#include "procfs.h"

/* A decimal id below (uid_t)-1, ending at *end; false for anything else. */
static bool parse_id(const char *s, const char **end, unsigned long *v)
{
	char *e;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoul(s, &e, 10);
	if (errno || *v >= (unsigned long)(uid_t)-1)
		return false;
	*end = e;
	return true;
}

/* "Name:\t<real>\t<effective>..." at the start of a line: the real id. */
static bool field(const char *text, const char *name, unsigned long *v)
{
	size_t n = strlen(name);
	const char *end;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, name, n))
			continue;
		l += n;
		while (*l == ' ' || *l == '\t')
			l++;
		return parse_id(l, &end, v) && (*end == '\t' || *end == ' ' || *end == '\n' || !*end);
	}
	return false;
}

int proc_owner_parse_status(const char *text, uid_t *uid, gid_t *gid)
{
	unsigned long u, g;

	if (!field(text, "Uid:", &u) || !field(text, "Gid:", &g))
		return -EINVAL;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

/* /proc/PID/<name> into buf, NUL-terminated (cut at size-1). */
static int read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = 0;
	size_t got = 0;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%d/%s", procfs_root(), (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += (size_t)n;
	err = n < 0 ? -errno : 0;
	close(fd);
	buf[got] = '\0';
	return err;
}

int proc_owner_read(pid_t pid, uid_t *uid, gid_t *gid)
{
	char buf[4096];
	int ret = read_proc(pid, "status", buf, sizeof(buf));

	return ret ? ret : proc_owner_parse_status(buf, uid, gid);
}

/* One path: "/slurm_<node>/uid_<U>/job_<J>/..." -> U. */
static bool path_uid(const char *path, const char *eol, unsigned long *v)
{
	const char *slurm = NULL, *p, *end;

	for (p = path; p < eol; p++)
		if (*p == '/' && !strncmp(p + 1, "slurm", 5)) {
			slurm = p;
			break;
		}
	if (!slurm)
		return false;
	for (p = slurm; p && p < eol; p = memchr(p + 1, '/', (size_t)(eol - p - 1))) {
		if (strncmp(p, "/uid_", 5) || !parse_id(p + 5, &end, v))
			continue;
		if (end < eol && !strncmp(end, "/job_", 5))
			return true;
	}
	return false;
}

int proc_owner_parse_slurm_uid(const char *text, uid_t *uid)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *eol = strchr(l, '\n');
		unsigned long v;

		if (!eol)
			eol = l + strlen(l);
		if (!c2 || c2 > eol)
			continue;
		if (path_uid(c2 + 1, eol, &v)) {
			*uid = (uid_t)v;
			return 0;
		}
	}
	return -ENOENT;
}

int proc_owner_read_slurm_uid(pid_t pid, uid_t *uid)
{
	char buf[4096];
	int ret = read_proc(pid, "cgroup", buf, sizeof(buf));

	return ret ? ret : proc_owner_parse_slurm_uid(buf, uid);
}
