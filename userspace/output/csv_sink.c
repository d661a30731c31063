// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CSV sink: one timeline per process (rank-<R>.csv, pid-<P>.csv),
 * summary.csv and run_info.csv, rewritten atomically at each job summary.
 *
 * A process that ends leaves its summary rows in a spool (an unlinked
 * temporary file), not in memory: a job that runs thousands of short
 * processes costs the tool disk, not RSS, and summary.csv is the spool
 * followed by the live processes' rows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv_out.h"
#include "gz_file.h"
#include "row_file.h"
#include "sink.h"

/* OOM kills written out in full; past them run_info.csv counts them only. */
#define CSV_OOM_KEEP	8

struct csv_sink {
	struct sink base;
	struct sink_oom *ooms;	/* CSV_OOM_KEEP of them from the first kill (a daemon has many sinks) */
	unsigned int nooms;	/* kills seen, kept or not */
	struct output_dir *dir;
	struct row_spool ended;	/* summary rows of the processes that ended */
	unsigned int aside;	/* timelines written beside a file planted on their name */
	bool compress;		/* timelines as rank-<R>.csv.gz */
};

/* Per process: its timeline file. */
struct csv_proc {
	FILE *f;
	char name[80];
	off_t whole;		/* bytes of whole rows on disk (plain files) */
	bool header;		/* the header is among them */
	long long last_row_ms;	/* time_s of the last rows written, in ms; -1: none */
	bool closed;		/* complete, or could not be made: never reopened */
};

static struct csv_proc *proc_file(struct csv_sink *cs, const struct sink_proc *p)
{
	struct csv_proc *cp = *p->state;
	char name[sizeof(cp->name)];
	const char *why;

	if (cp)
		return cp;
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return NULL;
	*p->state = cp;
	cp->last_row_ms = -1;
	csv_file_name(p->rank, p->pid, name, sizeof(name));
	if (cs->compress)
		strcat(name, ".gz");
	/* Never through what someone planted on the name, and never silently lost either. */
	cp->f = outdir_create_beside(cs->dir, name, cp->name, sizeof(cp->name), &why);
	if (cp->f && why) {
		fprintf(stderr, "memattr-bpf: %s/%s is %s, not written through: this timeline is in %s\n",
			cs->dir->path, name, why, cp->name);
		cs->aside++;
	}
	if (cp->f && cs->compress)
		cp->f = gz_wrap(cp->f);
	if (!cp->f) {
		outdir_write_failed(cs->dir, cp->name, errno, "this process's timeline is lost");
		cp->closed = true;
	}
	return cp;
}

/* One sample's rows (the header first if not yet on disk), flushed. */
static int write_sample(struct csv_proc *cp, const struct sink_proc *p)
{
	if (!cp->header && csv_write_header(cp->f))
		return -1;
	if (csv_write_row(cp->f, p->time, p->rank, p->pid, "total", p->total.rss, p->total.pss))
		return -1;
	for (size_t i = 0; i < p->ncomps; i++)
		if (csv_write_row(cp->f, p->time, p->rank, p->pid, p->comps[i].name,
				  p->comps[i].rss, p->comps[i].pss))
			return -1;
	return fflush(cp->f) || ferror(cp->f) ? -1 : 0;
}

/*
 * A sample could not be written (a full disk): a plain file is cut back to
 * its last whole row and stays open, so later samples land once there is
 * room and no row is ever left cut; a gzip stream cannot be cut back and
 * ends here. 0 when the file stays usable.
 */
static int rewind_to_whole(struct csv_proc *cp)
{
	int fd = fileno(cp->f);

	if (fd < 0)
		return -1;	/* a gzip cookie stream */
	__fpurge(cp->f);	/* drop the rows still buffered */
	clearerr(cp->f);
	if (ftruncate(fd, cp->whole) || fseeko(cp->f, cp->whole, SEEK_SET))
		return -1;
	return 0;
}

