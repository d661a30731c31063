/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled attribution's drift rule (engine sampled.c; docs/attribution.md,
 * "Sampled attribution"): the regions' sum against the kernel's total
 * (VmRSS), and the gap a count of all pages leaves between the two (pages
 * in no mapping, the per-CPU slack of the kernel's counter on kernels
 * whose VmRSS is not summed exactly). Pure arithmetic, in bytes.
 */
#ifndef MEMATTR_RECOUNT_GAP_H
#define MEMATTR_RECOUNT_GAP_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The new gap after a count of all pages, VmRSS read right before it
 * (gap_before: that VmRSS less the regions counted) and right after it
 * (gap_after). base: the gap of the last count.
 */
int64_t recount_gap_after(int64_t base, int64_t gap_before, int64_t gap_after);

/* Has drift (VmRSS less the regions) moved past the bound from gap, at this total? */
bool recount_drifted(int64_t total, int64_t drift, int64_t gap);

/*
 * Did VmRSS move past the same bound during a count of all pages (read
 * before it: before, after it: after)? Then the pages faulted in the
 * mappings read early are in no region: they are counted again.
 */
bool recount_moved(int64_t before, int64_t after);

#endif
