// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "columns.h"
#include "safe_open.h"
#include "spool.h"

#define NAME_MAX_LEN	128
#define OWNER_XATTR	"trusted.memattr_uid"
#define SUFFIX_MAX	1000

void spool_job_name(const char *id, char *out, size_t outlen)
{
	size_t n = 0, cap = outlen - 1 < NAME_MAX_LEN ? outlen - 1 : NAME_MAX_LEN;

	for (; *id && n < cap; id++) {
		char c = *id;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._-+@:=", c)))
			c = '_';
		/* Never hidden, never "." or "..". */
		if (n == 0 && c == '.')
			c = '_';
		out[n++] = c;
	}
	if (!n)
		out[n++] = '_';
	out[n] = '\0';
}

int spool_prepare(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "spool %s: cannot create it: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st)) {
		snprintf(err, errlen, "spool %s: %s", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "spool %s: %s", dir,
			 S_ISLNK(st.st_mode) ? "is a symbolic link: give a real directory" : "is not a directory");
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, errlen, "spool %s: must be root's and writable by root only (it holds every user's figures)", dir);
		return -1;
	}
	return 0;
}

int spool_job_dir(const char *spool, const char *id, uid_t uid, bool trusted, char *out,
		  size_t outlen)
{
	char name[NAME_MAX_LEN + 1], base[NAME_MAX_LEN + 16];
	struct stat st;

	spool_job_name(id, name, sizeof(name));
	/*
	 * An ID only the environment gave is anybody's to claim: under a name
	 * ending in its uid's ".u<U>", one user's claims (and their suffixes)
	 * can never take another user's names, nor a Slurm job's, whose IDs
	 * come from the batch system and are named as they are.
	 */
	if (trusted)
		snprintf(base, sizeof(base), "%s", name);
	else
		snprintf(base, sizeof(base), "%s.u%u", name, (unsigned int)uid);
	for (int i = 0; i < SUFFIX_MAX; i++) {
		int n = i ? snprintf(out, outlen, "%s/%s.%d", spool, base, i)
			  : snprintf(out, outlen, "%s/%s", spool, base);

		if (n < 0 || (size_t)n >= outlen)
			return -ENAMETOOLONG;
		if (lstat(out, &st) && errno == ENOENT)
			return 0;
	}
	return -EEXIST;
}

/* A job directory holds files only: remove them, then it. Nothing is followed. */
static int remove_job_dir(int spoolfd, const char *name)
{
	int fd = openat(spoolfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	return unlinkat(spoolfd, name, AT_REMOVEDIR) ? -errno : 0;
}

/*
 * Whether the job in spoolfd/name had a process the OOM killer chose: its
 * run_info.csv counts them (oom_kills). Read only for directories past
 * --retain, through safe_fopenat (the directory is the job owner's group's).
 */
static bool had_oom_kill(int spoolfd, const char *name)
{
	char path[512], line[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" FILE_RUN_INFO, name);
	f = safe_fopenat(spoolfd, path, 0, 1 << 20);
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, RUN_OOM_KILLS ",", strlen(RUN_OOM_KILLS) + 1) &&
			strtoul(line + strlen(RUN_OOM_KILLS) + 1, NULL, 10) > 0;
	fclose(f);
	return found;
}

int spool_retain(const char *spool, unsigned int days, bool (*in_use)(void *ctx, const char *path),
		 void *ctx)
{
	time_t cutoff = time(NULL) - (time_t)days * 86400;
	time_t oom_cutoff = time(NULL) - (time_t)SPOOL_OOM_KEEP_DAYS * 86400;
	struct dirent *de;
	int fd, removed = 0;
	DIR *d;

	if (!days)
		return 0;
	fd = open(spool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char path[4096];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
		    st.st_mtime >= cutoff)
			continue;
		if (st.st_mtime >= oom_cutoff && had_oom_kill(fd, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", spool, de->d_name);
		if (in_use && in_use(ctx, path))
			continue;
		if (!remove_job_dir(fd, de->d_name))
			removed++;
	}
	closedir(d);
	return removed;
}

int spool_mark_owner(int dirfd, uid_t uid)
{
	char v[16];
	int n = snprintf(v, sizeof(v), "%u", (unsigned int)uid);

	return fsetxattr(dirfd, OWNER_XATTR, v, (size_t)n, 0) ? -errno : 0;
}

int spool_count_owners(const char *spool, void (*fn)(void *ctx, uid_t uid), void *ctx)
{
	struct dirent *de;
	int fd = open(spool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char v[16], *end;
		unsigned long uid;
		ssize_t n;
		int jfd;

		if (de->d_name[0] == '.')
			continue;
		jfd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (jfd < 0)
			continue;
		n = fgetxattr(jfd, OWNER_XATTR, v, sizeof(v) - 1);
		close(jfd);
		if (n <= 0)
			continue;	/* an older daemon's, or not a job's */
		v[n] = '\0';
		uid = strtoul(v, &end, 10);
		if (*end || end == v || uid >= (unsigned long)(uid_t)-1)
			continue;
		fn(ctx, (uid_t)uid);
	}
	closedir(d);
	return 0;
}
