// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <time.h>

#include "procfs.h"
#include "process.h"
#include "recount_gap.h"

#define PAGE_SIZE_	4096ULL

static uint64_t page_up(uint64_t v)
{
	return (v + PAGE_SIZE_ - 1) & ~(PAGE_SIZE_ - 1);
}

uint64_t boot_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct proc *proc_new(pid_t pid, double now)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->rank = -1;
	p->account = true;
	p->alive = true;
	p->born_time = now;
	p->needs_sync = true;
	p->reread_time = -REREAD_MAPS_S;
	p->maps_stretch = 1;
	p->kernel_hwm = -1;
	regions_init(&p->regions, PROC_MAX_REGIONS);
	code_reader_init(&p->code, pid);
	trend_init(&p->trend);
	return p;
}

static void free_code_maps(struct proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
}

void proc_forget_stacks(struct proc *p)
{
	alloc_stacks_free(&p->stacks);
	free(p->stack_figs);
	p->stack_figs = NULL;
	p->nstack_figs = 0;
	for (size_t i = 0; i < p->nstack_names; i++)
		free(p->stack_names[i]);
	free(p->stack_names);
	p->stack_names = NULL;
	p->nstack_names = 0;
}

void proc_free(struct proc *p)
{
	if (!p)
		return;
	proc_release_mm(p);
	free_code_maps(p);
	mpi_fn_free(&p->mpi_fns);
	proc_forget_stacks(p);
	free(p->heap_sites);
	heap_peak_free(&p->heap_peak);
	for (size_t i = 0; i < p->nprobed; i++)
		free(p->probed_paths[i]);
	free(p->probed_paths);
	free(p->link_fds);
	free(p->comps);
	free(p->peak_comp_rss);
	free(p->late_rss);
	trend_free(&p->trend);
	free(p->memcg);
	held_drop(&p->held);
	free(p);
}

void proc_release_mm(struct proc *p)
{
	regions_free(&p->regions);
	gone_regions_free(&p->gone);
	code_reader_close(&p->code);
	p->npending = 0;
}

