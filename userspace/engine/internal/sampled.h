/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled attribution (--attribution sampled): no program follows the
 * faults, so the regions hold what the last count of the process's pages
 * found, moved since only by its requests and releases. The regions the
 * requests touched are counted at each sample (proc_count_touched); once
 * the rest drifts from the kernel's total by more than a share of it
 * (beyond the gap the counts of all pages agree on: pages in no mapping,
 * the per-CPU slack of the kernel's counter; core/recount_gap.h), all
 * pages are counted again (proc_sync). docs/attribution.md, "Sampled
 * attribution".
 */
#ifndef MEMATTR_SAMPLED_H
#define MEMATTR_SAMPLED_H

struct tracker;
struct session;
struct proc;

/*
 * The step at each sample of p, after its VmRSS read: its touched regions
 * counted, all its pages past the drift bound. Counted in s's recounts.
 */
void sampled_count(struct tracker *t, struct session *s, struct proc *p);

#endif
