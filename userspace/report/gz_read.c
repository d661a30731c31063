// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "gz_read.h"

struct gz_in {
	gzFile gz;
	uint64_t left;		/* bytes it may still inflate to */
	uint64_t max;		/* what it started with */
};

static ssize_t gz_read_cookie(void *cookie, char *buf, size_t n)
{
	struct gz_in *in = cookie;
	int got, err;

	if (!in->left) {
		errno = EFBIG;
		return -1;
	}
	if (n > in->left)
		n = (size_t)in->left;
	if (n > (1u << 30))
		n = 1u << 30;
	got = gzread(in->gz, buf, (unsigned int)n);
	/*
	 * At the end of what is written so far zlib stops reading the file:
	 * clear that, so a reader that clearerr()s its stream later reads
	 * what was written since (a follower of the spool: `tail -f`).
	 */
	if (got == 0)
		gzclearerr(in->gz);
	if (got >= 0) {
		in->left -= (uint64_t)got;
		return got;
	}
	gzerror(in->gz, &err);
	/* The input ended inside the stream: a file still being written. */
	if (err == Z_BUF_ERROR) {
		gzclearerr(in->gz);
		return 0;
	}
	errno = EIO;
	return -1;
}

/* Back to the start only (a reader's second pass): the stream is inflated again. */
static int gz_seek_cookie(void *cookie, off64_t *off, int whence)
{
	struct gz_in *in = cookie;

	if (whence != SEEK_SET || *off != 0) {
		errno = ESPIPE;
		return -1;
	}
	if (gzrewind(in->gz)) {
		errno = EIO;
		return -1;
	}
	in->left = in->max;
	return 0;
}

static int gz_close_cookie(void *cookie)
{
	struct gz_in *in = cookie;
	int ret = gzclose_r(in->gz) == Z_OK ? 0 : EOF;

	free(in);
	return ret;
}

FILE *gz_open_read(FILE *plain, uint64_t max_bytes)
{
	cookie_io_functions_t io = { .read = gz_read_cookie, .seek = gz_seek_cookie,
				   .close = gz_close_cookie };
	struct gz_in *in = calloc(1, sizeof(*in));
	int fd = dup(fileno(plain));
	FILE *f;

	fclose(plain);
	if (!in || fd < 0)
		goto fail;
	in->left = in->max = max_bytes;
	in->gz = gzdopen(fd, "rb");
	if (!in->gz)
		goto fail;
	fd = -1;
	f = fopencookie(in, "r", io);
	if (f)
		return f;
	gzclose_r(in->gz);
fail:
	if (fd >= 0)
		close(fd);
	free(in);
	errno = errno ? errno : ENOMEM;
	return NULL;
}
