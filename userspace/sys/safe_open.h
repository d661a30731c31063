/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening a file that someone else may have planted, for reading as root.
 *
 * A spec named with --spec, a run's CSVs handed to `report`, an ELF file a
 * process maps: the path may sit in a directory another user owns. By
 * default only a regular file is accepted, not through a symlink in the last
 * component, with one link (a hard link to /etc/shadow named run_info.csv
 * would otherwise be read, and shown, with root's rights), and no larger
 * than a cap (a sparse file or a file that never ends). Nothing but a
 * regular file is even opened (opening some devices acts), the open never
 * blocks (a FIFO swapped in would stall the tool forever), and the
 * descriptor is made blocking again once it is known to be a regular file.
 */
#ifndef MEMATTR_SAFE_OPEN_H
#define MEMATTR_SAFE_OPEN_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* Relax the defaults, for callers that must (see safe_openat). */
#define SAFE_FOLLOW	0x1	/* the last component may be a symlink */
#define SAFE_ANY_NLINK	0x2	/* hard links are fine */

/*
 * Open dirfd/path (AT_FDCWD for a plain path) read-only, close-on-exec.
 * Returns the descriptor, or -1 with errno: ELOOP a symlink, EISDIR a
 * directory, EINVAL another kind of non-regular file (FIFO, device,
 * socket), EMLINK more than one link, EFBIG larger than max_size bytes.
 * st, if not NULL, receives the file's stat.
 */
int safe_openat(int dirfd, const char *path, unsigned int flags, uint64_t max_size,
		struct stat *st);

/* The same, as a stdio stream ("re"). */
FILE *safe_fopenat(int dirfd, const char *path, unsigned int flags, uint64_t max_size);

/* Why safe_openat failed, in words: "is a symlink", "has other hard links", strerror() else. */
const char *safe_open_strerror(int err);

#endif
