// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "gz_file.h"

#define GZ_BUF		(64 << 10)	/* a sample's rows fit: one sync flush per sample */

/* The write's own reason (ENOSPC) when zlib failed writing, else EIO. */
static void set_errno(gzFile gz)
{
	int zerr = Z_OK, saved = errno;

	gzerror(gz, &zerr);
	errno = zerr == Z_ERRNO && saved ? saved : EIO;
}

static ssize_t gz_write_cookie(void *cookie, const char *buf, size_t n)
{
	gzFile gz = cookie;

	errno = 0;
	if (n && gzwrite(gz, buf, (unsigned int)n) != (int)n) {
		set_errno(gz);
		return -1;
	}
	/* Whole deflate blocks on disk: readable now, and after a crash. */
	if (gzflush(gz, Z_SYNC_FLUSH) != Z_OK) {
		set_errno(gz);
		return -1;
	}
	return (ssize_t)n;
}

static int gz_close_cookie(void *cookie)
{
	int ret;

	errno = 0;
	ret = gzclose(cookie);
	if (ret == Z_OK)
		return 0;
	errno = ret == Z_ERRNO && errno ? errno : EIO;
	return EOF;
}

FILE *gz_wrap(FILE *plain)
{
	cookie_io_functions_t io = { .write = gz_write_cookie, .close = gz_close_cookie };
	int fd = dup(fileno(plain));
	gzFile gz;
	FILE *f;

	fclose(plain);
	if (fd < 0)
		return NULL;
	gz = gzdopen(fd, "wb6");
	if (!gz) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	f = fopencookie(gz, "w", io);
	if (!f) {
		gzclose(gz);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, GZ_BUF);
	return f;
}
