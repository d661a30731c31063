// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "gz_file.h"

#define GZ_BUF		(64 << 10)	/* a sample's rows fit: one sync flush per sample */

struct gz_cookie {
	gzFile gz;
	int fd;			/* the descriptor zlib writes through */
	off_t whole;		/* end of the last sync flush: whole rows up to here */
	bool dead;		/* a write failed: cut back to whole, nothing more goes out */
};

/* The write's own reason (ENOSPC) when zlib failed writing, else EIO. */
static void set_errno(gzFile gz)
{
	int zerr = Z_OK, saved = errno;

	gzerror(gz, &zerr);
	errno = zerr == Z_ERRNO && saved ? saved : EIO;
}

/*
 * A write failed (a full disk): the file is cut back to the end of the last
 * sync flush, so it ends in whole rows, and the descriptor zlib holds now
 * points at /dev/null: the stream's state is lost, and what zlib still
 * writes (the rest of a block, the trailer at close) must not land cut.
 */
static void kill_stream(struct gz_cookie *c)
{
	int saved = errno, nul;

	c->dead = true;
	if (ftruncate(c->fd, c->whole)) {
		/* Nothing better to do: the error is reported by the caller. */
	}
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (nul >= 0) {
		dup3(nul, c->fd, O_CLOEXEC);
		close(nul);
	}
	errno = saved;
}

static ssize_t gz_write_cookie(void *cookie, const char *buf, size_t n)
{
	struct gz_cookie *c = cookie;
	off_t at;

	if (c->dead) {
		errno = EIO;
		return -1;
	}
	errno = 0;
	if (n && gzwrite(c->gz, buf, (unsigned int)n) != (int)n)
		goto fail;
	/* Whole deflate blocks on disk: readable now, and after a crash. */
	if (gzflush(c->gz, Z_SYNC_FLUSH) != Z_OK)
		goto fail;
	at = lseek(c->fd, 0, SEEK_CUR);
	if (at >= 0)
		c->whole = at;
	return (ssize_t)n;
fail:
	set_errno(c->gz);
	kill_stream(c);
	return -1;
}

static int gz_close_cookie(void *cookie)
{
	struct gz_cookie *c = cookie;
	bool dead = c->dead;
	int ret;

	errno = 0;
	ret = gzclose(c->gz);
	free(c);
	if (dead) {
		errno = EIO;	/* said when it died */
		return EOF;
	}
	if (ret == Z_OK)
		return 0;
	errno = ret == Z_ERRNO && errno ? errno : EIO;
	return EOF;
}

FILE *gz_wrap(FILE *plain)
{
	cookie_io_functions_t io = { .write = gz_write_cookie, .close = gz_close_cookie };
	int fd = dup(fileno(plain));
	struct gz_cookie *c;
	FILE *f;

	fclose(plain);
	if (fd < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	c->fd = fd;
	c->gz = gzdopen(fd, "wb6");
	if (!c->gz) {
		close(fd);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	f = fopencookie(c, "w", io);
	if (!f) {
		gzclose(c->gz);
		free(c);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, GZ_BUF);
	return f;
}
