// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a node's files for merge: line by line, with the line number for
 * messages, never through a symlink, a FIFO or a device (merge may run as
 * root over directories users own), gzip'ed timelines inflated.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gz_read.h"
#include "merge.h"
#include "safe_open.h"

int mg_next_line(struct mg_reader *rd)
{
	ssize_t len;

	errno = 0;
	len = getline(&rd->line, &rd->cap, rd->f);
	if (len < 0)
		return errno ? -1 : 0;
	if (rd->line[len - 1] != '\n') {
		rd->partial = true;	/* still being written: not a row yet */
		return 0;
	}
	rd->lineno++;
	rd->line[--len] = '\0';
	if (len && rd->line[len - 1] == '\r')
		rd->line[--len] = '\0';
	if (memchr(rd->line, '\0', (size_t)len)) {
		errno = EILSEQ;
		return -1;
	}
	return 1;
}

void mg_err(char *err, size_t errlen, const struct mg_reader *rd, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (rd->lineno)
		n = snprintf(err, errlen, "%s/%s:%zu: ", rd->dir, rd->name, rd->lineno);
	else
		n = snprintf(err, errlen, "%s/%s: ", rd->dir, rd->name);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

FILE *mg_open(int dirfd, const char *name)
{
	size_t len = strlen(name);
	FILE *f;

	/* As root, no hard link either: a link to a root-only file would be copied out. */
	f = safe_fopenat(dirfd, name, geteuid() == 0 ? 0 : SAFE_ANY_NLINK, MG_MAX_FILE);
	if (f && len > 3 && !strcmp(name + len - 3, ".gz"))
		f = gz_open_read(f, MG_MAX_FILE);
	return f;
}

int mg_parse_i64(const char *s, long long min, long long *out)
{
	char *end;
	long long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

/* A plain, finite, non-negative decimal. */
int mg_parse_double(const char *s, double *out)
{
	char *end;

	if (!*s || !strchr("0123456789.", *s))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (errno || *end || !isfinite(*out) || *out < 0)
		return -1;
	return 0;
}