static void csv_proc_sample(struct sink *s, const struct sink_job *j, const struct sink_proc *p)
{
	struct csv_sink *cs = (struct csv_sink *)s;
	struct csv_proc *cp = proc_file(cs, p);
	char detail[96];
	int err;

	(void)j;
	/* Rows carry time_s to the ms: a second sample in the same ms (the
	 * final one right after the last tick) would repeat a time. */
	if (!cp || !cp->f || llround(p->time * 1000) == cp->last_row_ms)
		return;
	cp->last_row_ms = llround(p->time * 1000);
	errno = 0;
	if (!write_sample(cp, p)) {
		cp->header = true;
		if (fileno(cp->f) >= 0)
			cp->whole = ftello(cp->f);
		return;
	}
	err = errno ? errno : EIO;
	if (!rewind_to_whole(cp)) {
		snprintf(detail, sizeof(detail), "samples from time_s %.3f on may be missing", p->time);
		outdir_write_failed(cs->dir, cp->name, err, detail);
		return;
	}
	snprintf(detail, sizeof(detail), "its timeline ends before time_s %.3f", p->time);
	outdir_write_failed(cs->dir, cp->name, err, detail);
	fclose(cp->f);
	cp->f = NULL;
	cp->closed = true;
}

/* The kill of process pid, the latest when its pid was reused; NULL: none kept. */
static const struct sink_oom *oom_of(const struct csv_sink *cs, pid_t pid)
{
	unsigned int n = cs->nooms < CSV_OOM_KEEP ? cs->nooms : CSV_OOM_KEEP;

	for (unsigned int i = cs->ooms ? n : 0; i-- > 0;)
		if (cs->ooms[i].pid == pid)
			return &cs->ooms[i];
	return NULL;
}

/* A component's growth before the kill; one folded into "other" has that row's. */
static int64_t oom_growth(const struct sink_oom *o, const char *name)
{
	if (!strcmp(name, "total"))
		return o->total.growth;
	for (unsigned int i = 0; i < o->n; i++)
		if (!strcmp(o->by[i].name, name))
			return o->by[i].growth;
	return 0;
}

static int write_stats(FILE *f, const struct sink_proc *p, const struct sink_comp *c,
		       const char *name, const struct sink_oom *o)
{
	struct summary_row row = {
		.rank = p->rank, .pid = p->pid, .component = name,
		.peak_rss = c->peak_rss, .peak_rss_time = c->peak_rss_time,
		.peak_pss = c->peak_pss, .peak_pss_time = c->peak_pss_time,
		.final_rss = c->rss, .final_pss = c->pss,
		.oom = o != NULL, .oom_time = o ? o->time : 0, .oom_growth = o ? oom_growth(o, name) : 0,
		.kernel_hwm = -1,
	};

	if (c == &p->total) {
		row.peak_source = p->peak_from_events ? "events" : "samples";
		row.kernel_hwm = p->kernel_hwm;
		row.hwm_before_attach = p->hwm_before_attach;
	}

	return summary_write_row(f, &row);
}

static int write_proc_summary(FILE *f, const struct sink_proc *p, const struct sink_oom *o)
{
	if (write_stats(f, p, &p->total, "total", o))
		return -1;
	for (size_t i = 0; i < p->ncomps; i++)
		if (write_stats(f, p, &p->comps[i], p->comps[i].name, o))
			return -1;
	return 0;
}

/* An ended process's summary rows, into the spool (ctx: a struct ended_of). */
struct ended_of {
	struct csv_sink *cs;
	const struct sink_proc *p;
};

static int ended_rows(FILE *f, void *ctx)
{
	const struct ended_of *e = ctx;

	return write_proc_summary(f, e->p, oom_of(e->cs, e->p->pid));
}

static void csv_proc_end(struct sink *s, const struct sink_job *j, const struct sink_proc *p)
{
	struct csv_sink *cs = (struct csv_sink *)s;
	struct csv_proc *cp = *p->state;

	(void)j;
	if (cp) {
		/* A gzip stream writes its trailer here. */
		if (cp->f && fclose(cp->f))
			outdir_write_failed(cs->dir, cp->name, errno ? errno : EIO,
					    "its end could not be written");
		free(cp);
		*p->state = NULL;
	}
	/* A row lost: summary.csv cannot be whole any more (said when it is written). */
	row_spool_add(&cs->ended, ended_rows, &(struct ended_of){ cs, p });
}

