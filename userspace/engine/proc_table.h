/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live processes of a session: found by pid in O(1) (a chained hash
 * that grows with them), walked in the order they were added (so files and
 * rows come out in a stable order). Only live processes are here: one that
 * ends is retired to the sinks and removed, so the table follows what is
 * alive, not what was ever seen.
 */
#ifndef MEMATTR_PROC_TABLE_H
#define MEMATTR_PROC_TABLE_H

#include <stddef.h>
#include <sys/types.h>

#include "process.h"

struct proc_table {
	struct proc **buckets;
	size_t nbuckets;		/* a power of two */
	size_t n;
	struct proc *first, *last;	/* in order of addition */
};

void proc_table_init(struct proc_table *t);
/* Frees the table, not the processes. */
void proc_table_free(struct proc_table *t);

struct proc *proc_table_find(const struct proc_table *t, pid_t pid);

/* Add p (its pid must not be in the table). 0 or -ENOMEM. */
int proc_table_add(struct proc_table *t, struct proc *p);
void proc_table_remove(struct proc_table *t, struct proc *p);

/* Walk in order of addition; p may be removed inside the loop. */
#define proc_table_for_each(t, p, tmp) \
	for ((p) = (t)->first; (p) && ((tmp) = (p)->next, 1); (p) = (tmp))

#endif