int proc_copy_mm(struct proc *child, const struct proc *parent, bool code_maps)
{
	struct code_map *maps = NULL;
	size_t n = 0;

	/* The regions carry the parent's stack ids: the child names them the same. */
	proc_forget_stacks(child);
	if (regions_copy(&child->regions, &parent->regions) ||
	    alloc_stacks_copy(&child->stacks, &parent->stacks))
		return -ENOMEM;
	if (code_maps && parent->nmaps) {
		maps = calloc(parent->nmaps, sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		for (; n < parent->nmaps; n++) {
			maps[n] = parent->maps[n];
			maps[n].path = strdup(parent->maps[n].path);
			if (!maps[n].path)
				break;
		}
	}
	free_code_maps(child);
	child->maps = maps;
	child->nmaps = n;
	child->brk_cur = parent->brk_cur;
	memcpy(child->exe, parent->exe, sizeof(child->exe));
	/* Its own smaps read still comes first: only events after it change residency. */
	child->needs_sync = true;
	return 0;
}

void proc_reset_mm(struct proc *p)
{
	/* The old image's peak, before its regions go; the new one's total is read anew. */
	proc_finish_peak(p);
	/* What the attach read saw was the old image: no sample of this one. */
	if (p->attach_pending) {
		p->attach_pending = false;
		p->sample_mark_ns = 0;
		proc_drop_late(p);
	}
	p->live.anchored = false;
	p->live.late = 0;
	p->image_before_attach = false;
	p->kernel_hwm = -1;
	regions_clear(&p->regions);
	count_window_clear(&p->windows);
	gone_regions_free(&p->gone);	/* the old image's ranges */
	code_reader_close(&p->code);	/* its /proc/PID/mem shows the old image */
	free_code_maps(p);
	/* The old image's stacks point into code that is gone. */
	proc_forget_stacks(p);
	p->brk_cur = 0;
	p->npending = 0;
	p->needs_sync = true;
	p->image_unread = true;
	p->exe[0] = '\0';
}

/* Give every region inside [start, end) to owner; only_unowned spares owners events decided. */
static void set_owner_range(struct region_table *t, uint64_t start, uint64_t end,
			    comp_id owner, bool only_unowned)
{
	struct region *r;
	uint64_t addr = start;

	while (addr < end && (r = regions_find(t, addr))) {
		if (!only_unowned || (r->owner == COMP_UNATTRIBUTED &&
				      !(r->flags & REGION_FROM_EVENT)))
			r->owner = owner;
		if (r->flags & REGION_FILE)
			r->flags &= ~REGION_FROM_EVENT;	/* classified now */
		addr = r->end;
	}
}

static void add_code_map(struct code_map **maps, size_t *n, const struct vma_info *v,
			 comp_id owner)
{
	struct code_map *m;

	if (*n >= PROC_MAX_CODE_MAPS)
		return;
	m = realloc(*maps, (*n + 1) * sizeof(*m));
	if (!m)
		return;
	*maps = m;
	m[*n] = (struct code_map){ v->start, v->end, v->offset, owner, strdup(v->path) };
	if (m[*n].path)
		(*n)++;
}

/*
 * A file's pages are its owner's, whoever mapped it; but a spec's path
 * for a shared data segment (MPICH's /SYSV*, Open MPI's vader segments)
 * only guesses who attached it: the segment's own mmap or shmat, when
 * the tool saw it, says better (an application's own segment).
 */
static void own_mapping(struct region_table *t, const struct vma_info *v, uint64_t start,
			uint64_t end, comp_id owner, bool is_code, bool bss)
{
	if (is_code && !(v->perms[3] == 's' && v->perms[2] != 'x'))
		set_owner_range(t, start, end, owner, false);
	else if (bss || owner != COMP_UNATTRIBUTED)
		set_owner_range(t, start, end, owner, true);
}

const struct code_map *proc_code_map(const struct proc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* An entry to count page by page at the end of the read; now if that cannot wait. */
static void count_split_later(struct proc_sync_state *s, const struct vma_info *v)
{
	if (s->nsplit == s->split_cap) {
		size_t cap = s->split_cap ? 2 * s->split_cap : 8;
		struct split_entry *m = realloc(s->split, cap * sizeof(*m));

		if (!m) {
			regions_sync_exact(&s->p->regions, v->start, v->end, (int64_t)v->pss,
					   s->resident, s->resident_ctx, boot_clock_ns());
			return;
		}
		s->split = m;
		s->split_cap = cap;
	}
	s->split[s->nsplit++] = (struct split_entry){ v->start, v->end, (int64_t)v->pss };
}

/* The counts count_split_later put off, each stamped when it begins. */
static void count_split(struct proc_sync_state *s)
{
	for (size_t i = 0; i < s->nsplit; i++) {
		uint64_t begins = boot_clock_ns();

		/* One read for the entry, not one per region in it (a failed one: per region). */
		if (s->span)
			s->span(s->resident_ctx, s->split[i].start, s->split[i].end);
		regions_sync_exact(&s->p->regions, s->split[i].start, s->split[i].end,
				   s->split[i].pss, s->resident, s->resident_ctx, begins);
	}
}

int proc_sync_vma(const struct vma_info *v, void *arg)
{
	struct proc_sync_state *s = arg;
	struct proc *p = s->p;
	uint16_t flags = 0;
	bool is_code, bss;
	comp_id owner;

	owner = classify_path(s->cls, v->path, p->exe, &is_code);
	if (v->path[0] == '/')
		flags |= REGION_FILE;
	if (v->perms[3] == 's')
		flags |= REGION_SHARED;
	/*
	 * A library's .bss is the anonymous mapping right above its writable
	 * data: the library's own static memory.
	 */
	bss = !v->path[0] && s->prev_code_writable && s->prev_end == v->start;
	if (bss)
		owner = s->prev_owner;
	if (v->perms[2] == 'x')
		flags |= REGION_EXEC;
	regions_sync(&p->regions, v->start, v->end, v->rss, v->pss, owner, flags);
	/*
	 * The kernel wrote this entry just now, not when the read began: RSS
	 * events older than now are in it (a mapping filling up while smaps is
	 * read would count its pages twice).
	 */
	regions_set_counted(&p->regions, v->start, v->end, boot_clock_ns());
	/* Anonymous mappings merged into one entry (or the brk heap): count pages. */
	if (s->resident && v->path[0] != '/' && regions_several(&p->regions, v->start, v->end))
		count_split_later(s, v);
	/* Known regions keep their flags; protection is the kernel's to say. */
	regions_set_flags(&p->regions, v->start, v->end, REGION_EXEC, v->perms[2] == 'x');
	own_mapping(&p->regions, v, v->start, v->end, owner, is_code, bss);
	if (!strcmp(v->path, "[heap]") && !p->brk_cur)
		p->brk_cur = v->end;
	if (v->perms[2] == 'x' && v->path[0] == '/')
		add_code_map(&s->maps, &s->nmaps, v, owner);

	s->prev_end = v->end;
	/*
	 * Only a private writable file mapping (a library's data) has a .bss
	 * after it. A shared segment (MPICH's /SYSV00000000, Open MPI's vader
	 * segments: 'rw-s') has none: the anonymous mapping the kernel placed
	 * right above one is anybody's, not the segment owner's (a rank's
	 * 40 MiB of Fortran arrays were charged to mpi that way).
	 */
	s->prev_code_writable = is_code && v->perms[1] == 'w' && v->perms[3] == 'p';
	s->prev_owner = owner;
	return 0;
}

static comp_id caller_owner(struct proc *p, uint64_t caller, bool *known)
{
	struct region *r = regions_find(&p->regions, caller);

	*known = r && !(r->flags & REGION_FROM_EVENT);
	return r ? r->owner : COMP_UNATTRIBUTED;
}

static void resolve_pending(struct proc *p, const struct classifier *cls)
{
	for (unsigned int i = 0; i < p->npending; i++) {
		struct pending_owner *po = &p->pending[i];
		struct region *r = regions_find(&p->regions, po->start);
		bool known;
		comp_id who = caller_owner(p, po->caller, &known);

		if (r && r->owner == COMP_UNATTRIBUTED)
			r->owner = classify_anon_caller(cls, who, po->map_stack);
	}
	p->npending = 0;
}

/* Each component's rss, then its pss, in p's regions; NULL without components or memory. */
static int64_t *component_figures(const struct proc *p)
{
	int64_t *f = p->ncomps ? calloc(2 * p->ncomps, sizeof(*f)) : NULL;

	if (f)
		regions_sum(&p->regions, f, f + p->ncomps, p->ncomps);
	return f;
}

/*
 * The read that just ended taught nothing: the components' rss, and their
 * pss, moved by no more than 1% of the process's total in all (at least
 * MAPS_STEADY_MIN).
 */
#define MAPS_STEADY_MIN		(256 * 1024)
static bool read_was_steady(const struct proc_sync_state *s)
{
	const struct proc *p = s->p;
	int64_t *now = component_figures(p), moved_rss = 0, moved_pss = 0, total = 0, tol;
	bool steady;

	if (!now || !s->before || s->ncomps != p->ncomps) {
		free(now);
		return false;
	}
	for (size_t i = 0; i < p->ncomps; i++) {
		moved_rss += llabs(now[i] - s->before[i]);
		moved_pss += llabs(now[p->ncomps + i] - s->before[p->ncomps + i]);
		total += now[i];
	}
	tol = total / 100 > MAPS_STEADY_MIN ? total / 100 : MAPS_STEADY_MIN;
	steady = moved_rss <= tol && moved_pss <= tol;
	free(now);
	return steady;
}

void proc_sync_begin(struct proc_sync_state *s, struct proc *p,
		     const struct classifier *cls, uint64_t boot_ns)
{
	memset(s, 0, sizeof(*s));
	s->p = p;
	s->cls = cls;
	s->before = component_figures(p);
	s->ncomps = p->ncomps;
	p->sync_boot_ns = boot_ns;
	gone_regions_read_begins(&p->gone, boot_ns);
	lost_records_begin(&s->lost, p);
	regions_sync_begin(&p->regions);
	/* Every region read anew (maybe changed by records lost): the windows start afresh. */
	count_window_clear(&p->windows);
}

/* A region the read found gone: kept for the records the read overtook. */
static void keep_gone(void *ctx, const struct region *r)
{
	struct proc *p = ctx;

	gone_regions_keep(&p->gone, r, p->sync_boot_ns);
}

void proc_sync_end(struct proc_sync_state *s, bool ok, double now)
{
	struct proc *p = s->p;

	regions_sync_end(&p->regions, keep_gone, p);
	lost_records_end(&s->lost, p, ok);
	if (ok)
		count_split(s);
	free(s->split);
	if (!ok) {
		for (size_t i = 0; i < s->nmaps; i++)
			free(s->maps[i].path);
		free(s->maps);
		free(s->before);
		return;
	}
	if (read_was_steady(s))
		p->maps_stretch = p->maps_stretch < MAPS_STRETCH_MAX ? 2 * p->maps_stretch :
				  MAPS_STRETCH_MAX;
	else
		p->maps_stretch = 1;
	free(s->before);
	free_code_maps(p);
	p->maps = s->maps;
	p->nmaps = s->nmaps;
	resolve_pending(p, s->cls);
	p->needs_sync = false;
	p->sync_urgent = false;
	p->image_unread = false;
	p->last_sync_time = now;
}

/*
 * The components at the peak the events reached (p->live): the regions
 * summed and fitted to that total as a sample's are (partition). RSS
 * only: a region's PSS is known at smaps reads, so the PSS peaks stay
 * those of the samples.
 */
static void partition(struct proc *p, int64_t total, int64_t *rss, int64_t *pss);

static void take_peak(struct proc *p)
{
	struct live_total *l = &p->live;
	size_t n = p->ncomps;
	int64_t *rss, *pss;

	l->pending = false;
	if (l->bytes <= p->total.peak_rss || n <= COMP_UNATTRIBUTED)
		return;
	rss = calloc(n, sizeof(*rss));
	pss = calloc(n, sizeof(*pss));
	if (rss && pss) {
		regions_sum(&p->regions, rss, pss, n);
		partition(p, l->bytes, rss, pss);
		for (size_t i = 0; i < n; i++) {
			struct comp_stats *s = &p->comps[i];

			if (rss[i] > s->peak_rss) {
				s->peak_rss = rss[i];
				s->peak_rss_time = l->pending_time;
				s->seen = true;
			}
		}
		memcpy(p->peak_comp_rss, rss, n * sizeof(*rss));
		p->total.peak_rss = l->bytes;
		p->total.peak_rss_time = l->pending_time;
		l->takes++;
	}
	free(rss);
	free(pss);
}

void proc_finish_peak(struct proc *p)
{
	if (p->live.pending)
		take_peak(p);
}

/*
 * A change of the kernel's total by delta bytes at boot time ts (its
 * last change, for a memory call), late the part of it after the VmRSS
 * read of the sample in progress. Called before the change reaches the
 * regions: a decrease after a new high takes the high's components first.
 */
static void live_change(struct proc *p, int64_t delta, int64_t late, uint64_t ts, double when)
{
	struct live_total *l = &p->live;

	if (!l->on || !delta)
		return;
	/* What the read about to anchor the total did not see (live_anchor). */
	if (p->sample_mark_ns)
		l->late += late;
	if (!l->anchored || ts <= l->anchor_ns)
		return;
	if (delta < 0 && l->pending)
		take_peak(p);
	l->bytes += delta;
	if (delta > 0 && l->bytes > p->total.peak_rss) {
		l->pending = true;
		l->pending_time = when;
	}
}

/*
 * --mpi-calls: a change of the MPI library's memory goes to the MPI call
 * the thread is in, else to the call that requested the region.
 */
static void charge_mpi_fn(struct proc *p, const struct classifier *cls,
			  const struct region *r, uint32_t fn_now, int64_t delta, double when)
{
	uint32_t fn = fn_now ? fn_now : r->mpi_fn;

	if (fn && r->owner == cls->mpi)
		mpi_fn_charge(&p->mpi_fns, fn, delta, when);
}

/* A fault address in no known region: a mapping we did not see made (stack growth, ...). */
static void fault_unplaced(struct proc *p)
{
	if (!p->image_unread)
		p->unplaced_events++;
	p->needs_sync = true;	/* reread maps */
}

/* A fault at boot time ts is already in the figures of the last smaps read. */
static bool fault_counted(const struct proc *p, uint64_t ts)
{
	return ts < p->sync_boot_ns;
}

/*
 * delta bytes faulted into r at boot time ts, by a thread in MPI call
 * mpi_fn (0: none). A region's figure read after the fault holds it
 * already; the MPI call gets it either way (smaps knows no calls).
 */
static void charge_fault(struct proc *p, const struct classifier *cls, struct region *r,
			 int64_t delta, uint64_t ts, uint32_t mpi_fn, double when)
{
	charge_mpi_fn(p, cls, r, mpi_fn, delta, when);
	/* Its figure was read after the smaps read began: older faults are in it. */
	if (fault_counted(p, ts) || ts < r->counted_ns)
		return;
	r->rss += delta;
	if (r->rss < 0)
		r->rss = 0;
	/* After the VmRSS read of a sample in progress: not in its total. */
	if (p->sample_mark_ns && ts > p->sample_mark_ns && r->owner < p->ncomps)
		p->late_rss[r->owner] += delta;
}

/*
 * A fault at boot time ts in [addr, addr + len) that no region holds any
 * more, older than the read that dropped it: the read had its page, but
 * the MPI call still grew by it (and the release that followed is charged).
 */
static void charge_gone_fault(struct proc *p, const struct classifier *cls, uint64_t addr,
			      int64_t delta, uint64_t ts, uint32_t mpi_fn, double when)
{
	const struct region *r = gone_regions_find(&p->gone, addr, ts);

	if (r)
		charge_mpi_fn(p, cls, r, mpi_fn, delta, when);
}

void proc_apply_rss(struct proc *p, const struct classifier *cls, const struct ev_rss *e,
		    double when)
{
	struct region *r;

	if (e->member != 2)	/* MM_SWAPENTS: not resident */
		live_change(p, e->delta, p->sample_mark_ns && e->h.ts_ns > p->sample_mark_ns ? e->delta : 0,
			    e->h.ts_ns, when);
	/* Without a fault address the change lands in the remainder. */
	if (e->ctx != CTX_FAULT)
		return;
	r = regions_find(&p->regions, e->addr);
	if (!r) {
		if (!fault_counted(p, e->h.ts_ns))
			fault_unplaced(p);
		else
			charge_gone_fault(p, cls, e->addr, e->delta, e->h.ts_ns, e->mpi_fn, when);
		return;
	}
	charge_fault(p, cls, r, e->delta, e->h.ts_ns, e->mpi_fn, when);
}

/* The part [start, end) of a run at ts that no region holds any more (charge_gone_fault). */
static void charge_gone_run(struct proc *p, const struct classifier *cls, uint64_t start,
			    uint64_t end, uint64_t ts, double when)
{
	while (start < end) {
		const struct region *r = gone_regions_find(&p->gone, start, ts);
		uint64_t stop;

		if (!r)
			return;
		stop = r->end < end ? r->end : end;
		charge_mpi_fn(p, cls, r, 0, (int64_t)(stop - start), when);
		start = stop;
	}
}

void proc_note_epoch(struct proc *p, uint16_t epoch, uint64_t ns)
{
	p->epochs[p->nepochs++ % PROC_EPOCHS] = (struct fault_epoch){ epoch, ns };
}

/* a - b for epochs of FAULT_EPOCH_BITS bits, which wrap. */
static int epoch_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & ((1u << FAULT_EPOCH_BITS) - 1);

	return d >= 1u << (FAULT_EPOCH_BITS - 1) ? (int)d - (1 << FAULT_EPOCH_BITS) : (int)d;
}

/*
 * A time for a run that stands where the run does against p's reads of
 * /proc: the end of the latest read it came after. When p has had no read
 * yet, the record's own time; when it came before every read p remembers, 0.
 */
static uint64_t run_time(const struct proc *p, const struct ev_run *e)
{
	unsigned int n = p->nepochs < PROC_EPOCHS ? p->nepochs : PROC_EPOCHS;

	if (!p->nepochs)
		return e->h.ts_ns;
	for (unsigned int i = 1; i <= n; i++) {
		const struct fault_epoch *f = &p->epochs[(p->nepochs - i) % PROC_EPOCHS];

		if (epoch_diff(e->epoch, f->epoch) >= 0)
			return f->ns;
	}
	return 0;
}

void proc_apply_run(struct proc *p, const struct classifier *cls, const struct ev_run *e,
		    double when)
{
	uint64_t ts = run_time(p, e), at = e->addr, end = e->addr + e->npages * PAGE_SIZE_;
	int64_t bytes = (int64_t)(end - at);
	bool unplaced = false;

	if (e->member != 2)	/* MM_SWAPENTS: not resident */
		live_change(p, bytes, p->sample_mark_ns && ts > p->sample_mark_ns ? bytes : 0, ts, when);

	while (at < end) {
		struct region *r = regions_next(&p->regions, at);
		uint64_t stop;

		if (!r || r->start >= end) {
			unplaced = true;
			if (fault_counted(p, ts))
				charge_gone_run(p, cls, at, end, ts, when);
			break;
		}
		if (r->start > at) {
			unplaced = true;
			if (fault_counted(p, ts))
				charge_gone_run(p, cls, at, r->start, ts, when);
			at = r->start;
		}
		stop = r->end < end ? r->end : end;
		charge_fault(p, cls, r, (int64_t)(stop - at), ts, 0, when);
		at = stop;
	}
	if (unplaced && !fault_counted(p, ts))
		fault_unplaced(p);
}

/* What e moved of the resident set: swap entries are not resident (VmRSS leaves them out). */
static int64_t resident_delta(const struct ev_syscall *e)
{
	return e->delta[0] + e->delta[1] + e->delta[3];
}

static int64_t sum_delta(const struct ev_syscall *e)
{
	int64_t d = 0;

	for (int i = 0; i < MEMATTR_NR_MEMBERS; i++)
		d += e->delta[i];
	return d;
}

/* Return address into mmap's caller: glibc's mmap is a leaf, so it is at the stack pointer. */
static uint64_t stack_top_word(const struct ev_syscall *e)
{
	uint64_t w;

	if (e->stack_len < sizeof(w))
		return 0;
	memcpy(&w, e->stack, sizeof(w));
	return w;
}

static void add_pending(struct proc *p, uint64_t start, uint64_t caller, bool map_stack)
{
	if (p->npending >= PROC_MAX_PENDING) {
		p->unknown_callers++;
		return;
	}
	p->pending[p->npending++] = (struct pending_owner){ start, caller, map_stack };
	p->needs_sync = true;
}

/*
 * The MPI function holding the requester's return address rq->entry (not 0
 * when rq->entry_path is set), looked up once per address.
 */
static uint16_t entry_mpi_fn(struct proc *p, const struct classifier *cls,
			     const struct requester *rq)
{
	struct entry_fn_slot *slot = code_reader_entry_fn(&p->code, rq->entry);

	if (slot->entry != rq->entry) {
		slot->fn = (uint16_t)cls->mpi_fn_at(cls->mpi_fn_ctx, p, rq->entry_path,
						    rq->entry_off);
		slot->entry = rq->entry;
	}
	return slot->fn;
}

/*
 * Owner of memory requested by syscall e: the code that asked, found past
 * libc on the copied stack (malloc's mmap/brk/mprotect go to malloc's
 * caller). When that code's own mapping is not classified yet (a library
 * dlopen'ed since the last maps read), the region at pending_start, if not
 * 0, is resolved at the next sync.
 */
static comp_id requested_owner(struct proc *p, const struct classifier *cls,
			       const struct ev_syscall *e, uint64_t pending_start,
			       bool map_stack, uint16_t *mpi_fn)
{
	struct requester rq;

	p->requests++;
	p->req_stack = 0;
	*mpi_fn = (uint16_t)e->mpi_fn;
	if (!requester_find(&p->code, &p->regions, cls, e, &rq)) {
		/*
		 * libc or the loader for itself (program start) is not a failure
		 * to unwind, nor a process ended before its records were handled.
		 */
		if (!rq.libc_only && !rq.gone)
			p->unknown_callers++;
		return map_stack ? COMP_STACK : COMP_UNATTRIBUTED;
	}
	/* Its regions will carry the stack that asked (regions_set_stack, by the caller). */
	p->req_stack = alloc_stack_intern(&p->stacks, rq.stack, rq.nstack);
	/* Not inside a probed MPI call: the MPI function on the stack, if any, asked. */
	if (!*mpi_fn && rq.entry_path && cls->mpi_fn_at)
		*mpi_fn = entry_mpi_fn(p, cls, &rq);
	if (!rq.owner_final) {
		if (pending_start)
			add_pending(p, pending_start, rq.caller, map_stack);
		return COMP_UNATTRIBUTED;
	}
	return classify_anon_caller(cls, rq.owner, map_stack);
}

/* The loader zero-filling a library's .bss right above its file pages. */
static bool is_loader_bss(struct proc *p, const struct classifier *cls,
			  const struct ev_syscall *e, uint64_t start, struct region **below)
{
	bool known;

	if (!((int)e->args[3] & MAP_FIXED) || !((int)e->args[3] & MAP_ANONYMOUS))
		return false;
	if (caller_owner(p, stack_top_word(e), &known) != cls->libc || !known)
		return false;
	*below = regions_find(&p->regions, start - 1);
	return *below && ((*below)->flags & REGION_FILE);
}

/* Code mapped since the last read: it takes the place of what its list had there. */
static void note_code_map(struct proc *p, const struct vma_info *v, comp_id owner)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		struct code_map *m = &p->maps[i];
		char *path;

		if (m->end <= v->start || m->start >= v->end)
			continue;
		path = strdup(v->path);
		if (!path)
			return;
		free(m->path);
		*m = (struct code_map){ v->start, v->end, v->offset, owner, path };
		return;
	}
	add_code_map(&p->maps, &p->nmaps, v, owner);
}