/*
 * What the attach inferred (owners of memory held before it), apart from
 * what was observed: bytes per component (inferred_bytes:<component>),
 * what stayed unattributed, and the cost. Rows only when it ran.
 */
static void write_inferred(FILE *f, const struct sink_inferred *in)
{
	if (!in->processes)
		return;
	fprintf(f, "infer_processes,%llu\n", (unsigned long long)in->processes);
	fprintf(f, "infer_cpu_s,%.3f\n", in->seconds);
	fprintf(f, "infer_wall_s,%.3f\n", in->wall_seconds);
	fprintf(f, "infer_bytes_read,%llu\n", (unsigned long long)in->bytes_read);
	fprintf(f, "infer_allocations,%llu\n", (unsigned long long)in->allocations);
	fprintf(f, "infer_budget_hits,%llu\n", (unsigned long long)in->budget_hits);
	fprintf(f, "inferred_unattributed_bytes,%llu\n", (unsigned long long)in->unattributed);
	for (unsigned int i = 0; i < in->n; i++) {
		fprintf(f, "inferred_bytes:");
		csv_put_field(f, in->by[i].name);
		fprintf(f, ",%llu\n", (unsigned long long)in->by[i].bytes);
	}
}

static void write_oom_comps(FILE *f, unsigned int k, const char *what,
			    const struct sink_oom_comp *total, const struct sink_oom_comp *c,
			    unsigned int n, bool growth)
{
	fprintf(f, RUN_OOM_PREFIX "%u_%s:total,%lld\n", k, what,
		(long long)(growth ? total->growth : total->rss));
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, RUN_OOM_PREFIX "%u_%s:", k, what);
		csv_put_field(f, c[i].name);
		fprintf(f, ",%lld\n", (long long)(growth ? c[i].growth : c[i].rss));
	}
}

/*
 * The OOM post-mortem: how many kills, and each kept one's figures (keys:
 * columns.h). The victim's and the job's split at its last sample, and
 * the victim's growth before it.
 */
void csv_write_oom_info(FILE *f, bool watched, const struct sink_oom *ooms, unsigned int nooms)
{
	fprintf(f, RUN_OOM_WATCHED ",%d\n", watched);
	fprintf(f, RUN_OOM_KILLS ",%u\n", nooms);
	for (unsigned int i = 0; ooms && i < nooms && i < CSV_OOM_KEEP; i++) {
		const struct sink_oom *o = &ooms[i];
		unsigned int k = i + 1;

		if (o->rank >= 0)
			fprintf(f, RUN_OOM_PREFIX "%u_rank,%d\n", k, o->rank);
		else
			fprintf(f, RUN_OOM_PREFIX "%u_rank,\n", k);
		fprintf(f, RUN_OOM_PREFIX "%u_pid,%d\n", k, (int)o->pid);
		fprintf(f, RUN_OOM_PREFIX "%u_time_s,%.3f\n", k, o->time);
		fprintf(f, RUN_OOM_PREFIX "%u_kind,%s\n", k, o->cgroup ? "cgroup" : "global");
		fprintf(f, RUN_OOM_PREFIX "%u_limit_bytes,%llu\n", k, (unsigned long long)o->limit_bytes);
		fprintf(f, RUN_OOM_PREFIX "%u_cgroup,", k);
		csv_put_field(f, o->cgroup_dir);
		fputc('\n', f);
		if (o->sample_time >= 0)
			fprintf(f, RUN_OOM_PREFIX "%u_sample_time_s,%.3f\n", k, o->sample_time);
		else
			fprintf(f, RUN_OOM_PREFIX "%u_sample_time_s,\n", k);
		fprintf(f, RUN_OOM_PREFIX "%u_window_s,%.3f\n", k, o->window_s);
		write_oom_comps(f, k, "rss_bytes", &o->total, o->by, o->n, false);
		write_oom_comps(f, k, "growth_bytes", &o->total, o->by, o->n, true);
		write_oom_comps(f, k, "job_rss_bytes", &o->job_total, o->job, o->njob, false);
	}
}

