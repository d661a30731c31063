/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A record of a process applied to its figures (core/process.c): a fault,
 * a run of faults, a memory request; as it came, or held until the end of
 * the drain (held_records.h).
 */
#ifndef MEMATTR_APPLY_H
#define MEMATTR_APPLY_H

#include <stddef.h>

struct tracker;
struct session;
struct proc;

/* data (size bytes, a record of bpf/memattr.h) of p, applied; a record too short is ignored. */
void apply_record(struct tracker *t, struct session *s, struct proc *p, const void *data,
		  size_t size);

#endif
