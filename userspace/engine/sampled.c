// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>

#include "held_records.h"
#include "reads.h"
#include "recount_gap.h"
#include "sampled.h"
#include "tracker.h"
#include "tracker_base.h"

/*
 * What p's regions hold, with the pages of an unmap in flight (its
 * mapping gone from the read, its record not yet here: still in VmRSS
 * until the call zaps them, proc_gone_in_flight). Without them a read
 * during which a preempted munmap held VmRSS still took those pages for
 * the gap.
 */
static int64_t held(const struct proc *p)
{
	return regions_rss_total(&p->regions) + proc_gone_in_flight(p, NULL);
}

static int64_t drift(const struct proc *p)
{
	return p->sample_total - held(p);
}

/*
 * A count of all of p's pages just ended, VmRSS read right before it
 * (before) and p->sample_total right after: the gap both readings agree
 * on is the new base (recount_gap_after). (Not after the other reads of
 * the mappings: one made while the ring buffer drained, long before this
 * sample's VmRSS, would take the pages faulted since for the gap.)
 */
static void counted_all(struct proc *p, int64_t before)
{
	p->recount_gap = recount_gap_after(p->recount_gap, before - held(p), drift(p));
}

/* p's touched ranges counted, then its VmRSS read. False: p is gone. */
static bool count_touched(struct tracker *t, struct session *s, struct proc *p)
{
	uint64_t read = p->count_read_bytes;
	int ret = proc_count_touched(p);

	s->recount_read_bytes += p->count_read_bytes - read;
	if (ret == -ESRCH || ret == -ENOENT)
		return false;	/* gone: the next sample retires it */
	if (ret) {
		p->touched_full = true;		/* not countable by range: count it all */
		return true;
	}
	s->recounts_touched++;
	return reads_vmrss(t, s, p) != -ESRCH;
}

/*
 * Before a count of every region's pages: the records written so far
 * applied, so that the mappings p made while its smaps was read (MPI_Init
 * dlopen'ing libpmix and its plugins on a busy node) are regions when
 * their pages are counted. Else no region holds those pages, the VmRSS
 * read after the count has them, and the gap takes them: `unattributed`
 * for a sample (HPCCG, 4 ranks: 424-670 KiB of libpmix, 6.8% of `total`).
 * They are all older than the VmRSS read that follows, the sample's: none
 * is set apart from it (the mark of the read before is dropped). Every
 * record written before the drain began, not only what one drain's budget
 * reads: late in a round the budget is 1 ms, the ring holds every
 * process's records in their order, and p's came after the others' (a
 * LULESH rank on 8 ranks: its iteration's temporaries, mapped 33-88 ms
 * before the count, applied after it: 8.7 of 31.2 MiB `unattributed`,
 * the gap taking them from a still count). Bounded as the
 * catch-up before the rows is (held_records_catch_up). The drain can end p:
 * NULL then. Its time is the records', not the count's (added to *t0).
 */
static struct proc *requests_before_count(struct tracker *t, struct session *s, struct proc *p,
					  double *t0)
{
	double began = tracker_mono_s();
	uint64_t now_ns = boot_clock_ns();
	pid_t pid = p->pid;

	p->sample_mark_ns = 0;
	held_records_drain(t);
	held_records_catch_up(t, now_ns);
	*t0 += tracker_mono_s() - began;
	return session_find(s, pid);
}

/*
 * Before a count: the records older than p's VmRSS read that may still
 * be in the ring applied, and VmRSS read again. Those of the requests p
 * made while its smaps was read (that read's start is newer than every
 * record applied): applied after the count, a mapping made and filled
 * behind the read (LULESH's temporaries, mapped and freed every
 * iteration) comes with a region of no pages (the read's figure for it
 * cut), or a mapping freed ahead of it takes its pages out of the read's
 * sum while VmRSS stays (the gap then takes them). And those a drain cut
 * by its budget left (a rank's records after the other ranks' in the
 * ring). MPICH, LULESH on 8 ranks: a rank's first sample, 19.7 of 38.0
 * MiB `unattributed` after a 71 ms smaps read. NULL: p is gone.
 */
static struct proc *requests_before_read(struct tracker *t, struct session *s, struct proc *p,
					  double *t0)
{
	if (t->newest_record_ns >= p->sample_mark_ns ||
	    (!tracer_backlog(&t->bpf) && t->newest_record_ns >= p->sync_boot_ns))
		return p;
	p = requests_before_count(t, s, p, t0);
	if (!p || reads_vmrss(t, s, p) == -ESRCH)
		return NULL;
	return p;
}