/*
 * run_info.csv: how the run went, as key,value rows -- when it began,
 * events seen and dropped, requests whose caller was not found, probes
 * placed. The report shows them; a user should never have to guess whether
 * figures are whole.
 */
static int write_run_info(struct csv_sink *cs, const struct sink_job *j)
{
	const struct sink_counters *c = &j->c;
	char tmp[256];
	FILE *f;

	f = outdir_begin_replace(cs->dir, FILE_RUN_INFO, tmp, sizeof(tmp));
	if (!f)
		return -1;
	fprintf(f, RUN_INFO_HEADER "\n");
	fprintf(f, "interval_ms,%u\n", j->interval_ms);
	if (j->problem_size > 0)
		fprintf(f, "problem_size,%.17g\n", j->problem_size);
	fprintf(f, "modes,%s\n", j->modes);
	fprintf(f, "duration_s,%.3f\n", j->now);
	fprintf(f, "events,%llu\n", (unsigned long long)c->events);
	fprintf(f, "dropped_events,%llu\n", (unsigned long long)c->dropped);
	/*
	 * The node service's jobs share one ring buffer: what this job lost of
	 * the node's drops, and how late its samples came (another job's
	 * storm shows here, in the job it starved).
	 */
	fprintf(f, "job_dropped_events,%llu\n", (unsigned long long)c->job_dropped);
	fprintf(f, "sample_gap_max_s,%.3f\n", c->sample_gap_max_s);
	fprintf(f, "samples_late,%llu\n", (unsigned long long)c->samples_late);
	fprintf(f, "samples_behind,%llu\n", (unsigned long long)c->samples_behind);
	fprintf(f, "stack_read_failures,%llu\n", (unsigned long long)c->stack_read_failures);
	fprintf(f, "rss_changes_without_cause,%llu\n", (unsigned long long)c->rss_without_cause);
	fprintf(f, "memory_requests,%llu\n", (unsigned long long)c->requests);
	fprintf(f, "unwind_failures,%llu\n", (unsigned long long)c->unwind_failures);
	fprintf(f, "unwind_fallbacks,%llu\n", (unsigned long long)c->unwind_fallbacks);
	fprintf(f, "interposer_hooks,%llu\n", (unsigned long long)c->interposer_hooks);
	fprintf(f, "unwind_us_per_request,%.1f\n",
		c->unwind_walks ? (double)c->unwind_walk_ns / (double)c->unwind_walks / 1e3 : 0.0);
	fprintf(f, "heap_blocks_untracked,%llu\n", (unsigned long long)c->heap_untracked);
	fprintf(f, "processes_refused,%llu\n", (unsigned long long)c->procs_refused);
	fprintf(f, "processes_traced,%llu\n", (unsigned long long)c->procs_traced);
	if (j->sampled)
		fprintf(f, "sampled_counts_touched,%llu\nsampled_counts_all,%llu\nsampled_count_ms,%.1f\n",
			(unsigned long long)c->recounts_touched, (unsigned long long)c->recounts,
			(double)c->recount_ns / 1e6);
	if (j->sampled)
		fprintf(f, "sampled_count_read_mib,%.1f\n", (double)c->recount_read_bytes / 1048576.0);
	fprintf(f, "processes_refused_map_full,%llu\n", (unsigned long long)c->traced_map_full);
	/* Files of this run that could not be written whole (a full disk): said on stderr too. */
	fprintf(f, "output_errors,%zu\n", cs->dir->nfailed);
	fprintf(f, "timelines_renamed,%u\n", cs->aside);
	fprintf(f, "events_unknown_pid,%llu\n", (unsigned long long)c->unknown_pid_events);
	fprintf(f, "events_unplaced,%llu\n", (unsigned long long)c->unplaced_events);
	fprintf(f, "events_of_ended_processes,%llu\n", (unsigned long long)c->ended_events);
	if (c->node_programs_on_demand)
		fprintf(f, "node_programs_wait_ms,%.1f\n", c->node_programs_wait_ms);
	/* tracepoints where fentry is refused, or after its load or links failed (syscall_hooks.h). */
	fprintf(f, "memory_calls,%s\n", j->memory_calls_fentry ? "fentry" : "tracepoints");
	write_inferred(f, &c->inferred);
	csv_write_oom_info(f, c->oom_watched, cs->ooms, cs->nooms);
	if (c->probing)
		fprintf(f, "probes_attached,%llu\nprobe_failures,%llu\n",
			(unsigned long long)c->probes_attached, (unsigned long long)c->probe_failures);
	/* time_s 0 on other clocks: align this run with other nodes or a sampler. */
	fprintf(f, "start_time_unix_s,%.6f\n", j->start_realtime);
	/* Which node and job: `merge` puts a job's nodes together by them. */
	fprintf(f, "hostname,");
	csv_put_field(f, j->node ? j->node : "");
	fprintf(f, "\njob,");
	csv_put_field(f, j->job ? j->job : "");
	/* 1 once the run ended and every file is final: what the SPANK plugin waits for before merging. */
	fprintf(f, "\nfinished,%d\n", j->finished);
	fprintf(f, "version,");
	csv_put_field(f, j->version);
	fprintf(f, "\ncommand_line,");
	csv_put_field(f, j->cmdline);
	fputc('\n', f);
	/* Synced once the job is over (finished,1); the rewrites before only replace each other. */
	return outdir_commit_as(cs->dir, f, tmp, FILE_RUN_INFO, j->finished);
}

