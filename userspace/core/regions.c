// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region table: a sorted array of non-overlapping [start, end) ranges.
 *
 * regions_find runs once per page-fault event, so it is a binary search over
 * a flat array with no allocation. Everything that changes the table (mmap,
 * munmap, mremap, brk, a resync) is rare by comparison and may shift the
 * tail of the array.
 *
 * Where a range is cut, its rss, pss and rss_at_sync are prorated by length.
 * Where an amount is spread over several regions, the shares are taken from
 * cumulative weights so they add up to the amount exactly: no byte is lost
 * to rounding, which keeps the components summing to the kernel's total.
 *
 * The bound t->max (0: none): an operation that leaves more than max regions
 * first merges touching neighbours of the same owner and flags anywhere in
 * the table (nothing lost but granularity). If none are left, the first
 * region in the range the operation changed is merged with a neighbour (one
 * it touches if any, the lower first); the merged region keeps the owner and
 * flags of the side holding more rss (on a tie, the side that was there
 * before), and may then span a hole. So a new mapping past the bound, which
 * holds nothing yet, is folded into the region next to it instead of
 * failing, and an unmap that would split a region leaves it whole, less
 * the unmapped part's rss.
 *
 * Pointers returned by regions_find are invalidated by any call that
 * changes the table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "regions.h"

typedef unsigned __int128 u128;

/* Above max, the array keeps this much room rather than doubling. */
#define REGIONS_SLACK	8

static int64_t prorate(int64_t v, uint64_t part, uint64_t whole)
{
	if (!whole)
		return 0;
	if (v < 0)
		return -(int64_t)((u128)(-(v + 1) + (uint64_t)1) * part / whole);
	return (int64_t)((u128)v * part / whole);
}

/*
 * The part of total that falls to cumulative weights [c0, c1) out of w.
 * Summed over consecutive slices it gives total exactly.
 */
static int64_t share(int64_t total, u128 c0, u128 c1, u128 w)
{
	u128 mag = total < 0 ? (u128)(-(total + 1)) + 1 : (u128)total;
	u128 s = mag * c1 / w - mag * c0 / w;

	return total < 0 ? -(int64_t)s : (int64_t)s;
}

static uint64_t len_of(const struct region *r)
{
	return r->end - r->start;
}