/*
 * A count the process outran: VmRSS read after it (p->sample_total) that
 * far from the one read before it (before) that it moved past the drift
 * bound meanwhile (HPCCG building its matrix, 400 MiB/s; CloverLeaf its
 * fields; LULESH its temporaries, every iteration). The pages it faulted
 * in regions already counted are in the later VmRSS and in no region:
 * `unattributed` in that sample (4.3 MiB of 66 MiB, 6.4%; 3.8 of 35 MiB,
 * 10.8%, against 0.1 MiB in exact mode). The records written meanwhile
 * are applied (a mapping made and filled since the round began is a
 * touched range only then), and the regions still filling (the touched
 * ranges: those not yet wholly in memory) are counted again, a fraction
 * of the first count's time, at most COUNT_PASSES counts in all: the last
 * one's two readings lie within the bound, or the sample goes out as it
 * is. NULL: p is gone.
 */
#define COUNT_PASSES	3

static struct proc *count_outran(struct tracker *t, struct session *s, struct proc *p,
				 int64_t before, double *t0)
{
	for (int pass = 1; pass < COUNT_PASSES; pass++) {
		if (!recount_moved(before, p->sample_total))
			break;
		p = requests_before_count(t, s, p, t0);
		if (!p || reads_vmrss(t, s, p) == -ESRCH)
			return NULL;
		if (!p->ntouched || p->touched_full)
			break;
		before = p->sample_total;
		if (!count_touched(t, s, p))
			return NULL;
	}
	return p;
}

/*
 * The regions its requests touched are counted every time (a request that
 * gives pages back can hide pages taken elsewhere from the drift); all of
 * its pages only past the drift bound, or when the touched ranges
 * overflowed.
 */
void sampled_count(struct tracker *t, struct session *s, struct proc *p)
{
	double t0 = tracker_mono_s();
	int64_t before;
	uint64_t read;
	int ret;

	p = requests_before_read(t, s, p, &t0);
	if (!p)
		goto done;
	before = p->sample_total;
	if (p->ntouched && !p->touched_full &&
	    (!count_touched(t, s, p) || !(p = count_outran(t, s, p, before, &t0))))
		goto done;
	if (p->touched_full || recount_drifted(p->sample_total, drift(p), p->recount_gap)) {
		before = p->sample_total;
		s->recounts++;
		/*
		 * A long read is not made in the round (a storm of 60,000
		 * mappings: 2.1 s, every job's samples waiting): it comes
		 * after the round's samples, and the pages of the regions
		 * known are counted now, by the page tables.
		 */
		if (reads_long(t, p)) {
			p->needs_sync = true;
			goto count_all;
		}
		if (!reads_mappings(t, s, p) || reads_vmrss(t, s, p) == -ESRCH)
			goto done;
		/* The read counted every range kept. */
		p->ntouched = 0;
		p->touched_full = false;
		if (!recount_moved(before, p->sample_total)) {
			/*
			 * Still, it may have traded one mapping for another
			 * meanwhile: those counted first. Their reading can
			 * take long (a catch-up of 140 ms on a busy node), and
			 * VmRSS is read again after it: if the rank moved past
			 * the bound meanwhile (LULESH filling its temporaries,
			 * in regions the read had counted: 10.4 of 37.0 MiB
			 * `unattributed` in a rank's first sample), this is a
			 * count that moved, as below.
			 */
			p = requests_before_read(t, s, p, &t0);
			if (!p)
				goto done;
			if (!recount_moved(before, p->sample_total)) {
				if (p->ntouched && !p->touched_full && !count_touched(t, s, p))
					goto done;
				counted_all(p, before);
				goto done;
			}
		}
		/*
		 * It moved during the read (MPI's start-up on a busy node): the
		 * pages it faulted in mappings already read are in no region, and
		 * would be `unattributed` for a sample. Every region's pages again,
		 * by the page tables (a fraction of a read of smaps, so far less
		 * moves meanwhile); the gap from the readings around that count.
		 */
count_all:
		p = requests_before_count(t, s, p, &t0);
		if (!p || reads_vmrss(t, s, p) == -ESRCH)
			goto done;
		before = p->sample_total;
		read = p->count_read_bytes;
		ret = proc_count_all(p);
		s->recount_read_bytes += p->count_read_bytes - read;
		if (ret == -ESRCH || ret == -ENOENT || reads_vmrss(t, s, p) == -ESRCH)
			goto done;
		counted_all(p, before);
		count_outran(t, s, p, before, &t0);
	}
done:
	s->recount_ns += (uint64_t)((tracker_mono_s() - t0) * 1e9);
}