/*
 * The files mapped over [start, end) by a request just applied, named by
 * the kernel one mapping at a time (PROCMAP_QUERY), as a read of smaps
 * would name them: their owner and, for code, the process's list of code
 * maps. Without it every file mapped meant a whole read of smaps at the
 * next sample, whose cost grows with the mappings: a rank that loads
 * Open MPI's plugins was read again and again in its first second. The
 * mapping is asked for as it is now, records later than this one may have
 * changed it: they are applied next, and name their own. False when the
 * kernel cannot answer (before Linux 6.11): the next sample reads smaps.
 */
static bool name_mapped_files(struct proc *p, const struct classifier *cls, uint64_t start,
			      uint64_t end)
{
	struct vma_info *v;
	uint64_t addr = start;
	bool is_code, named = true;
	comp_id owner;

	if (p->image_unread || !p->exe[0])
		return false;	/* a read is due anyway, and names the executable */
	v = malloc(sizeof(*v));
	if (!v)
		return false;
	while (addr < end) {
		int ret = code_reader_query(&p->code, addr, QUERY_FILE_FROM, v);

		if (ret == -ENOENT || (!ret && v->start >= end))
			break;		/* no file there any more: later records say what is */
		if (ret || v->end <= addr) {
			named = false;
			break;
		}
		owner = classify_path(cls, v->path, p->exe, &is_code);
		own_mapping(&p->regions, v, v->start > start ? v->start : start,
			    v->end < end ? v->end : end, owner, is_code, false);
		if (v->perms[2] == 'x')
			note_code_map(p, v, owner);
		addr = v->end;
	}
	free(v);
	return named;
}

