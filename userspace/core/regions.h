/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-process region table: address ranges -> owner component, with the
 * resident bytes each range holds. Ranges never overlap and are kept sorted.
 * Residency comes from smaps at a resync and from kernel RSS deltas in
 * between; the table only does the bookkeeping, not the policy of who owns
 * what.
 */
#ifndef MEMATTR_REGIONS_H
#define MEMATTR_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "components.h"

#define REGION_FILE	0x1	/* file-backed mapping */
#define REGION_SHARED	0x2	/* MAP_SHARED / shared memory */
#define REGION_FROM_EVENT 0x4	/* owner decided by an mmap event, not by /proc */
#define REGION_EXEC	0x8	/* executable code: where return addresses point */

struct region {
	uint64_t start, end;	/* [start, end) */
	int64_t rss;		/* resident bytes, current estimate */
	int64_t pss;		/* PSS bytes at the last smaps read */
	int64_t rss_at_sync;	/* rss at that read, to scale pss between reads */
	comp_id owner;
	uint16_t flags;
	uint16_t mpi_fn;	/* --mpi-calls: the MPI call it was requested in, 0: none */
	uint32_t stack;		/* its allocation stack (the process's alloc_stacks), 0: none */
	uint8_t seen;		/* private: touched since regions_sync_begin */
	uint64_t counted_ns;	/* its rss was read (smaps, pagemap) at this boot time:
				 * older RSS events are in that figure, 0: none */
};

/*
 * r[0..n) lies inside one allocation with head free slots before it and
 * cap - n after it: a change near either end moves only the regions on
 * that side (a process's new mappings are mostly below all others).
 */
struct region_table {
	struct region *r;
	size_t n, cap;		/* cap: slots from r to the allocation's end */
	size_t head;		/* free slots before r */
	size_t max;		/* bound on n; inserts past it merge into neighbours */
};

void regions_init(struct region_table *t, size_t max);
void regions_free(struct region_table *t);
void regions_clear(struct region_table *t);

/* Make dst a copy of src (a forked child's address space is its parent's). */
int regions_copy(struct region_table *dst, const struct region_table *src);

/* Region containing addr, or NULL. */
struct region *regions_find(struct region_table *t, uint64_t addr);

/* The region containing addr, else the first one above it; NULL: none. */
struct region *regions_next(struct region_table *t, uint64_t addr);

/*
 * Map [start, end) to owner, replacing whatever overlapped it (overlapped
 * parts are cut out; their rss, prorated by length, is dropped and returned
 * through *dropped_rss if not NULL). The new range starts with rss 0.
 */
int regions_map(struct region_table *t, uint64_t start, uint64_t end,
		comp_id owner, uint16_t flags, int64_t *dropped_rss);

/* Remove [start, end); returns the rss removed (prorated by length). */
int64_t regions_unmap(struct region_table *t, uint64_t start, uint64_t end);

/*
 * Spread delta bytes over the regions overlapping [start, end) in
 * proportion to the rss each holds inside the range (by length when none
 * holds any). Returns the part that found no region.
 */
int64_t regions_charge_range(struct region_table *t, uint64_t start,
			     uint64_t end, int64_t delta);

/*
 * [start, end) is unmapped (munmap, a heap trim) and delta bytes left with
 * it: regions an edge cuts are split first, so the pages come out of their
 * part inside the range and the part outside keeps what it holds; then the
 * range is removed. Returns the part of delta that found no region.
 */
int64_t regions_unmap_charged(struct region_table *t, uint64_t start, uint64_t end,
			      int64_t delta);

/*
 * Give [start, end) to owner, keeping what it holds (rss, pss): parts of
 * regions outside the range are split off. Holes stay holes. With
 * only_unowned, only anonymous regions owned by nobody change hands.
 */
int regions_set_owner(struct region_table *t, uint64_t start, uint64_t end,
		      comp_id owner, bool only_unowned);

/* Tag every region inside [start, end) as requested in MPI call fn. */
void regions_set_mpi_fn(struct region_table *t, uint64_t start, uint64_t end, uint16_t fn);

/* Give every region inside [start, end) the allocation stack id (0: none). */
void regions_set_stack(struct region_table *t, uint64_t start, uint64_t end, uint32_t id);

/* Set (set=true) or clear flag bits on every region inside [start, end). */
void regions_set_flags(struct region_table *t, uint64_t start, uint64_t end,
		       uint16_t bits, bool set);

/* Move [old, old+old_len) to [new, new+new_len) keeping owner and rss (mremap). */
int regions_move(struct region_table *t, uint64_t old_addr, uint64_t old_len,
		 uint64_t new_addr, uint64_t new_len);

/*
 * Resync one smaps mapping: set rss and pss of the regions inside
 * [start, end) to the kernel's figures, split in proportion to their current
 * rss (by length when none). Parts of the range no region covers become a
 * region owned by owner_if_new.
 */
int regions_sync(struct region_table *t, uint64_t start, uint64_t end,
		 int64_t rss, int64_t pss, comp_id owner_if_new, uint16_t flags);

/*
 * Whether [start, end) (one smaps entry) holds more than one region: the
 * kernel merged adjacent anonymous mappings (a library's block next to the
 * program's, a program's arrays side by side), and its one figure cannot
 * be split by estimate -- a split by the regions' current rss goes wrong
 * whenever the events of a mapping still being filled lag behind the read.
 * Between owners that is at once a wrong component; within one owner it
 * shows when a region is unmapped and takes its wrong figure with it
 * (LULESH: 2-3 MiB lost or kept a rank until the next read).
 */
bool regions_several(const struct region_table *t, uint64_t start, uint64_t end);

/*
 * After regions_sync of [start, end): set each region's rss to what
 * resident() counts in its own range (pages in memory), and pss in
 * proportion; now_ns (taken before counting) becomes each one's counted_ns.
 * -1 (estimates kept) when resident() fails.
 */
int regions_sync_exact(struct region_table *t, uint64_t start, uint64_t end, int64_t pss,
		       int64_t (*resident)(void *ctx, uint64_t start, uint64_t end), void *ctx,
		       uint64_t now_ns);

/* The figures of every region inside [start, end) include what happened before ns. */
void regions_set_counted(struct region_table *t, uint64_t start, uint64_t end, uint64_t ns);

/*
 * Drop regions that no longer exist: those not touched since
 * regions_sync_begin; each is shown to gone(ctx, r) first (gone NULL: not
 * shown).
 */
void regions_sync_begin(struct region_table *t);
void regions_sync_end(struct region_table *t, void (*gone)(void *ctx, const struct region *r),
		      void *ctx);

/* Every region's rss, whoever owns it. */
int64_t regions_rss_total(const struct region_table *t);

/*
 * Add each region's rss and estimated pss into rss[owner] and pss[owner]
 * (arrays of component_count() entries). PSS between smaps reads is scaled
 * from the last read: pss * rss / rss_at_sync, or rss for a new region.
 */
void regions_sum(const struct region_table *t, int64_t *rss, int64_t *pss,
		 size_t ncomp);

/* Add each region's rss into rss[owner] (ncomp entries): no PSS, for a quick before/after. */
void regions_rss_by_owner(const struct region_table *t, int64_t *rss, size_t ncomp);

#endif
