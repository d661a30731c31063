// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a node's files for merge: never through a symlink, a FIFO or a
 * device (merge may run as root over directories users own), gzip'ed
 * timelines inflated; errors named by file and line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gz_read.h"
#include "merge.h"
#include "safe_open.h"

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
