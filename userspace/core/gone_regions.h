/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The regions a process's latest maps reads dropped (their mappings were
 * gone when the read came), kept for the records older than those reads:
 * a record waits in the ring buffer while a read overtakes it (a read cut
 * short by its deadline, the kernel side still writing it), and an unmap
 * it reports has nothing left to look at in the region table. Only who
 * owned the range, and the MPI call that asked for it, are kept: the read
 * already has the pages right; --mpi-calls still needs to know whose
 * release it was (MPI_Free_mem's munmap).
 */
#ifndef MEMATTR_GONE_REGIONS_H
#define MEMATTR_GONE_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "regions.h"

/* Regions kept at most: past it, a read's further drops are not kept. */
#define GONE_REGIONS_MAX	1024

struct gone_region {
	struct region r;	/* as it was before the read dropped it */
	uint64_t read_ns;	/* boot time the dropping read began */
	bool released;		/* the record of the call that unmapped it came */
};

struct gone_regions {
	struct gone_region *g;
	size_t n, cap;
	uint64_t prev_read_ns;	/* the read before the latest: older drops are forgotten */
};

/*
 * A read that began at read_ns is about to drop regions: forget what the
 * reads before the one preceding it dropped (two reads kept: a record
 * overtaken by two reads is still placed).
 */
void gone_regions_read_begins(struct gone_regions *g, uint64_t read_ns);

/* r is dropped by the read that began at read_ns. 0, or -1 (not kept: full or no memory). */
int gone_regions_keep(struct gone_regions *g, const struct region *r, uint64_t read_ns);

/*
 * The region holding addr that the first read after boot time ts dropped:
 * what addr was for a record of time ts. NULL: none kept. The result is
 * good until the next call that changes g.
 */
const struct region *gone_regions_find(const struct gone_regions *g, uint64_t addr, uint64_t ts);

/*
 * The record of a call that released [start, end) (munmap, mremap's old
 * range, a brk trim, shmdt) came: the kept regions in it are released.
 */
void gone_regions_release(struct gone_regions *g, uint64_t start, uint64_t end);

/*
 * The pages of the regions the read that began at read_ns dropped and no
 * released record accounts for yet, added to rss[owner] (rss: NULL, or
 * ncomp entries; an owner past them counts as unattributed). Returns
 * their sum.
 */
int64_t gone_regions_unreleased(const struct gone_regions *g, uint64_t read_ns, int64_t *rss,
				size_t ncomp);

void gone_regions_free(struct gone_regions *g);

#endif
