/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Close many descriptors at once. Closing a uprobe_multi link waits for a
 * grace period in the kernel (tens of ms); closed one after the other, the
 * links of 8 ranks took over a second to detach. Closed from several
 * threads, the waits overlap.
 */
#ifndef MEMATTR_CLOSE_MANY_H
#define MEMATTR_CLOSE_MANY_H

#include <stddef.h>

void close_many(const int *fds, size_t n);

/* fn(ctx, i) for every i < n, from up to 16 threads at once. */
void parallel_for(size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
