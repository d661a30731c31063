// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The terminal summary at the end of a run: per process, the peak total and
 * when, MPI's share and the top components at the peak; then how the run
 * went. Each process that ends leaves one small record (not its figures),
 * so thousands of short processes cost little.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

#define TOP_COMPONENTS	3
#define MIB		(1024.0 * 1024.0)

struct term_row {
	int rank;
	pid_t pid;
	int64_t peak;
	double peak_time;
	double mpi_share;		/* percent of the peak */
	const char *top[TOP_COMPONENTS];	/* names live as long as the session */
	int64_t top_rss[TOP_COMPONENTS];
};

#define TERM_OOM_LINES	8

struct term_sink {
	struct sink base;
	struct term_row *rows;
	size_t n, cap;
	char oom[TERM_OOM_LINES][320];	/* the first kills, as printed */
	unsigned int nooms;
};

/* One kill in a line: who, when, which limit, the largest components and their growth. */
static void term_job_oom(struct sink *s, const struct sink_job *j, const struct sink_oom *o)
{
	struct term_sink *ts = (struct term_sink *)s;
	char *line;
	size_t len, at;

	(void)j;
	if (ts->nooms++ >= TERM_OOM_LINES)
		return;
	line = ts->oom[ts->nooms - 1];
	len = sizeof(ts->oom[0]);
	if (o->rank >= 0)
		at = snprintf(line, len, "OOM kill: rank %d (pid %d)", o->rank, (int)o->pid);
	else
		at = snprintf(line, len, "OOM kill: pid %d", (int)o->pid);
	at += snprintf(line + at, len - at, " at %.3f s, %s limit %.1f MiB; at its last sample %.1f MiB",
		       o->time, o->cgroup ? "cgroup" : "node (global)", o->limit_bytes / MIB,
		       o->total.rss / MIB);
	for (unsigned int k = 0; k < o->n && k < TOP_COMPONENTS && at < len; k++)
		at += snprintf(line + at, len - at, "%s %s %.1f (%+.1f in %.1f s)", k ? "," : ":",
			       o->by[k].name, o->by[k].rss / MIB, o->by[k].growth / MIB, o->window_s);
}

static void fill_row(struct term_row *r, const struct sink_proc *p)
{
	bool used[p->ncomps ? p->ncomps : 1];

	memset(r, 0, sizeof(*r));
	memset(used, 0, sizeof(used));
	r->rank = p->rank;
	r->pid = p->pid;
	r->peak = p->total.peak_rss;
	r->peak_time = p->total.peak_rss_time;
	for (size_t c = 0; c < p->ncomps; c++)
		if (!strcmp(p->comps[c].name, "mpi") && p->total.peak_rss > 0)
			r->mpi_share = 100.0 * p->comps[c].rss_at_total_peak / p->total.peak_rss;
	for (int k = 0; k < TOP_COMPONENTS; k++) {
		size_t best = p->ncomps;

		for (size_t c = 0; c < p->ncomps; c++)
			if (!used[c] && p->comps[c].rss_at_total_peak > 0 &&
			    (best == p->ncomps ||
			     p->comps[c].rss_at_total_peak > p->comps[best].rss_at_total_peak))
				best = c;
		if (best == p->ncomps)
			break;
		used[best] = true;
		r->top[k] = p->comps[best].name;
		r->top_rss[k] = p->comps[best].rss_at_total_peak;
	}
}

static void term_proc_end(struct sink *s, const struct sink_job *j, const struct sink_proc *p)
{
	struct term_sink *ts = (struct term_sink *)s;

	(void)j;
	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 64;
		struct term_row *r = realloc(ts->rows, cap * sizeof(*r));

		if (!r)
			return;
		ts->rows = r;
		ts->cap = cap;
	}
	fill_row(&ts->rows[ts->n++], p);
}

static int by_rank(const void *a, const void *b)
{
	const struct term_row *x = a, *y = b;

	if ((x->rank < 0) != (y->rank < 0))
		return x->rank < 0 ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pid - y->pid;
}