/* summary.csv whole, or not at all (the previous one stays); durable: synced to disk. */
static int write_summary(struct csv_sink *cs, const struct sink_proc *const *live, size_t nlive,
			 bool durable)
{
	char tmp[256];
	FILE *f;

	f = outdir_begin_replace(cs->dir, FILE_SUMMARY, tmp, sizeof(tmp));
	if (!f)
		return -1;
	if (summary_write_header(f) || row_spool_copy(&cs->ended, f))
		goto fail;
	for (size_t i = 0; i < nlive; i++)
		if (write_proc_summary(f, live[i], oom_of(cs, live[i]->pid)))
			goto fail;
	return outdir_commit_as(cs->dir, f, tmp, FILE_SUMMARY, durable);
fail:
	outdir_abort(cs->dir, f, tmp);
	return -1;
}

static void csv_job_summary(struct sink *s, const struct sink_job *j,
			    const struct sink_proc *const *live, size_t nlive)
{
	struct csv_sink *cs = (struct csv_sink *)s;

	/* Each is tried every time: a disk with room again gets both whole. */
	errno = 0;
	if (write_run_info(cs, j))
		outdir_write_failed(cs->dir, FILE_RUN_INFO, errno ? errno : EIO, NULL);
	errno = 0;
	if (write_summary(cs, live, nlive, j->finished))
		outdir_write_failed(cs->dir, FILE_SUMMARY, errno ? errno : EIO,
				    cs->ended.err ? "ended processes' rows are lost" : NULL);
}

static void csv_job_oom(struct sink *s, const struct sink_job *j, const struct sink_oom *o)
{
	struct csv_sink *cs = (struct csv_sink *)s;

	(void)j;
	if (!cs->ooms)
		cs->ooms = calloc(CSV_OOM_KEEP, sizeof(*cs->ooms));
	/* Counted even when it cannot be kept: oom_kills is never short. */
	if (cs->ooms && cs->nooms < CSV_OOM_KEEP)
		cs->ooms[cs->nooms] = *o;
	cs->nooms++;
}

static void csv_destroy(struct sink *s)
{
	struct csv_sink *cs = (struct csv_sink *)s;

	row_spool_close(&cs->ended);
	free(cs->ooms);
	free(cs);
}

static const struct sink_ops csv_ops = {
	.proc_sample = csv_proc_sample,
	.proc_end = csv_proc_end,
	.job_summary = csv_job_summary,
	.job_oom = csv_job_oom,
	.destroy = csv_destroy,
};

struct sink *csv_sink_new(struct output_dir *dir, bool compress)
{
	struct csv_sink *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->compress = compress;
	cs->base.ops = &csv_ops;
	cs->dir = dir;
	return &cs->base;
}
