// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "tracker.h"

#define TOP_COMPONENTS	3
#define MIB		(1024.0 * 1024.0)

static void write_stats(FILE *f, const struct proc *p, const char *name,
			const struct comp_stats *s)
{
	struct summary_row row = {
		.rank = p->rank, .pid = p->pid, .component = name,
		.peak_rss = s->peak_rss, .peak_rss_time = s->peak_rss_time,
		.peak_pss = s->peak_pss, .peak_pss_time = s->peak_pss_time,
		.final_rss = s->rss, .final_pss = s->pss,
	};

	summary_write_row(f, &row);
}

static void unwind_totals(const struct tracker *t, uint64_t *requests, uint64_t *failures)
{
	*requests = *failures = 0;
	for (size_t i = 0; i < t->nprocs; i++) {
		*requests += t->procs[i]->requests;
		*failures += t->procs[i]->unknown_callers;
	}
}

/*
 * run_info.csv: how the run went, as key,value rows -- events seen and
 * dropped, requests whose caller was not found, probes placed. The report
 * shows them; a user should never have to guess whether figures are whole.
 */
static int write_run_info(struct tracker *t)
{
	uint64_t requests, failures;
	char tmp[256];
	FILE *f;

	if (t->bpf.skel)
		tracer_stats(&t->bpf, t->kstats);
	unwind_totals(t, &requests, &failures);
	f = outdir_begin_replace(&t->out, "run_info.csv", tmp, sizeof(tmp));
	if (!f)
		return -1;
	fprintf(f, "key,value\n");
	fprintf(f, "interval_ms,%u\n", t->opt->interval_ms);
	fprintf(f, "modes,%s%s%s\n", t->opt->mpi_calls ? "mpi-calls" : "",
		t->opt->mpi_calls && t->opt->heap ? " " : "", t->opt->heap ? "heap" : "");
	fprintf(f, "duration_s,%.3f\n", tracker_now(t));
	fprintf(f, "events,%llu\n", (unsigned long long)t->events);
	fprintf(f, "dropped_events,%llu\n", (unsigned long long)t->kstats[STAT_RINGBUF_DROPS]);
	fprintf(f, "stack_read_failures,%llu\n", (unsigned long long)t->kstats[STAT_STACK_READ_FAIL]);
	fprintf(f, "rss_changes_without_cause,%llu\n", (unsigned long long)t->kstats[STAT_NO_CTX_RSS]);
	fprintf(f, "memory_requests,%llu\n", (unsigned long long)requests);
	fprintf(f, "unwind_failures,%llu\n", (unsigned long long)failures);
	fprintf(f, "heap_blocks_untracked,%llu\n", (unsigned long long)t->kstats[STAT_HEAP_FULL]);
	fprintf(f, "processes_refused,%llu\n", (unsigned long long)t->procs_refused);
	if (t->probing)
		fprintf(f, "probes_attached,%llu\nprobe_failures,%llu\n",
			(unsigned long long)t->probes.attached, (unsigned long long)t->probes.failed);
	return outdir_commit(&t->out, f, tmp, "run_info.csv");
}

int summary_write_csv(struct tracker *t)
{
	char tmp[256];
	FILE *f;

	if (!t->out_open)
		return 0;
	f = outdir_begin_replace(&t->out, "summary.csv", tmp, sizeof(tmp));
	if (!f)
		return -1;
	if (write_run_info(t))
		fprintf(stderr, "memattr-bpf: cannot write run_info.csv\n");
	summary_write_header(f);
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct proc *p = t->procs[i];

		if (!p->total.seen || !p->account)
			continue;
		write_stats(f, p, "total", &p->total);
		for (size_t c = 0; c < p->ncomps; c++)
			if (p->comps[c].seen)
				write_stats(f, p, component_name(c), &p->comps[c]);
	}
	return outdir_commit(&t->out, f, tmp, "summary.csv");
}

static int by_rank(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;

	if ((x->rank < 0) != (y->rank < 0))
		return x->rank < 0 ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pid - y->pid;
}

static void print_top(FILE *f, const struct proc *p)
{
	bool used[p->ncomps ? p->ncomps : 1];

	memset(used, 0, sizeof(used));
	for (int k = 0; k < TOP_COMPONENTS; k++) {
		size_t best = p->ncomps;

		for (size_t c = 0; c < p->ncomps; c++)
			if (!used[c] && p->peak_comp_rss[c] > 0 &&
			    (best == p->ncomps || p->peak_comp_rss[c] > p->peak_comp_rss[best]))
				best = c;
		if (best == p->ncomps)
			break;
		used[best] = true;
		fprintf(f, "%s %s %.1f", k ? "," : "", component_name(best),
			p->peak_comp_rss[best] / MIB);
	}
}

void summary_print(struct tracker *t, FILE *f)
{
	struct proc **sorted = calloc(t->nprocs ? t->nprocs : 1, sizeof(*sorted));
	comp_id mpi = component_id("mpi");
	uint64_t requests, failures;
	size_t n = 0;

	if (!sorted)
		return;
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i]->account && t->procs[i]->total.seen)
			sorted[n++] = t->procs[i];
	qsort(sorted, n, sizeof(*sorted), by_rank);

	fprintf(f, "memattr-bpf: %zu process%s traced%s%s\n", n, n == 1 ? "" : "es",
		t->out_open ? "; CSVs in " : "", t->out_open ? t->out.path : "");
	fprintf(f, "%-10s %8s %12s %8s  %s\n", "process", "peak MiB", "at time_s",
		"mpi %", "top components at the peak (MiB)");
	for (size_t i = 0; i < n; i++) {
		const struct proc *p = sorted[i];
		char who[32];
		double share = 0;

		if (p->rank >= 0)
			snprintf(who, sizeof(who), "rank %d", p->rank);
		else
			snprintf(who, sizeof(who), "pid %d", p->pid);
		if (mpi < p->ncomps && p->total.peak_rss > 0)
			share = 100.0 * p->peak_comp_rss[mpi] / p->total.peak_rss;
		fprintf(f, "%-10s %8.1f %12.3f %8.1f ", who, p->total.peak_rss / MIB,
			p->total.peak_rss_time, share);
		print_top(f, p);
		fputc('\n', f);
	}
	fprintf(f, "events: %llu (rss %llu, syscalls %llu); dropped: %llu; stack reads failed: %llu; rss changes without a cause: %llu\n",
		(unsigned long long)t->events, (unsigned long long)t->rss_events,
		(unsigned long long)t->syscall_events,
		(unsigned long long)t->kstats[STAT_RINGBUF_DROPS],
		(unsigned long long)t->kstats[STAT_STACK_READ_FAIL],
		(unsigned long long)t->kstats[STAT_NO_CTX_RSS]);
	unwind_totals(t, &requests, &failures);
	fprintf(f, "memory requests (mmap, brk, mprotect): %llu; requester not found on the stack: %llu%s\n",
		(unsigned long long)requests, (unsigned long long)failures,
		failures ? " (their memory is in unattributed)" : "");
	if (t->kstats[STAT_HEAP_FULL])
		fprintf(f, "warning: %llu heap blocks were not tracked (--heap table full)\n",
			(unsigned long long)t->kstats[STAT_HEAP_FULL]);
	if (t->kstats[STAT_RINGBUF_DROPS])
		fprintf(f, "warning: %llu events were dropped (ring buffer full): components between smaps reads are less exact; try --ringbuf-mb\n",
			(unsigned long long)t->kstats[STAT_RINGBUF_DROPS]);
	free(sorted);
}
