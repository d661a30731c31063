// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Safe opening of files that may have been planted: see safe_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "safe_open.h"

/* What is wrong with the file, as an errno; 0 if it may be read. */
static int vet(const struct stat *st, unsigned int flags, uint64_t max_size)
{
	if (S_ISDIR(st->st_mode))
		return EISDIR;
	if (!S_ISREG(st->st_mode))
		return EINVAL;
	if (!(flags & SAFE_ANY_NLINK) && st->st_nlink != 1)
		return EMLINK;
	if (st->st_size < 0 || (uint64_t)st->st_size > max_size)
		return EFBIG;
	return 0;
}

int safe_openat(int dirfd, const char *path, unsigned int flags, uint64_t max_size,
		struct stat *st)
{
	int oflags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat sb;
	int fd, err, fl;

	if (!(flags & SAFE_FOLLOW))
		oflags |= O_NOFOLLOW;
	/*
	 * Look before opening: opening a device can act (/dev/watchdog arms
	 * the watchdog, a tape rewinds). What is opened is checked again
	 * below, as the name may be swapped in between.
	 */
	if (fstatat(dirfd, path, &sb, flags & SAFE_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW))
		return -1;
	err = S_ISLNK(sb.st_mode) ? ELOOP : vet(&sb, flags, max_size);
	if (err) {
		errno = err;
		return -1;
	}
	fd = openat(dirfd, path, oflags);
	if (fd < 0)
		return -1;	/* O_NOFOLLOW on a symlink: ELOOP already */
	if (fstat(fd, &sb)) {
		err = errno;
		goto fail;
	}
	err = vet(&sb, flags, max_size);
	if (err)
		goto fail;
	/* A regular file: reads would not block anyway, but stdio should see a plain fd. */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		err = errno;
		goto fail;
	}
	if (st)
		*st = sb;
	return fd;
fail:
	close(fd);
	errno = err;
	return -1;
}

FILE *safe_fopenat(int dirfd, const char *path, unsigned int flags, uint64_t max_size)
{
	int fd = safe_openat(dirfd, path, flags, max_size, NULL), saved;
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "re");
	if (!f) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return f;
}

const char *safe_open_strerror(int err)
{
	switch (err) {
	case ELOOP:
		return "is a symlink";
	case EINVAL:
		return "not a regular file";
	case EMLINK:
		return "has other hard links";
	case EFBIG:
		return "file too large";
	default:
		return strerror(err);
	}
}
