/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Many small reads of another process's memory in one system call:
 * libc's patched entry points are read again after every code mapping,
 * and one read each was one system call each.
 */
#ifndef MEMATTR_REMOTE_READ_H
#define MEMATTR_REMOTE_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REMOTE_READ_MAX	128	/* addresses one call reads, at most */

/*
 * len bytes at each of addrs[0..n) of process pid into out[i * len ...].
 * Returns how many leading entries were read whole (0..n; n is cut to
 * REMOTE_READ_MAX): an entry that cannot be read stops the read there, and
 * the caller reads that entry and the rest one by one if it wants them.
 * -errno when the call itself failed (no such process, no permission).
 */
int remote_read_many(pid_t pid, const uint64_t *addrs, size_t n, size_t len, uint8_t *out);

#endif