/* Index of the first region ending above addr; t->n when none. */
static size_t first_above(const struct region_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static size_t free_slots(const struct region_table *t)
{
	return t->head + t->cap - t->n;
}

static int ensure_room(struct region_table *t, size_t k)
{
	size_t alloc = t->head + t->cap, want;
	struct region *mem;

	if (free_slots(t) >= k)
		return 0;
	want = alloc ? alloc * 2 : 16;
	/* Past the bound the excess is transient: do not double a big table for it. */
	if (t->max && want > t->max + REGIONS_SLACK && t->n + k <= t->max + REGIONS_SLACK)
		want = t->max + REGIONS_SLACK;
	if (want < t->n + k)
		want = t->n + k;
	mem = realloc(t->r ? t->r - t->head : NULL, want * sizeof(*mem));
	if (!mem)
		return -1;
	t->r = mem + t->head;
	t->cap = want - t->head;
	return 0;
}

/* Every free slot after the regions. */
static void free_slots_to_tail(struct region_table *t)
{
	if (!t->head)
		return;
	memmove(t->r - t->head, t->r, t->n * sizeof(*t->r));
	t->r -= t->head;
	t->cap += t->head;
	t->head = 0;
}

/*
 * Make cnt slots free at index i (the regions from i on move up by cnt),
 * moving the regions on the side of i that has fewer and has room; n
 * grows by cnt. The caller made room (free_slots).
 */
static void open_slots(struct region_table *t, size_t i, size_t cnt)
{
	if (!cnt)
		return;
	/* The lower side is the cheaper one, with no room: half the free slots go before r. */
	if (i <= t->n - i && t->head < cnt && t->cap - t->n >= 2 * cnt) {
		size_t shift = (t->cap - t->n) / 2;

		memmove(t->r + shift, t->r, t->n * sizeof(*t->r));
		t->r += shift;
		t->head += shift;
		t->cap -= shift;
	}
	if (t->head >= cnt && (i <= t->n - i || t->cap - t->n < cnt)) {
		memmove(t->r - cnt, t->r, i * sizeof(*t->r));
		t->r -= cnt;
		t->head -= cnt;
		t->cap += cnt;
	} else {
		/* Free slots on both sides, each too few: all go to the tail. */
		if (t->cap - t->n < cnt)
			free_slots_to_tail(t);
		memmove(&t->r[i + cnt], &t->r[i], (t->n - i) * sizeof(*t->r));
	}
	t->n += cnt;
}

/* Insert cnt regions at index i; the caller made room. */
static void insert_at(struct region_table *t, size_t i, const struct region *src, size_t cnt)
{
	open_slots(t, i, cnt);
	memcpy(&t->r[i], src, cnt * sizeof(*src));
}

/* Remove r[lo..hi), moving the regions on the side that has fewer. */
static void remove_span(struct region_table *t, size_t lo, size_t hi)
{
	size_t cnt = hi - lo;

	if (!cnt)
		return;
	if (lo < t->n - hi) {
		memmove(t->r + cnt, t->r, lo * sizeof(*t->r));
		t->r += cnt;
		t->head += cnt;
		t->cap -= cnt;
	} else {
		memmove(&t->r[lo], &t->r[hi], (t->n - hi) * sizeof(*t->r));
	}
	t->n -= cnt;
}

static struct region new_region(uint64_t start, uint64_t end, comp_id owner, uint16_t flags)
{
	return (struct region){ .start = start, .end = end, .owner = owner,
				.flags = flags, .seen = 1 };
}

/* The part of r that lies in [from, to), its figures prorated by length. */
static struct region part_of(const struct region *r, uint64_t from, uint64_t to)
{
	struct region p = *r;
	uint64_t len = len_of(r);

	p.start = from;
	p.end = to;
	p.rss = prorate(r->rss, to - from, len);
	p.pss = prorate(r->pss, to - from, len);
	p.rss_at_sync = prorate(r->rss_at_sync, to - from, len);
	return p;
}

static void add_figures(struct region *acc, const struct region *r)
{
	acc->rss += r->rss;
	acc->pss += r->pss;
	acc->rss_at_sync += r->rss_at_sync;
}

static void sub_figures(struct region *acc, const struct region *r)
{
	acc->rss -= r->rss;
	acc->pss -= r->pss;
	acc->rss_at_sync -= r->rss_at_sync;
}

/* Make addr a region boundary if it falls inside one. Needs one free slot. */
static void split_at(struct region_table *t, uint64_t addr)
{
	size_t i = first_above(t, addr);
	struct region *r, upper;

	if (i >= t->n || t->r[i].start >= addr)
		return;
	r = &t->r[i];
	upper = part_of(r, addr, r->end);
	sub_figures(r, &upper);
	r->end = addr;
	insert_at(t, i + 1, &upper, 1);
}

/*
 * Remove [start, end), trimming regions that straddle an edge; the figures
 * of what goes are added into *gone. A hole strictly inside one region needs
 * a free slot to split it; without one (allocation failed) that region stays
 * whole, less the prorated figures, rather than the unmap being lost.
 */
static void cut(struct region_table *t, uint64_t start, uint64_t end, struct region *gone)
{
	size_t i = first_above(t, start), j;
	struct region *r, p;

	if (i < t->n && t->r[i].start < start && t->r[i].end > end) {
		if (!free_slots(t)) {
			r = &t->r[i];
			p = part_of(r, start, end);
			sub_figures(r, &p);
			add_figures(gone, &p);
			return;
		}
		split_at(t, end);
	}
	if (i < t->n && t->r[i].start < start) {
		r = &t->r[i];
		p = part_of(r, start, r->end);
		sub_figures(r, &p);
		add_figures(gone, &p);
		r->end = start;
		i++;
	}
	for (j = i; j < t->n && t->r[j].end <= end; j++)
		add_figures(gone, &t->r[j]);
	if (j < t->n && t->r[j].start < end) {
		r = &t->r[j];
		p = part_of(r, r->start, end);
		sub_figures(r, &p);
		add_figures(gone, &p);
		r->start = end;
	}
	remove_span(t, i, j);
}

static int64_t pss_estimate(const struct region *r)
{
	if (r->rss_at_sync <= 0)
		return r->rss;
	return (int64_t)((__int128)r->pss * r->rss / r->rss_at_sync);
}

/*
 * Merge r[a] and r[a+1]; the owner and flags of r[a] (keep_lower) or r[a+1]
 * survive. PSS is folded as current estimates so the sum does not jump.
 */
static void merge_pair(struct region_table *t, size_t a, bool keep_lower)
{
	struct region *x = &t->r[a], *y = &t->r[a + 1];
	struct region m = keep_lower ? *x : *y;

	m.start = x->start;
	m.end = y->end;
	m.rss = x->rss + y->rss;
	m.pss = pss_estimate(x) + pss_estimate(y);
	m.rss_at_sync = m.rss;
	m.seen = x->seen | y->seen;
	*x = m;
	remove_span(t, a + 1, a + 2);
}

static bool same_kind(const struct region *x, const struct region *y)
{
	return x->end == y->start && x->owner == y->owner && x->flags == y->flags &&
	       x->mpi_fn == y->mpi_fn && x->stack == y->stack;
}

/* Which of r[a], r[a+1] keeps its owner: the one holding more, see the top of the file. */
static bool lower_survives(const struct region *x, const struct region *y,
		       uint64_t start, uint64_t end)
{
	bool x_new = x->start >= start && x->start < end;
	bool y_new = y->start >= start && y->start < end;

	if (x->rss != y->rss)
		return x->rss > y->rss;
	if (x_new != y_new)
		return y_new;
	return true;
}

/* Bring n back to max after an operation on [start, end); see the top of the file. */
static void enforce_bound(struct region_table *t, uint64_t start, uint64_t end)
{
	while (t->max && t->n > t->max && t->n >= 2) {
		size_t i, a;

		for (i = 0; i + 1 < t->n; i++)
			if (same_kind(&t->r[i], &t->r[i + 1]))
				break;
		if (i + 1 < t->n) {
			merge_pair(t, i, true);
			continue;
		}
		/*
		 * The first region in the range the operation changed, paired
		 * with a neighbour it touches, the lower first; with none in
		 * it (a hole was cut), the regions either side of the hole.
		 */
		i = first_above(t, start);
		if (i == t->n)
			a = t->n - 2;
		else if (i > 0 && t->r[i].start >= end)
			a = i - 1;
		else if (i > 0 && t->r[i - 1].end == t->r[i].start)
			a = i - 1;
		else if (i + 1 < t->n && t->r[i].end == t->r[i + 1].start)
			a = i;
		else
			a = i > 0 ? i - 1 : 0;
		merge_pair(t, a, lower_survives(&t->r[a], &t->r[a + 1], start, end));
	}
}

void regions_init(struct region_table *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

void regions_free(struct region_table *t)
{
	if (t->r)
		free(t->r - t->head);
	t->r = NULL;
	t->n = t->cap = t->head = 0;
}

void regions_clear(struct region_table *t)
{
	t->n = 0;
	free_slots_to_tail(t);
}

int regions_copy(struct region_table *dst, const struct region_table *src)
{
	regions_clear(dst);
	if (ensure_room(dst, src->n))
		return -1;
	/* A parent not read yet has no table: memcpy of NULL is undefined, even for 0 bytes. */
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof(*src->r));
	dst->n = src->n;
	return 0;
}

struct region *regions_find(struct region_table *t, uint64_t addr)
{
	size_t i = first_above(t, addr);

	if (i < t->n && t->r[i].start <= addr)
		return &t->r[i];
	return NULL;
}

struct region *regions_next(struct region_table *t, uint64_t addr)
{
	size_t i = first_above(t, addr);

	return i < t->n ? &t->r[i] : NULL;
}

int regions_map(struct region_table *t, uint64_t start, uint64_t end,
		comp_id owner, uint16_t flags, int64_t *dropped_rss)
{
	struct region gone = { 0 }, r = new_region(start, end, owner, flags);

	if (dropped_rss)
		*dropped_rss = 0;
	if (start >= end) {
		errno = EINVAL;
		return -1;
	}
	/* A slot for splitting an old region around the new one, one for the new. */
	if (ensure_room(t, 2))
		return -1;
	cut(t, start, end, &gone);
	insert_at(t, first_above(t, start), &r, 1);
	enforce_bound(t, start, end);
	if (dropped_rss)
		*dropped_rss = gone.rss;
	return 0;
}

int64_t regions_unmap(struct region_table *t, uint64_t start, uint64_t end)
{
	struct region gone = { 0 };

	if (start >= end)
		return 0;
	/* Failing to get a slot only makes cut() coarser: an unmap is never lost. */
	(void)ensure_room(t, 1);
	cut(t, start, end, &gone);
	enforce_bound(t, start, end);
	return gone.rss;
}

static uint64_t overlap(const struct region *r, uint64_t start, uint64_t end)
{
	uint64_t lo = r->start > start ? r->start : start;
	uint64_t hi = r->end < end ? r->end : end;

	return hi > lo ? hi - lo : 0;
}

static u128 charge_weight(const struct region *r, uint64_t start, uint64_t end, bool by_rss)
{
	uint64_t o = overlap(r, start, end);

	if (!by_rss)
		return o;
	return r->rss > 0 ? (u128)prorate(r->rss, o, len_of(r)) : 0;
}

/*
 * All of delta goes to the regions the range touches, even when they cover
 * only part of it: the kernel says the bytes were there, and a part we hold
 * no region for holds no rss we know of. Only with no region at all, or for
 * a negative delta larger than everything the touched regions hold, is
 * anything returned.
 */
int64_t regions_charge_range(struct region_table *t, uint64_t start,
			     uint64_t end, int64_t delta)
{
	size_t lo, hi, i;
	u128 w = 0, c = 0, have = 0;
	int64_t left = 0;
	bool by_rss = true;

	if (!delta || start >= end)
		return delta;
	lo = first_above(t, start);
	for (hi = lo; hi < t->n && t->r[hi].start < end; hi++)
		w += charge_weight(&t->r[hi], start, end, true);
	if (lo == hi)
		return delta;
	if (!w) {
		by_rss = false;
		for (i = lo; i < hi; i++)
			w += charge_weight(&t->r[i], start, end, false);
	}
	for (i = lo; i < hi; i++) {
		struct region *r = &t->r[i];
		u128 c1 = c + charge_weight(r, start, end, by_rss);

		r->rss += share(delta, c, c1, w);
		c = c1;
		if (r->rss < 0) {
			left += r->rss;
			r->rss = 0;
		}
		have += r->rss;
	}
	if (!left)
		return 0;
	/*
	 * More was freed than the estimate put in some region: the pages were
	 * in the range, so take the rest from what the other regions there
	 * still hold, in proportion; only what none holds is returned.
	 */
	if ((u128)-left >= have) {
		for (i = lo; i < hi; i++)
			t->r[i].rss = 0;
		return left + (int64_t)have;
	}
	c = 0;
	for (i = lo; i < hi; i++) {
		u128 c1 = c + (u128)t->r[i].rss;

		t->r[i].rss += share(left, c, c1, have);
		c = c1;
	}
	return 0;
}

/* A region holds addr strictly inside: unmapping from (or to) addr splits it. */
static bool straddles(const struct region_table *t, uint64_t addr)
{
	size_t i = first_above(t, addr);

	return i < t->n && t->r[i].start < addr;
}

/* What the kernel did not free of a part about to go (q < 0: what it freed beyond it). */
static void give_back(struct region *stays, int64_t q)
{
	stays->rss += q;
	if (stays->rss < 0)
		stays->rss = 0;
}

/*
 * The parts split off at the edges of [start, end) were given figures
 * prorated by length, not their pages: what the kernel did not free of
 * such a part was in the part of its region that stays, and what it freed
 * beyond the range's figures (left, when nothing else in the range held
 * it) came from there. Settled here, before the parts go: dropped with
 * them, a heap trimmed in the middle of a region lost the stayed pages
 * from its owner's figure until the next smaps read. Returns what is left
 * of left.
 */
static int64_t settle_edges(struct region_table *t, uint64_t start, uint64_t end,
			    bool cut_low, bool cut_high, int64_t left)
{
	size_t lo = first_above(t, start), hi = first_above(t, end - 1);
	struct region *below = cut_low && lo > 0 ? &t->r[lo - 1] : NULL;
	struct region *above = cut_high && hi + 1 < t->n ? &t->r[hi + 1] : NULL;
	int64_t q, q_below;

	if (below && above && lo == hi) {
		/* A hole in one region: its two sides share it, by length. */
		q = t->r[lo].rss + left;
		q_below = prorate(q, len_of(below), len_of(below) + len_of(above));
		t->r[lo].rss = 0;
		give_back(below, q_below);
		give_back(above, q - q_below);
		return 0;
	}
	if (below) {
		give_back(below, t->r[lo].rss + left);
		t->r[lo].rss = 0;
		left = 0;
	}
	if (above) {
		give_back(above, t->r[hi].rss + left);
		t->r[hi].rss = 0;
		left = 0;
	}
	return left;
}

int64_t regions_unmap_charged(struct region_table *t, uint64_t start, uint64_t end, int64_t delta)
{
	bool cut_low = false, cut_high = false;
	int64_t left;

	if (start >= end)
		return delta;
	/* Without the slots the charge is coarser, never lost. */
	if (!ensure_room(t, 2)) {
		cut_low = straddles(t, start);
		split_at(t, start);
		cut_high = straddles(t, end);
		split_at(t, end);
	}
	left = regions_charge_range(t, start, end, delta);
	if (cut_low || cut_high)
		left = settle_edges(t, start, end, cut_low, cut_high, left);
	regions_unmap(t, start, end);
	return left;
}

int regions_set_owner(struct region_table *t, uint64_t start, uint64_t end,
		      comp_id owner, bool only_unowned)
{
	if (start >= end) {
		errno = EINVAL;
		return -1;
	}
	if (ensure_room(t, 2))
		return -1;
	split_at(t, start);
	split_at(t, end);
	for (size_t i = first_above(t, start); i < t->n && t->r[i].start < end; i++) {
		struct region *r = &t->r[i];

		if (!only_unowned || (r->owner == COMP_UNATTRIBUTED && !(r->flags & REGION_FILE)))
			r->owner = owner;
	}
	enforce_bound(t, start, end);
	return 0;
}

void regions_set_mpi_fn(struct region_table *t, uint64_t start, uint64_t end, uint16_t fn)
{
	for (size_t i = first_above(t, start); i < t->n && t->r[i].start < end; i++)
		t->r[i].mpi_fn = fn;
}

void regions_set_stack(struct region_table *t, uint64_t start, uint64_t end, uint32_t id)
{
	for (size_t i = first_above(t, start); i < t->n && t->r[i].start < end; i++)
		t->r[i].stack = id;
}

void regions_set_flags(struct region_table *t, uint64_t start, uint64_t end,
		       uint16_t bits, bool set)
{
	for (size_t i = first_above(t, start); i < t->n && t->r[i].start < end; i++) {
		if (set)
			t->r[i].flags |= bits;
		else
			t->r[i].flags &= ~bits;
	}
}

/*
 * Spread add's figures over r[0..cnt): by rss when any holds some, else by
 * length. Used when a move drops the tail of a range but keeps its rss.
 */
static void spread(struct region *r, size_t cnt, const struct region *add)
{
	u128 w = 0, c = 0;
	bool by_rss = true;
	size_t i;

	for (i = 0; i < cnt; i++)
		w += r[i].rss > 0 ? (u128)r[i].rss : 0;
	if (!w) {
		by_rss = false;
		for (i = 0; i < cnt; i++)
			w += len_of(&r[i]);
	}
	if (!w)
		return;
	for (i = 0; i < cnt; i++) {
		u128 c1 = c + (by_rss ? (r[i].rss > 0 ? (u128)r[i].rss : 0) : len_of(&r[i]));

		r[i].rss += share(add->rss, c, c1, w);
		r[i].pss += share(add->pss, c, c1, w);
		r[i].rss_at_sync += share(add->rss_at_sync, c, c1, w);
		c = c1;
	}
}

int regions_move(struct region_table *t, uint64_t old_addr, uint64_t old_len,
		 uint64_t new_addr, uint64_t new_len)
{
	uint64_t old_end = old_addr + old_len, new_end = new_addr + new_len;
	uint64_t keep = old_len < new_len ? old_len : new_len;
	struct region pool = { 0 }, gone = { 0 }, *pieces;
	size_t lo, hi, k, kept = 0;

	if (!new_len || old_end < old_addr || new_end < new_addr) {
		errno = EINVAL;
		return -1;
	}
	if (!old_len) {
		/* mremap of a shared mapping with old_len 0 makes a second mapping of it. */
		struct region *src = regions_find(t, old_addr);

		if (!src) {
			errno = ENOENT;
			return -1;
		}
		return regions_map(t, new_addr, new_end, src->owner, src->flags, NULL);
	}
	if (ensure_room(t, 2))
		return -1;
	split_at(t, old_addr);
	split_at(t, old_end);
	lo = first_above(t, old_addr);
	hi = first_above(t, old_end);
	k = hi - lo;
	/* Allocate everything before changing what the table means. */
	pieces = malloc((k ? k : 1) * sizeof(*pieces));
	if (!pieces || ensure_room(t, 1)) {
		free(pieces);
		return -1;
	}
	memcpy(pieces, &t->r[lo], k * sizeof(*pieces));
	remove_span(t, lo, hi);

	/*
	 * A shrink drops the pieces past the new length, but their rss stays
	 * with the range: the kernel's delta for the pages it freed is charged
	 * by the caller (regions_charge_range) before the move.
	 */
	for (size_t i = 0; i < k; i++) {
		struct region *p = &pieces[i];

		if (p->start - old_addr >= keep) {
			add_figures(&pool, p);
			continue;
		}
		if (p->end - old_addr > keep) {
			struct region tail = part_of(p, old_addr + keep, p->end);

			sub_figures(p, &tail);
			add_figures(&pool, &tail);
			p->end = old_addr + keep;
		}
		pieces[kept++] = *p;
	}
	spread(pieces, kept, &pool);
	for (size_t i = 0; i < kept; i++) {
		pieces[i].start = pieces[i].start - old_addr + new_addr;
		pieces[i].end = pieces[i].end - old_addr + new_addr;
		pieces[i].seen = 1;
	}
	/* A grown mapping extends its last vma: the new part is that owner's. */
	if (kept && new_len > old_len)
		pieces[kept - 1].end = new_end;

	/* Whatever was at the destination is gone (MREMAP_FIXED unmaps it). */
	cut(t, new_addr, new_end, &gone);
	insert_at(t, first_above(t, new_addr), pieces, kept);
	free(pieces);
	enforce_bound(t, new_addr, new_end);
	return 0;
}

/*
 * Regions already known keep their owner and flags (events may know better
 * than /proc, and the caller reclassifies); flags apply to the new parts.
 * Negative figures (a bad read) count as zero.
 */
int regions_sync(struct region_table *t, uint64_t start, uint64_t end,
		 int64_t rss, int64_t pss, comp_id owner_if_new, uint16_t flags)
{
	size_t lo, hi, gaps = 0, m, pos, i;
	uint64_t prev, top;
	u128 w = 0, c = 0;
	bool by_rss = true;

	if (start >= end) {
		errno = EINVAL;
		return -1;
	}
	if (rss < 0)
		rss = 0;
	if (pss < 0)
		pss = 0;
	if (ensure_room(t, 2))
		return -1;
	/* Parts of a region outside the entry are not this entry's: split them off. */
	split_at(t, start);
	split_at(t, end);
	lo = first_above(t, start);
	hi = first_above(t, end);
	prev = start;
	for (i = lo; i < hi; i++) {
		gaps += t->r[i].start > prev;
		prev = t->r[i].end;
	}
	gaps += prev < end;
	if (ensure_room(t, gaps))
		return -1;

	/* Fill the gaps in one pass, from the top down, after making room once. */
	m = hi - lo + gaps;
	open_slots(t, hi, gaps);
	pos = lo + m;
	top = end;
	for (i = hi; i-- > lo;) {
		struct region x = t->r[i];

		if (x.end < top)
			t->r[--pos] = new_region(x.end, top, owner_if_new, flags);
		t->r[--pos] = x;
		top = x.start;
	}
	if (start < top)
		t->r[--pos] = new_region(start, top, owner_if_new, flags);
	hi = lo + m;

	for (i = lo; i < hi; i++)
		w += t->r[i].rss > 0 ? (u128)t->r[i].rss : 0;
	if (!w) {
		by_rss = false;
		for (i = lo; i < hi; i++)
			w += len_of(&t->r[i]);
	}
	for (i = lo; i < hi; i++) {
		struct region *r = &t->r[i];
		u128 c1 = c + (by_rss ? (r->rss > 0 ? (u128)r->rss : 0) : len_of(r));

		r->rss = share(rss, c, c1, w);
		r->pss = share(pss, c, c1, w);
		r->rss_at_sync = r->rss;
		r->seen = 1;
		c = c1;
	}
	enforce_bound(t, start, end);
	return 0;
}

bool regions_several(const struct region_table *t, uint64_t start, uint64_t end)
{
	size_t i = first_above(t, start);

	return i + 1 < t->n && t->r[i].start < end && t->r[i + 1].start < end;
}

int regions_sync_exact(struct region_table *t, uint64_t start, uint64_t end, int64_t pss,
		       int64_t (*resident)(void *ctx, uint64_t start, uint64_t end), void *ctx,
		       uint64_t now_ns)
{
	size_t lo = first_above(t, start), hi = lo, i;
	u128 total = 0, c = 0;
	int64_t *got;

	while (hi < t->n && t->r[hi].start < end)
		hi++;
	if (hi == lo)
		return 0;
	got = malloc((hi - lo) * sizeof(*got));
	if (!got)
		return -1;
	for (i = lo; i < hi; i++) {
		got[i - lo] = resident(ctx, t->r[i].start, t->r[i].end);
		if (got[i - lo] < 0) {
			free(got);
			return -1;	/* all estimates kept */
		}
	}
	for (i = lo; i < hi; i++) {
		t->r[i].rss = got[i - lo];
		t->r[i].counted_ns = now_ns;
		total += (u128)got[i - lo];
	}
	free(got);
	if (pss < 0)
		pss = 0;
	for (i = lo; i < hi; i++) {
		struct region *r = &t->r[i];
		u128 c1 = c + (u128)r->rss;

		r->pss = total ? share(pss, c, c1, total) : 0;
		r->rss_at_sync = r->rss;
		c = c1;
	}
	return 0;
}

void regions_set_counted(struct region_table *t, uint64_t start, uint64_t end, uint64_t ns)
{
	for (size_t i = first_above(t, start); i < t->n && t->r[i].start < end; i++)
		t->r[i].counted_ns = ns;
}

void regions_sync_begin(struct region_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->r[i].seen = 0;
}

void regions_sync_end(struct region_table *t, void (*gone)(void *ctx, const struct region *r),
		      void *ctx)
{
	size_t j = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].seen)
			t->r[j++] = t->r[i];
		else if (gone)
			gone(ctx, &t->r[i]);
	t->n = j;
}

void regions_rss_by_owner(const struct region_table *t, int64_t *rss, size_t ncomp)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct region *r = &t->r[i];

		rss[r->owner < ncomp ? r->owner : COMP_UNATTRIBUTED] += r->rss;
	}
}

int64_t regions_rss_total(const struct region_table *t)
{
	int64_t sum = 0;

	for (size_t i = 0; i < t->n; i++)
		sum += t->r[i].rss;
	return sum;
}

void regions_sum(const struct region_table *t, int64_t *rss, int64_t *pss,
		 size_t ncomp)
{
	if (!ncomp)
		return;
	for (size_t i = 0; i < t->n; i++) {
		const struct region *r = &t->r[i];
		/* An owner the arrays do not cover is still counted, never dropped. */
		size_t c = r->owner < ncomp ? r->owner : COMP_UNATTRIBUTED;

		rss[c] += r->rss;
		pss[c] += pss_estimate(r);
	}
}
