/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * After records of a process were lost (a full ring buffer), the regions
 * its requests made may no longer be what their records say: an unmap
 * nobody saw, and a request of another owner placed in the hole, leave the
 * old owner's region over the new owner's pages. The next read of its
 * mappings checks each owned anonymous region: one that the read had to
 * cut (part of it is no longer mapped) was changed unseen, and what is left
 * of it goes to `unattributed` -- whose it is now is not known. A region
 * the read finds whole keeps its owner. docs/attribution.md, "Sampled
 * attribution".
 */
#ifndef MEMATTR_LOST_RECORDS_H
#define MEMATTR_LOST_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc;

struct lost_check {
	struct lost_span { uint64_t start, end; } *v;	/* owned anonymous regions before the read */
	size_t n;
};

/* Before a read of p's mappings: the regions to check, if p->records_lost. */
void lost_records_begin(struct lost_check *c, const struct proc *p);

/*
 * After it (ok: the read completed): regions cut by the read become
 * unattributed, and p->records_lost is cleared. Returns how many.
 */
size_t lost_records_end(struct lost_check *c, struct proc *p, bool ok);

#endif