static void map_region(struct proc *p, const struct classifier *cls, const struct ev_syscall *e,
		       uint64_t start, uint64_t len, int mflags, int prot, int64_t delta)
{
	uint16_t flags = REGION_FROM_EVENT;
	comp_id owner;
	struct region *below, *r;
	int64_t dropped = 0;
	uint16_t fn = (uint16_t)e->mpi_fn;

	if (mflags & MAP_SHARED)
		flags |= REGION_SHARED;
	if (prot & PROT_EXEC)
		flags |= REGION_EXEC;
	if (!(mflags & MAP_ANONYMOUS)) {
		flags |= REGION_FILE;
		if (prot & PROT_EXEC)
			code_reader_code_mapped(&p->code, start, start + len);
		/* A library a rank's command maps comes without a stack: its path names its owner. */
		owner = e->flags & EV_SYSCALL_SHARED_OBJECT ? COMP_UNATTRIBUTED :
			requested_owner(p, cls, e, 0, false, &fn);
	} else if (is_loader_bss(p, cls, e, start, &below)) {
		owner = below->owner;
		if (below->flags & REGION_FROM_EVENT)
			p->needs_sync = true;	/* sync gives it the library's owner */
	} else {
		owner = requested_owner(p, cls, e, start, mflags & MAP_STACK, &fn);
	}
	if (regions_map(&p->regions, start, start + len, owner, flags, &dropped)) {
		p->needs_sync = true;
		return;
	}
	regions_set_mpi_fn(&p->regions, start, start + len, fn);
	regions_set_stack(&p->regions, start, start + len, p->req_stack);
	/* A library's owner comes from its file's name: now, or from the next read. */
	if ((flags & REGION_FILE) && !name_mapped_files(p, cls, start, start + len))
		p->needs_sync = true;
	/* MAP_FIXED over old pages frees them inside this call: net them out. */
	r = regions_find(&p->regions, start);
	if (r && delta + dropped > 0)
		r->rss += delta + dropped;
}

static void apply_mmap(struct proc *p, const struct classifier *cls,
		       const struct ev_syscall *e, int64_t delta)
{
	map_region(p, cls, e, (uint64_t)e->ret, page_up(e->args[1]), (int)e->args[3],
		   (int)e->args[2], delta);
}

/*
 * A SysV segment attached: a shared mapping of a file (its name, SYSV<key>,
 * comes from the next maps read), owned like a mapped file by the code that
 * asked. The kernel side gives its length in args[1]; 0 when it could not
 * tell: the next read then shows it.
 */
static void apply_shmat(struct proc *p, const struct classifier *cls,
			const struct ev_syscall *e, int64_t delta)
{
	int shmflg = (int)e->args[2];
	int prot = PROT_READ;

	if (!e->args[1]) {
		p->needs_sync = true;
		return;
	}
	if (!(shmflg & SHM_RDONLY))
		prot |= PROT_WRITE;
	if (shmflg & SHM_EXEC)
		prot |= PROT_EXEC;
	map_region(p, cls, e, (uint64_t)e->ret, page_up(e->args[1]), MAP_SHARED, prot, delta);
}

/*
 * The main heap grows by brk on behalf of malloc's caller: each extension
 * is a region of its own, owned by the code whose allocation needed it.
 */
static void apply_brk(struct proc *p, const struct classifier *cls,
		      const struct ev_syscall *e, int64_t delta)
{
	uint64_t brk = (uint64_t)e->ret, old = p->brk_cur;
	comp_id owner;
	uint16_t fn;

	p->brk_cur = brk;
	if (!old)
		return;
	if (page_up(brk) > page_up(old)) {
		owner = requested_owner(p, cls, e, page_up(old), false, &fn);
		regions_map(&p->regions, page_up(old), page_up(brk), owner, 0, NULL);
		regions_set_mpi_fn(&p->regions, page_up(old), page_up(brk), fn);
		regions_set_stack(&p->regions, page_up(old), page_up(brk), p->req_stack);
		regions_charge_range(&p->regions, page_up(old), page_up(brk), delta);
	} else if (page_up(brk) < page_up(old)) {
		regions_unmap_charged(&p->regions, page_up(brk), page_up(old), delta);
	}
}

/*
 * malloc's other arenas (threads) reserve address space and grow by making
 * it writable: the part made writable is the requester's, like a brk.
 */
