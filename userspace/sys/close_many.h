/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Close many descriptors at once. Closing a uprobe_multi link, or the
 * perf event of a syscall tracepoint, waits for a grace period in the
 * kernel; closed one after the other, a job's links and the syscall
 * tracepoints add their waits up (docs/benchmark-history.md, "Figures
 * once in code comments"). Closed from several threads, the waits
 * overlap.
 */
#ifndef MEMATTR_CLOSE_MANY_H
#define MEMATTR_CLOSE_MANY_H

#include <stddef.h>

void close_many(const int *fds, size_t n);

/*
 * The kernel detaches each syscall tracepoint's program under one lock,
 * waiting a grace period each, one after the other: threads cannot
 * overlap them. Called before the BPF object's descriptors
 * are closed, this forks a child that holds them (and nothing else) until
 * this process has exited: its closes are then instant, the run ends at
 * once, and the kernel finishes the detach in the background.
 */
void detach_after_exit(void);

/* fn(ctx, i) for every i < n, from up to 16 threads at once. */
void parallel_for(size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
