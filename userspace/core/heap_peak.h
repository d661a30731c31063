/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The heap call sites live when a process's total peaked (--heap, issue
 * 35; as LLNL's memP reports them): at each sample that is a new peak of
 * the total, the kernel's per-site counts are copied here (the engine
 * walks its table), replacing the copy of the peak before, so what is
 * written at the end is the sites at the peak the rank files show.
 *
 * Bounded as the sites are: only sites holding memory then are kept, at
 * most HEAP_PEAK_MAX_SITES (the kernel's site table, bpf/memattr.bpf.c
 * heap_sites, holds no more for the whole node), and the buffer is reused
 * from one peak to the next.
 */
#ifndef MEMATTR_HEAP_PEAK_H
#define MEMATTR_HEAP_PEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memattr.h"

#define HEAP_PEAK_MAX_SITES	65536	/* the kernel's heap_sites table's entries */

/* A malloc-family call site's figures (--heap), as the kernel counted them. */
struct heap_site {
	uint64_t addr;
	struct site_stats stats;
};

struct heap_peak {
	struct heap_site *sites;	/* live at the last peak taken */
	size_t n, cap;
	bool due;			/* the last sample was a new peak: take the sites */
	uint64_t dropped;		/* live sites left out: past the cap, or out of memory */
};

/* A new peak's copy begins: the previous one is dropped (its buffer kept). */
void heap_peak_begin(struct heap_peak *hp);

/*
 * Site addr with its counts now, into the copy begun: 1 kept, 0 not
 * (nothing live there, or past the bound: counted in dropped).
 */
int heap_peak_add(struct heap_peak *hp, uint64_t addr, const struct site_stats *st);

/* The live blocks of a site: calls not freed yet. */
static inline uint64_t heap_site_live_blocks(const struct site_stats *st)
{
	return st->calls > st->frees ? st->calls - st->frees : 0;
}

/* No peak taken (a new image: its sites are the kernel's anew). */
void heap_peak_reset(struct heap_peak *hp);
void heap_peak_free(struct heap_peak *hp);

#endif