static void apply_mprotect(struct proc *p, const struct classifier *cls,
			   const struct ev_syscall *e, int64_t delta)
{
	uint64_t start = e->args[0], end = start + page_up(e->args[1]);
	int prot = (int)e->args[2];
	struct region *r = regions_find(&p->regions, start);
	comp_id owner;
	uint16_t fn;

	regions_charge_range(&p->regions, start, end, delta);
	regions_set_flags(&p->regions, start, end, REGION_EXEC, prot & PROT_EXEC);
	/* Code made executable again: a patcher may have rewritten libc's calls. */
	if ((prot & PROT_EXEC) && r && (r->flags & REGION_FILE))
		code_reader_code_changed(&p->code);
	if (!(prot & PROT_WRITE) || !r || (r->flags & (REGION_FILE | REGION_SHARED)))
		return;
	owner = requested_owner(p, cls, e, 0, false, &fn);
	if (owner == COMP_UNATTRIBUTED)
		return;
	regions_set_owner(&p->regions, start, end, owner, false);
	regions_set_mpi_fn(&p->regions, start, end, fn);
	regions_set_stack(&p->regions, start, end, p->req_stack);
}

/* The next sample reads p's maps again: at most once in REREAD_MAPS_S. */
static void reread_maps(struct proc *p, double when)
{
	if (when - p->reread_time < REREAD_MAPS_S)
		return;
	p->needs_sync = true;
	p->reread_time = when;
}

/*
 * A read that overtook a request (its record was still being written: the
 * kernel side copies the stack, and can be preempted meanwhile) saw its
 * mapping merged with the neighbours', one figure for all. Cut into
 * parts now, each part gets a share by length, and an unmap of one takes
 * a wrong figure with it (LULESH: 1.6 MiB a rank until the next read,
 * seconds later on 8 ranks). The next sample reads the mappings again,
 * where the parts are counted page by page; at most once a second
 * (reread_maps).
 */
static bool splits_a_read_region(struct proc *p, uint64_t start, uint64_t end)
{
	const struct region *lo = regions_find(&p->regions, start);
	const struct region *hi = start < end ? regions_find(&p->regions, end - 1) : NULL;

	return (lo && lo->start < start && !(lo->flags & REGION_FROM_EVENT)) ||
	       (hi && hi->end > end && !(hi->flags & REGION_FROM_EVENT));
}

/*
 * A file mapped before the last smaps read: the read named its owner from
 * the path, but only the request knows the MPI call and the stack that
 * asked (a plugin MPI_Init dlopen'ed: its pages are MPI_Init's growth), as
 * map_region gives them when the record comes first. A ring buffer read
 * cut short by its deadline leaves such records for after the read.
 */
static void stale_file_map(struct proc *p, const struct classifier *cls,
			   const struct ev_syscall *e, uint64_t start, uint64_t end)
{
	uint16_t fn;

	/* A library its command maps comes without a stack: nothing to add. */
	if (e->flags & EV_SYSCALL_SHARED_OBJECT)
		return;
	requested_owner(p, cls, e, 0, false, &fn);
	regions_set_mpi_fn(&p->regions, start, end, fn);
	regions_set_stack(&p->regions, start, end, p->req_stack);
}

/*
 * An event older than the last smaps read: the read already shows the
 * mappings and what is resident in them, but not who asked for them. Give
 * what the read left unowned to the requester, and keep the break current.
 */
static void apply_stale(struct proc *p, const struct classifier *cls,
			const struct ev_syscall *e, double when)
{
	int mflags = (int)e->args[3];
	uint64_t start, end, old;
	const struct region *r;
	comp_id owner;
	uint16_t fn;

	switch (e->nr) {
	case NR_MMAP:
		start = (uint64_t)e->ret;
		end = start + page_up(e->args[1]);
		if (!(mflags & MAP_ANONYMOUS)) {
			stale_file_map(p, cls, e, start, end);
			return;
		}
		owner = requested_owner(p, cls, e, 0, mflags & MAP_STACK, &fn);
		break;
	case NR_BRK:
		old = p->brk_cur;
		p->brk_cur = (uint64_t)e->ret;
		if (!old || page_up(p->brk_cur) <= page_up(old))
			return;
		start = page_up(old);
		end = page_up(p->brk_cur);
		owner = requested_owner(p, cls, e, 0, false, &fn);
		break;
	case NR_MPROTECT:
		if (!((int)e->args[2] & PROT_WRITE))
			return;
		start = e->args[0];
		end = start + page_up(e->args[1]);
		owner = requested_owner(p, cls, e, 0, false, &fn);
		break;
	case NR_MREMAP:
		/*
		 * Grown in place: the read shows one mapping whose new part no
		 * region covered; it is the owner's of the part that was there.
		 * Moved: the read no longer shows the old mapping, and the new
		 * one has no owner yet: it is the old one's (the read kept it
		 * in p->gone), else the requester's (realloc's caller).
		 */
		start = (uint64_t)e->ret;
		end = start + page_up(e->args[2]);
		r = regions_find(&p->regions, start);
		if (!r || r->owner == COMP_UNATTRIBUTED)
			r = gone_regions_find(&p->gone, e->args[0], e->h.ts_ns);
		owner = r ? r->owner : COMP_UNATTRIBUTED;
		fn = r ? r->mpi_fn : 0;
		if (owner == COMP_UNATTRIBUTED && e->stack_len)
			owner = requested_owner(p, cls, e, 0, false, &fn);
		break;
	default:
		return;		/* unmaps: the read shows their result */
	}
	if (owner == COMP_UNATTRIBUTED)
		return;
	if (splits_a_read_region(p, start, end))
		reread_maps(p, when);
	regions_set_owner(&p->regions, start, end, owner, true);
	if (fn)
		regions_set_mpi_fn(&p->regions, start, end, fn);
	if (p->req_stack)
		regions_set_stack(&p->regions, start, end, p->req_stack);
}

/* A change at epoch came after the read that ended at end (during the read: if during_after). */
static bool after_read(uint16_t epoch, uint16_t end, bool during_after)
{
	int d = epoch_diff(epoch, end);

	return d >= 0 || (d == -1 && during_after);
}

/*
 * What e's call moved after the read of p's figures that ended at epoch
 * end: the parts the kernel side kept apart by epoch (by_read) from end
 * on, and those made during the read if during_after. The rest of delta,
 * older than every part, is placed by the call's entry (a call that
 * straddles more epochs than there are parts).
 */
static int64_t moved_after_read(const struct ev_syscall *e, uint16_t end, bool during_after)
{
	int64_t after = 0, rest = sum_delta(e);

	for (int i = 0; i < MEMATTR_READ_SLOTS; i++) {
		rest -= e->by_read[i];
		if (e->by_read[i] && after_read(e->read_epoch[i], end, during_after))
			after += e->by_read[i];
	}
	if (rest && after_read(e->first_epoch, end, during_after))
		after += rest;
	return after;
}

/* e's call moved memory while the read that ended at epoch end went on. */
static bool moved_during_read(const struct ev_syscall *e, uint16_t end)
{
	for (int i = 0; i < MEMATTR_READ_SLOTS; i++)
		if (e->by_read[i] && epoch_diff(e->read_epoch[i], end) == -1)
			return true;
	return false;
}

/* A call placed against the sample's VmRSS read by its last change's time (or its record's). */
static bool changed_after_mark(const struct proc *p, const struct ev_syscall *e)
{
	uint64_t ts = e->changed_ns ? e->changed_ns : e->h.ts_ns;

	return p->sample_mark_ns && ts > p->sample_mark_ns;
}

/*
 * What e's call moved after the sample's VmRSS read. A free still zapping
 * pages during the read (glibc trimming 19 MB) is split there: placed
 * whole by its last change, the part gone before the read stayed in the
 * components and not in VmRSS. What moved during the read (tens of
 * microseconds) is placed by the call's last change.
 */
static int64_t delta_after_mark(const struct proc *p, const struct ev_syscall *e)
{
	if (!p->sample_mark_ns)
		return 0;
	if (!p->mark_epoch_known || !e->changed_ns)
		return changed_after_mark(p, e) ? sum_delta(e) : 0;
	return moved_after_read(e, p->sample_mark_epoch, changed_after_mark(p, e));
}

