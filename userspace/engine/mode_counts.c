// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>

#include "mode_counts.h"
#include "probe_links.h"
#include "tracker.h"
#include "tracker_base.h"

static void add_site(struct proc *p, uint64_t site, const struct site_stats *st)
{
	struct heap_site *v;

	v = realloc(p->heap_sites, (p->nheap_sites + 1) * sizeof(*v));
	if (!v)
		return;
	p->heap_sites = v;
	v[p->nheap_sites++] = (struct heap_site){ site, *st };
}

static void collect_site(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *st)
{
	(void)tgid;
	add_site(ctx, site, st);
}

/* One walk of the kernel's site table for every live process (it may hold 64 Ki sites). */
static void collect_site_any(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *st)
{
	struct proc *p = tracker_find_proc(ctx, tgid, NULL);

	if (p && p->account)
		add_site(p, site, st);
}

static void collect_peak(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *st)
{
	struct proc *p = tracker_find_proc(ctx, tgid, NULL);

	if (p && p->heap_peak.due)
		heap_peak_add(&p->heap_peak, site, st);
}

/* Begin the copy of each process that peaked: true when one has sites in the kernel to read. */
static bool begin_peaks(struct tracker *t)
{
	bool walk = false;

	for (struct session *s = t->sessions; s; s = s->next)
		for (struct proc *p = s->procs.first; p; p = p->next) {
			if (!p->heap_peak.due)
				continue;
			if (!t->opt->heap || !p->account) {
				p->heap_peak.due = false;
				continue;
			}
			/* Not probed yet: no site of it holds anything, and the walk is not needed. */
			heap_peak_begin(&p->heap_peak);
			p->heap_peak.due = p->heap_probed;
			walk |= p->heap_probed;
		}
	return walk;
}

void mode_counts_peaks(struct tracker *t)
{
	if (!t->probing || !begin_peaks(t))
		return;
	/*
	 * Right after the round's figures: the counts are the kernel's now,
	 * a drain later than the VmRSS read that made the peak, as close as
	 * a walk of the table can come to it.
	 */
	tracer_heap_sites(&t->bpf, 0, collect_peak, t);
	for (struct session *s = t->sessions; s; s = s->next)
		for (struct proc *p = s->procs.first; p; p = p->next)
			p->heap_peak.due = false;
}

static void collect_mpi_calls(struct tracker *t, struct proc *p)
{
	for (size_t i = 0; i < t->probes.ntargets; i++) {
		const struct probe_target *tg = &t->probes.targets[i];
		uint64_t calls;
		struct mpi_fn_stats *s;

		if (!tg->mpi)
			continue;
		calls = tracer_mpi_calls(&t->bpf, p->pid, tg->cookie);
		s = mpi_fn_get(&p->mpi_fns, tg->cookie, calls > 0);
		if (s)
			s->calls = calls;
	}
}

void mode_counts_collect(struct tracker *t, struct proc *p)
{
	if (!t->probing || !p->account || !(p->mpi_probed || p->heap_probed))
		return;
	collect_mpi_calls(t, p);
	if (!t->opt->heap)
		return;
	p->nheap_sites = 0;
	tracer_heap_sites(&t->bpf, p->pid, collect_site, p);
}

void mode_counts_collect_live(struct tracker *t, struct session *s)
{
	if (!t->probing)
		return;
	for (struct proc *p = s->procs.first; p; p = p->next) {
		if (!p->account)
			continue;
		collect_mpi_calls(t, p);
		p->nheap_sites = 0;
	}
	if (t->opt->heap)
		tracer_heap_sites(&t->bpf, 0, collect_site_any, t);
}

void mode_counts_release(struct tracker *t, struct proc *p)
{
	if (!t->probing)
		return;
	mode_counts_collect(t, p);
	probes_detach(p);
	/*
	 * Only a probed process has counts in the kernel. Looking for the
	 * others' would walk the maps of every process for each of a job's
	 * short-lived commands (a fork/exec-heavy job: seconds of the tool's
	 * time, and its ranks' CPU on a full node).
	 */
	if (p->mpi_probed || p->heap_probed)
		tracer_forget_process(&t->bpf, p->pid);
}