static void print_row(FILE *f, const struct term_row *r)
{
	char who[32];

	if (r->rank >= 0)
		snprintf(who, sizeof(who), "rank %d", r->rank);
	else
		snprintf(who, sizeof(who), "pid %d", r->pid);
	fprintf(f, "%-10s %8.1f %12.3f %8.1f ", who, r->peak / MIB, r->peak_time, r->mpi_share);
	for (int k = 0; k < TOP_COMPONENTS && r->top[k]; k++)
		fprintf(f, "%s %s %.1f", k ? "," : "", r->top[k], r->top_rss[k] / MIB);
	fputc('\n', f);
}

static void term_job_end(struct sink *s, const struct sink_job *j)
{
	struct term_sink *ts = (struct term_sink *)s;
	const struct sink_counters *c = &j->c;
	FILE *f = stdout;

	if (ts->n > 1)		/* qsort(NULL, 0, ...) is undefined: rows is NULL when none ended */
		qsort(ts->rows, ts->n, sizeof(*ts->rows), by_rank);
	fprintf(f, "memattr-bpf: %zu process%s traced%s%s%s\n", ts->n, ts->n == 1 ? "" : "es",
		j->dir ? "; CSVs in " : "", j->dir ? j->dir : "",
		c->output_errors ? ", INCOMPLETE: files could not be written (see stderr)" : "");
	for (unsigned int i = 0; i < ts->nooms && i < TERM_OOM_LINES; i++)
		fprintf(f, "%s\n", ts->oom[i]);
	if (ts->nooms > TERM_OOM_LINES)
		fprintf(f, "OOM kills: %u in all (run_info.csv: oom_*)\n", ts->nooms);
	fprintf(f, "%-10s %8s %12s %8s  %s\n", "process", "peak MiB", "at time_s",
		"mpi %", "top components at the peak (MiB)");
	for (size_t i = 0; i < ts->n; i++)
		print_row(f, &ts->rows[i]);
	fprintf(f, "events: %llu (rss %llu, syscalls %llu); dropped: %llu; stack reads failed: %llu; rss changes without a cause: %llu\n",
		(unsigned long long)c->events, (unsigned long long)c->rss_events,
		(unsigned long long)c->syscall_events, (unsigned long long)c->dropped,
		(unsigned long long)c->stack_read_failures,
		(unsigned long long)c->rss_without_cause);
	fprintf(f, "memory requests (mmap, brk, mprotect): %llu; requester not found on the stack: %llu%s\n",
		(unsigned long long)c->requests, (unsigned long long)c->unwind_failures,
		c->unwind_failures ? " (their memory is in unattributed)" : "");
	if (c->inferred.processes) {
		uint64_t given = 0;

		for (unsigned int i = 0; i < c->inferred.n; i++)
			given += c->inferred.by[i].bytes;
		fprintf(f, "held before attach, owner inferred from who points at it: %.1f MiB in %llu process%s"
			" (%.2f s of CPU); no owner found: %.1f MiB (run_info.csv: inferred_bytes:*)\n",
			given / MIB, (unsigned long long)c->inferred.processes,
			c->inferred.processes == 1 ? "" : "es", c->inferred.seconds,
			c->inferred.unattributed / MIB);
	}
	fprintf(f, "events of unknown processes: %llu; fault addresses outside known regions: %llu (reread from maps)\n",
		(unsigned long long)c->unknown_pid_events, (unsigned long long)c->unplaced_events);
	if (c->traced_map_full || c->procs_refused)
		fprintf(f, "warning: %llu processes were not traced (%llu past the job's cap of live processes, %llu the kernel's traced map had no room for)\n",
			(unsigned long long)(c->procs_refused + c->traced_map_full),
			(unsigned long long)c->procs_refused, (unsigned long long)c->traced_map_full);
	if (c->heap_untracked)
		fprintf(f, "warning: %llu heap blocks were not tracked (--heap table full)\n",
			(unsigned long long)c->heap_untracked);
	if (c->dropped)
		fprintf(f, "warning: %llu events were dropped (ring buffer full): components between smaps reads are less exact; try --ringbuf-mb\n",
			(unsigned long long)c->dropped);
}

static void term_destroy(struct sink *s)
{
	struct term_sink *ts = (struct term_sink *)s;

	free(ts->rows);
	free(ts);
}

static const struct sink_ops term_ops = {
	.proc_end = term_proc_end,
	.job_end = term_job_end,
	.job_oom = term_job_oom,
	.destroy = term_destroy,
};

struct sink *term_sink_new(void)
{
	struct term_sink *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->base.ops = &term_ops;
	return &ts->base;
}
