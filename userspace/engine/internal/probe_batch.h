/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One library file's probes for one mode, gathered and attached as two
 * links (returns, entries): detaching costs a grace period per link.
 */
#ifndef MEMATTR_PROBE_BATCH_H
#define MEMATTR_PROBE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_loader.h"
#include "probes.h"
#include "process.h"

#define PROBES_MAX_PER_FILE	MPI_FN_MAX	/* functions probed in one library */

/* Entry probes of every target, return probes of those that return memory. */
struct probe_batch {
	uint64_t off[2][PROBES_MAX_PER_FILE];
	uint64_t cookie[2][PROBES_MAX_PER_FILE];
	size_t n[2];
	bool mpi;
};

/* tg's entry probe at off, and its return probe when it returns memory; past the room, nothing. */
void probe_batch_add(struct probe_batch *b, const struct probe_target *tg, uint64_t off);
/* The same, unless a probe is at that offset already (aliases: one address, several names). */
void probe_batch_add_once(struct probe_batch *b, const struct probe_target *tg, uint64_t off);

/*
 * Attach the batch in p (the file at path): its links kept in p, the
 * probes counted in pr (attached or failed); p marked probed for the
 * batch's mode when its entries attached.
 */
void probe_batch_attach(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
			const struct probe_batch *b, const char *path);

#endif
