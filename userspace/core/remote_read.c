// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <sys/uio.h>

#include "remote_read.h"

int remote_read_many(pid_t pid, const uint64_t *addrs, size_t n, size_t len, uint8_t *out)
{
	struct iovec local[REMOTE_READ_MAX], remote[REMOTE_READ_MAX];
	ssize_t got;

	if (n > REMOTE_READ_MAX)
		n = REMOTE_READ_MAX;
	if (!n || !len)
		return 0;
	for (size_t i = 0; i < n; i++) {
		local[i] = (struct iovec){ .iov_base = out + i * len, .iov_len = len };
		remote[i] = (struct iovec){ .iov_base = (void *)(uintptr_t)addrs[i], .iov_len = len };
	}
	got = process_vm_readv(pid, local, n, remote, n, 0);
	/* The first entry unreadable: nothing read, which is no failure of the call. */
	if (got < 0)
		return errno == EFAULT ? 0 : -errno;
	/*
	 * The kernel stops at the first remote element it cannot read; an
	 * element read in part (its first page readable, the next not) is
	 * not whole, and counts as unread.
	 */
	return (int)((size_t)got / len);
}