/*
 * What e's call moved that the last smaps read did not count: the read
 * saw the pages as they were, so what the call had moved before it is in
 * the regions' figures already. The read takes a millisecond or more, and
 * whether it saw what moved meanwhile depends on where it was: that is
 * taken as not seen, and the next sample reads the maps again.
 */
static int64_t delta_after_sync(const struct proc *p, const struct ev_syscall *e)
{
	if (!p->sync_epoch_known || !e->changed_ns)
		return sum_delta(e);
	return moved_after_read(e, p->sync_epoch, true);
}

/*
 * --mpi-calls: charge what a syscall moved (delta: all of it, whatever the
 * smaps reads saw, which know no calls) to an MPI function, looking at the
 * range the change happened in: what a brk added or took away, where mmap
 * or mremap placed memory, else the call's own range. old_brk is the break
 * before the call. A release whose record a read overtook (stale) looks
 * first at what the reads since it dropped: the range it released is no
 * longer in the table, or is someone else's since (MPI_Free_mem's munmap,
 * overtaken, released nothing); so does one the latest read came in the
 * middle of.
 */
static void charge_syscall(struct proc *p, const struct classifier *cls,
			   const struct ev_syscall *e, uint64_t old_brk, int64_t delta, bool stale,
			   double when)
{
	uint64_t start = e->args[0], len = page_up(e->args[1]);
	uint64_t was = page_up(old_brk), now = page_up((uint64_t)e->ret);
	const struct region *r = NULL;

	if (e->nr == NR_BRK) {
		start = was < now ? was : now;
		len = was < now ? now - was : was - now;
	} else if (e->nr == NR_MMAP || e->nr == NR_SHMAT) {
		start = (uint64_t)e->ret;
	} else if (e->nr == NR_MREMAP && delta > 0) {
		start = (uint64_t)e->ret;
		len = page_up(e->args[2]);
	}
	if (stale && delta < 0)
		r = gone_regions_find(&p->gone, start, e->h.ts_ns);
	if (!r)
		r = regions_find(&p->regions, start);
	/* Still unmapping when the latest read came: the read found it gone. */
	if (!r && delta < 0)
		r = gone_regions_find(&p->gone, start, p->sync_boot_ns - 1);
	/* A range over several owners (a heap trim) is not one function's doing. */
	if (r && r->end >= start + len)
		charge_mpi_fn(p, cls, r, e->mpi_fn, delta, when);
}

/* [start, end) is gone: kept ranges inside it need no count (and leave room for others). */
static void untouch(struct proc *p, uint64_t start, uint64_t end)
{
	unsigned int i = 0;

	count_window_drop(&p->windows, start, end);

	while (i < p->ntouched) {
		struct touched_range *r = &p->touched[i];

		if (r->start >= start && r->end <= end)
			*r = p->touched[--p->ntouched];
		else
			i++;
	}
}

/* Where a call that succeeded can have made pages resident that no event will report. */
static void touch_call(struct proc *p, const struct ev_syscall *e, uint64_t old_brk)
{
	uint64_t a0 = e->args[0], ret = (uint64_t)e->ret;

	switch (e->nr) {
	case NR_MMAP:
	case NR_SHMAT:
		proc_touch(p, ret, ret + page_up(e->args[1]));
		break;
	case NR_MREMAP:
		/* The old range's region moved or changed size: no window of it holds. */
		count_window_drop(&p->windows, a0, a0 + page_up(e->args[1]));
		proc_touch(p, ret, ret + page_up(e->args[2]));
		break;
	case NR_BRK:
		/* A trim: the heap left below the new end, whose share of the pages was a guess. */
		if (p->brk_cur < old_brk && p->brk_cur >= PAGE_SIZE_)
			proc_touch(p, p->brk_cur - PAGE_SIZE_, old_brk);
		else
			proc_touch(p, old_brk, p->brk_cur);
		break;
	case NR_MPROTECT: {
		/*
		 * Anonymous memory made writable: a thread's malloc arena
		 * grows so (glibc's grow_heap, over its PROT_NONE reserve),
		 * and its pages fault in from now on, with no other request.
		 * Not a library's relocations made read-only (RELRO), nor
		 * its data: a file's pages.
		 */
		const struct region *r = regions_find(&p->regions, a0);

		if (((int)e->args[2] & PROT_WRITE) && r && !(r->flags & REGION_FILE))
			proc_touch(p, a0, a0 + page_up(e->args[1]));
		break;
	}
	case NR_MADVISE:
	case NR_MLOCK:
	case NR_MLOCK2:
		proc_touch(p, a0, a0 + page_up(e->args[1]));
		break;
	case NR_MUNMAP:
	case NR_SHMDT:
		untouch(p, a0, a0 + page_up(e->args[1]));
		break;
	default:
		break;
	}
}

/*
 * The call e released a range a read may have found gone already: those
 * regions' pages are out of VmRSS once its record is here (its record
 * comes at the call's end). What a read dropped and no record released
 * yet is in flight (proc_gone_in_flight).
 */
static void release_gone(struct proc *p, const struct ev_syscall *e, uint64_t old_brk)
{
	uint64_t a0 = e->args[0], a1 = page_up(e->args[1]), brk_now = page_up((uint64_t)e->ret);

	switch (e->nr) {
	case NR_MUNMAP:
	case NR_SHMDT:
		gone_regions_release(&p->gone, a0, a1 ? a0 + a1 : ~0ULL);
		break;
	case NR_MREMAP:
		gone_regions_release(&p->gone, a0, a0 + a1);
		break;
	case NR_BRK:
		if (brk_now < page_up(old_brk))
			gone_regions_release(&p->gone, brk_now, page_up(old_brk));
		break;
	default:
		break;
	}
}

/*
 * mremap of a range the latest read found gone: the read came in the
 * middle of the call, and had passed the new place before the block was
 * put there (or listed it, owned by nobody). The block stays whose it was
 * (realloc's caller's); its pages are counted at the next read.
 */
static void move_gone(struct proc *p, const struct ev_syscall *e, double when)
{
	const struct region *g = gone_regions_find(&p->gone, e->args[0], p->sync_boot_ns - 1);
	uint64_t start = (uint64_t)e->ret, end = start + page_up(e->args[2]);
	const struct region *listed;
	comp_id owner;
	uint16_t flags, fn;

	if (!g)
		return;
	owner = g->owner;
	flags = g->flags;
	fn = g->mpi_fn;
	listed = regions_next(&p->regions, start);
	if (listed && listed->start < end)
		regions_set_owner(&p->regions, start, end, owner, true);
	else
		regions_map(&p->regions, start, end, owner, flags, NULL);
	if (fn)
		regions_set_mpi_fn(&p->regions, start, end, fn);
	reread_maps(p, when);
}

static void apply_syscall(struct proc *p, const struct classifier *cls,
			  const struct ev_syscall *e, double when)
{
	int64_t delta = delta_after_sync(p, e), moved = sum_delta(e);
	uint64_t a0 = e->args[0], a1 = page_up(e->args[1]), old_brk = p->brk_cur;
	bool stale = e->h.ts_ns < p->sync_boot_ns;

	p->req_stack = 0;
	if (e->ret < 0 && e->ret > -4096)
		return;		/* failed: nothing mapped, nothing moved */
	release_gone(p, e, old_brk);
	/* Memory given back is charged while its region still exists. */
	if (moved < 0)
		charge_syscall(p, cls, e, old_brk, moved, stale, when);
	if (stale) {
		apply_stale(p, cls, e, when);
		/* The read shows the pages, not the call that brought them. */
		if (moved > 0)
			charge_syscall(p, cls, e, old_brk, moved, true, when);
		return;
	}
	if (p->sync_epoch_known && moved_during_read(e, p->sync_epoch))
		reread_maps(p, when);
	switch (e->nr) {
	case NR_MMAP:
		apply_mmap(p, cls, e, delta);
		break;
	case NR_SHMDT:		/* args[1]: the segment's length (0: the next read shows it) */
		if (!a1)
			p->needs_sync = true;
		/* fall through */
	case NR_MUNMAP:
		regions_unmap_charged(&p->regions, a0, a0 + a1, delta);
		break;
	case NR_SHMAT:
		apply_shmat(p, cls, e, delta);
		break;
	case NR_BRK:
		apply_brk(p, cls, e, delta);
		break;
	case NR_MPROTECT:
		apply_mprotect(p, cls, e, delta);
		break;
	case NR_MREMAP:
		regions_charge_range(&p->regions, a0, a0 + a1, delta);
		if (!regions_find(&p->regions, a0))
			move_gone(p, e, when);
		else
			regions_move(&p->regions, a0, a1, (uint64_t)e->ret, page_up(e->args[2]));
		break;
	case NR_MADVISE:
	case NR_MLOCK:
	case NR_MLOCK2:
		regions_charge_range(&p->regions, a0, a0 + a1, delta);
		break;
	default:
		/* mlockall: no range; the change shows in the remainder. */
		break;
	}
	touch_call(p, e, old_brk);
	/* Memory taken is charged once its region exists. */
	if (moved > 0)
		charge_syscall(p, cls, e, old_brk, moved, false, when);
}

