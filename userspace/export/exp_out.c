// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Output files whole or not at all: a temporary file beside the target,
 * renamed over it once written and flushed, removed on any failure. A
 * reader of the target (a CI job, a viewer reloading it) never sees half
 * a profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "export.h"

int ex_output(const char *path, int (*write)(FILE *f, void *arg, char *err, size_t errlen),
	      void *arg, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, bad;

	if (!path || !strcmp(path, "-")) {
		if (write(stdout, arg, err, errlen))
			return -1;
		if (fflush(stdout) || ferror(stdout)) {
			snprintf(err, errlen, "standard output: %s", strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%.64s...: path too long", path);
		return -1;
	}
	/* O_EXCL and O_NOFOLLOW: a link planted at the temporary name is not followed. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	bad = write(f, arg, err, errlen);
	if (!bad && (fflush(f) || ferror(f) || fsync(fileno(f)))) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno ? errno : EIO));
		bad = -1;
	}
	if (fclose(f) && !bad) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		bad = -1;
	}
	if (!bad && rename(tmp, path)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		bad = -1;
	}
	if (bad)
		unlink(tmp);
	return bad ? -1 : 0;
}