/* Each component's RSS in p's regions (p->ncomps entries), NULL without memory. */
static int64_t *component_rss(const struct proc *p)
{
	int64_t *rss = calloc(p->ncomps, sizeof(*rss));

	if (rss)
		regions_rss_by_owner(&p->regions, rss, p->ncomps);
	return rss;
}

/*
 * A free still in progress at a sample (EV_SYSCALL_IN_FLIGHT): its range
 * and what it had freed at the sample's VmRSS read, kept for proc_account
 * (preempted since, or still zapping, its record comes late). Other calls
 * in progress only say where memory is placed, which can wait for them.
 */
static void note_in_flight(struct proc *p, const struct ev_syscall *e)
{
	uint64_t start = e->args[0], end = start + page_up(e->args[1]);
	int64_t delta = delta_after_sync(p, e) - delta_after_mark(p, e);

	if (!p->sample_mark_ns || delta >= 0)
		return;
	if (e->nr == NR_BRK) {
		start = page_up(e->args[0]);
		end = page_up(p->brk_cur);
	} else if (e->nr != NR_MUNMAP && e->nr != NR_MADVISE) {
		return;
	}
	if (start >= end || p->flight.valid)
		return;
	p->flight.valid = true;
	p->flight.tid = e->h.tid;
	p->flight.start = start;
	p->flight.end = end;
	p->flight.delta = delta;
}

/* What p->flight took from each component, set apart from the sample as a late change is. */
static void set_apart_flight(struct proc *p)
{
	struct region_table copy = { 0 };
	int64_t *before = component_rss(p), *after = calloc(p->ncomps, sizeof(*after));

	if (before && after && !regions_copy(&copy, &p->regions)) {
		regions_charge_range(&copy, p->flight.start, p->flight.end, p->flight.delta);
		regions_rss_by_owner(&copy, after, p->ncomps);
		for (size_t i = 0; i < p->ncomps; i++)
			p->late_rss[i] += before[i] - after[i];
	}
	regions_free(&copy);
	free(after);
	free(before);
}

/*
 * A syscall after the VmRSS read of a sample in progress (a free, a heap
 * trim, an owner given) is set apart from that sample, as a late fault is:
 * the sample shows the regions as they were at the read. Applied into it, a
 * free just after the read would leave its pages in VmRSS and in no
 * component: `unattributed` for one sample (10-19 MiB a rank in LULESH,
 * whose cycles free their temporaries). A call is placed by its last
 * counter change, not its exit: one preempted on its way out had freed
 * before the read. One whose changes straddle the read is set apart in
 * the share it moved after it (delta_after_mark).
 */
void proc_apply_syscall(struct proc *p, const struct classifier *cls,
			const struct ev_syscall *e, double when)
{
	int64_t *before, *after, delta, share;

	if (e->flags & EV_SYSCALL_IN_FLIGHT) {
		note_in_flight(p, e);
		return;
	}
	/* The call in progress has ended: its record says all. */
	if (p->flight.valid && e->h.tid == p->flight.tid)
		p->flight.valid = false;
	live_change(p, resident_delta(e), delta_after_mark(p, e),
		    e->changed_ns ? e->changed_ns : e->h.ts_ns, when);
	delta = delta_after_sync(p, e);
	share = delta_after_mark(p, e);
	/* A call that moved nothing (an owner given) is placed whole. */
	before = p->ncomps && (delta ? share != 0 : changed_after_mark(p, e)) ? component_rss(p) : NULL;

	apply_syscall(p, cls, e, when);
	if (!before)
		return;
	after = component_rss(p);
	for (size_t i = 0; after && i < p->ncomps; i++)
		p->late_rss[i] += !delta || share == delta ? after[i] - before[i] :
				  (int64_t)((__int128)(after[i] - before[i]) * share / delta);
	free(after);
	free(before);
}

static int grow_comps(struct proc *p, const struct classifier *cls)
{
	size_t n = cls->comps ? comp_table_count(cls->comps) : component_count();
	struct comp_stats *c;
	int64_t *peak, *late;

	if (n <= p->ncomps)
		return 0;
	c = realloc(p->comps, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	p->comps = c;
	peak = realloc(p->peak_comp_rss, n * sizeof(*peak));
	if (!peak)
		return -ENOMEM;
	p->peak_comp_rss = peak;
	late = realloc(p->late_rss, n * sizeof(*late));
	if (!late)
		return -ENOMEM;
	p->late_rss = late;
	memset(c + p->ncomps, 0, (n - p->ncomps) * sizeof(*c));
	memset(peak + p->ncomps, 0, (n - p->ncomps) * sizeof(*peak));
	memset(late + p->ncomps, 0, (n - p->ncomps) * sizeof(*late));
	p->ncomps = n;
	return 0;
}

static void update_peak(struct comp_stats *s, double now)
{
	/* A peak taken from events before the first sample (take_peak) stays. */
	if (s->rss > s->peak_rss || (!s->seen && !s->peak_rss)) {
		s->peak_rss = s->rss;
		s->peak_rss_time = now;
	}
	if (s->pss > s->peak_pss || !s->seen) {
		s->peak_pss = s->pss;
		s->peak_pss_time = now;
	}
	s->seen = true;
}

/*
 * The kernel's total is the truth. What the regions hold is scaled down if
 * it exceeds it (pages the kernel dropped without telling us where, such as
 * reclaim); what it does not explain is unattributed.
 */
static void partition(struct proc *p, int64_t total, int64_t *rss, int64_t *pss)
{
	int64_t attributed = 0, residual;
	size_t n = p->ncomps;

	for (size_t i = 0; i < n; i++)
		if (i != COMP_UNATTRIBUTED)
			attributed += rss[i];
	if (attributed > total && attributed > 0) {
		int64_t placed = 0;

		for (size_t i = 0; i < n; i++) {
			if (i == COMP_UNATTRIBUTED || !rss[i])
				continue;
			pss[i] = (int64_t)((__int128)pss[i] * total / attributed);
			rss[i] = (int64_t)((__int128)rss[i] * total / attributed);
			placed += rss[i];
		}
		rss[COMP_UNATTRIBUTED] = total - placed;
		pss[COMP_UNATTRIBUTED] = total - placed;
		return;
	}
	residual = total - attributed - rss[COMP_UNATTRIBUTED];
	rss[COMP_UNATTRIBUTED] = total - attributed;
	/* What no region explains is taken as private: its PSS is its RSS. */
	pss[COMP_UNATTRIBUTED] += residual;
	if (pss[COMP_UNATTRIBUTED] < 0)
		pss[COMP_UNATTRIBUTED] = 0;
}

/*
 * Each stack's regions' rss now (and, at a new peak of the total, at the
 * peak): what the end of the run writes per stack. Raw region figures,
 * before partition() fits the components to the kernel's total.
 */
static void account_stacks(struct proc *p)
{
	size_t n = p->stacks.n + 1;

	if (p->stacks.n == 0)
		return;
	if (n > p->nstack_figs) {
		struct stack_fig *f = realloc(p->stack_figs, n * sizeof(*f));

		if (!f)
			return;		/* the stacks' figures lag a sample: the components are whole */
		memset(f + p->nstack_figs, 0, (n - p->nstack_figs) * sizeof(*f));
		p->stack_figs = f;
		p->nstack_figs = n;
	}
	for (size_t i = 0; i < p->nstack_figs; i++)
		p->stack_figs[i].rss = 0;
	for (size_t i = 0; i < p->regions.n; i++) {
		const struct region *r = &p->regions.r[i];

		if (!r->stack || r->stack >= p->nstack_figs)
			continue;
		p->stack_figs[r->stack].rss += r->rss;
		p->stack_figs[r->stack].owner = r->owner;
	}
}

/*
 * The first sample's VmRSS read (total, at mark_ns; 0: given by the
 * caller, no read) anchors the followed total, with the changes applied
 * after the read added. Later samples do not set it again: the records
 * are applied in their order, and a sample's read can be ahead of them
 * (records still in the ring buffer when it is accounted, on a loaded
 * node); set from it, the total would skip a high those records make.
 * The engine unanchors it when records were lost, and an exec does.
 * A high the total is at now is taken here, while its regions are at hand.
 */
static void live_anchor(struct proc *p, int64_t total, uint64_t mark_ns, double now)
{
	struct live_total *l = &p->live;

	/* A zombie's statm reads 0: its last figures stay. */
	if (!l->on || total <= 0) {
		l->late = 0;
		return;
	}
	if (!l->anchored) {
		l->bytes = total + (mark_ns ? l->late : 0);
		l->anchor_ns = mark_ns;
		l->anchored = true;
	}
	l->late = 0;
	if (l->bytes > p->total.peak_rss && !l->pending) {
		l->pending = true;
		l->pending_time = now;
	}
	if (l->pending)
		take_peak(p);
}

void proc_drop_late(struct proc *p)
{
	if (p->late_rss)
		memset(p->late_rss, 0, p->ncomps * sizeof(*p->late_rss));
	p->live.late = 0;
	p->flight.valid = false;
}

int64_t proc_gone_in_flight(const struct proc *p, int64_t *rss)
{
	if (p->live.on || !p->sync_boot_ns)
		return 0;	/* exact: the unmap's own changes say what is left */
	return gone_regions_unreleased(&p->gone, p->sync_boot_ns, rss, p->ncomps);
}

/*
 * Sampled attribution: the pages of an unmap in flight at the sample
 * (proc_gone_in_flight) stay their owner's, as far as VmRSS holds more
 * than the regions: what is left over, all of it if they explain no
 * more. Else a rank preempted inside munmap, its mapping gone from
 * smaps, had those pages `unattributed` (LULESH on 8 ranks, MPICH, 2
 * cores: 3.0-3.3 MiB of its temporaries, 8.5-9.9% of `total`, in
 * samples where the exact tool had them in `app`).
 */
static void add_in_flight(struct proc *p, int64_t total, int64_t *rss, int64_t *pss)
{
	int64_t held = 0, over, gone, *by;
	size_t n = p->ncomps;

	for (size_t i = 0; i < n; i++)
		held += rss[i];
	over = total - held;
	if (over <= 0 || !(by = calloc(n, sizeof(*by))))
		return;
	gone = proc_gone_in_flight(p, by);
	for (size_t i = 0; gone > 0 && i < n; i++) {
		int64_t add = gone > over ? (int64_t)((__int128)by[i] * over / gone) : by[i];

		if (i == COMP_UNATTRIBUTED || add <= 0)
			continue;
		rss[i] += add;
		pss[i] += add;	/* private anonymous memory, as far as anyone knows */
	}
	free(by);
}

/*
 * Exact attribution: regions that hold more than VmRSS, past the drift
 * bound, are wrong (a page counted twice, an unmap that left its region
 * holding pages): partition() scales every component down to fit, and
 * nothing else corrects it before the next read for PSS, which the smaps
 * budget and a steady process's stretch put off for seconds. The
 * validation's exact tool had it for 2-13 s on a rank (LULESH, 8 ranks:
 * rank 0's `app` ~10 MiB above what it held for the whole run with
 * MPICH, `libs` and `mpi` on two ranks for 2.4 s at Open MPI's start-up;
 * HPCCG, 4 ranks, for 4-5 s) and the sampled tool's comparison with it
 * failed by up to 19% of `total`. Its mappings are read again at the next
 * sample, at most once a second (VmRSS lags on kernels whose counters are
 * per CPU: a read that leaves it so is not repeated at every sample), and
 * not put off for the smaps budget (sync_urgent): a rank whose read took
 * 25 ms on the busy node waited 1.25 s and more for it, up to 4 s in the
 * validation runs, scaled all along.
 */
#define ABOVE_TOTAL_REREAD_S	1.0

static void regions_above_total(struct proc *p, int64_t total, const int64_t *rss, double now)
{
	int64_t held = 0;

	if (!p->live.on || now - p->last_sync_time < ABOVE_TOTAL_REREAD_S)
		return;
	for (size_t i = 0; i < p->ncomps; i++)
		held += rss[i];
	if (held > total && recount_drifted(total, total - held, 0))
		p->needs_sync = p->sync_urgent = true;
}

int proc_account(struct proc *p, const struct classifier *cls, int64_t total_rss, double now)
{
	int64_t *rss, *pss, total_pss = 0;
	uint64_t mark_ns = p->sample_mark_ns;
	size_t n;
	int ret;

	ret = grow_comps(p, cls);
	if (ret) {
		p->sample_mark_ns = 0;
		return ret;
	}
	n = p->ncomps;
	rss = calloc(n, sizeof(*rss));
	pss = calloc(n, sizeof(*pss));
	if (!rss || !pss) {
		free(rss);
		free(pss);
		return -ENOMEM;
	}
	regions_sum(&p->regions, rss, pss, n);
	account_stacks(p);
	if (p->flight.valid) {
		if (p->sample_mark_ns)
			set_apart_flight(p);
		p->flight.valid = false;
	}
	if (p->sample_mark_ns) {
		/*
		 * Set apart what came after the VmRSS read (proc_mark_sample):
		 * late faults take pages away, late frees give them back. PSS
		 * in proportion; pages of a component left with none are
		 * taken as private.
		 */
		for (size_t i = 0; i < n; i++) {
			int64_t was = rss[i];

			rss[i] -= p->late_rss[i];
			if (rss[i] < 0)
				rss[i] = 0;
			if (was > 0)
				pss[i] = (int64_t)((__int128)pss[i] * rss[i] / was);
			else
				pss[i] = rss[i];
			p->late_rss[i] = 0;
		}
		p->sample_mark_ns = 0;
	}
	add_in_flight(p, total_rss, rss, pss);
	regions_above_total(p, total_rss, rss, now);
	partition(p, total_rss, rss, pss);

	for (size_t i = 0; i < n; i++) {
		struct comp_stats *s = &p->comps[i];

		s->rss = rss[i];
		s->pss = pss[i];
		total_pss += pss[i];
		if (s->seen || rss[i] || pss[i])
			update_peak(s, now);
	}
	p->total.rss = total_rss;
	p->total.pss = total_pss;
	if (p->total.rss > p->total.peak_rss || !p->total.seen)
		memcpy(p->peak_comp_rss, rss, n * sizeof(*rss));
	/*
	 * The stacks' figures and the kernel's heap sites are read at
	 * samples only: theirs is the largest sample's moment.
	 */
	if (p->total.rss > p->sample_peak || !p->total.seen) {
		p->sample_peak = p->total.rss;
		for (size_t i = 0; i < p->nstack_figs; i++)
			p->stack_figs[i].rss_at_peak = p->stack_figs[i].rss;
		/* The heap sites of this moment: the engine reads them from the kernel (heap_peak.h). */
		p->heap_peak.due = true;
	}
	update_peak(&p->total, now);
	live_anchor(p, total_rss, mark_ns, now);
	free(rss);
	free(pss);
	return 0;
}
