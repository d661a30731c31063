// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>

#include "infer_attach.h"
#include "job_view.h"
#include "tracker.h"

/* run_info's modes: the opt-in probes, and the attribution when it is not exact. */
static const char *modes_name(const struct options *o)
{
	if (o->sampled)
		return o->heap ? "heap sampled" : "sampled";	/* --mpi-calls needs exact (cli.c) */
	return o->mpi_calls && o->heap ? "mpi-calls heap" :
	       o->mpi_calls ? "mpi-calls" : o->heap ? "heap" : "";
}

/*
 * Records of the job were lost: a region an unseen request replaced would
 * keep its old owner for good, and, in either attribution, its pages are
 * what the lost records left them (exact: the faults lost are in no
 * region, an unmap lost leaves its region's pages counted), so each
 * process's mappings are read again at its next sample and checked
 * (lost_records.h). Exact mode needs the read as much as sampled: else
 * its regions stay wrong until its next read for PSS, which the smaps
 * budget and a steady process's stretch put off for many seconds (LULESH,
 * MPICH, 8 ranks: 1 630 records lost; for the last 12 s of the run,
 * rank 0's regions held ~10 MiB more `app` than it had, and every
 * component was scaled down to fit VmRSS: `app` 13.9 MiB, `mpi` 9.5,
 * against 8.7 and 13.2 in the sampled tool and the other ranks). The
 * count is per job, not per process: every process is read.
 */
static void records_lost(struct session *s)
{
	for (struct proc *p = s->procs.first; p; p = p->next) {
		p->records_lost = true;
		p->needs_sync = true;
	}
}

void tracker_exec_filter_counts(const struct tracker *t, uint64_t *skipped, uint64_t *undecided)
{
	*skipped = t->kstats[STAT_EXEC_SKIPPED];
	*undecided = t->kstats[STAT_EXEC_UNDECIDED];
}

void tracker_refresh_kstats(struct tracker *t)
{
	tracer_stats(&t->bpf, t->kstats);
	for (struct session *s = t->sessions; s; s = s->next) {
		uint64_t drops = tracer_job_drops(&t->bpf, s->id) - s->drops_base;

		if (drops > s->drops)
			records_lost(s);
		s->drops = drops;
	}
}

void tracker_note_sample(struct tracker *t, struct session *s, double now)
{
	double gap = now - s->last_sample;

	if (s->last_sample >= 0) {
		if (gap > s->max_sample_gap)
			s->max_sample_gap = gap;
		if (gap > 2 * t->opt->interval_ms / 1e3)
			s->late_samples++;
	}
	s->last_sample = now;
}

void tracker_job_view(struct tracker *t, const struct session *s, struct sink_job *j)
{
	const struct options *o = t->opt;

	memset(j, 0, sizeof(*j));
	j->id = s->job;
	j->job = s->job ? s->job : t->own_job;
	j->node = t->node;
	j->finished = s->ending;
	j->dir = s->out_open ? s->out.path : NULL;
	/* The job's own clock: the node service's jobs start after the tracker (session.h t0). */
	j->now = tracker_now(t) - s->t0;
	j->start_realtime = t->start_realtime + s->t0;
	j->interval_ms = o->interval_ms;
	j->problem_size = o->problem_size;
	j->modes = modes_name(o);
	j->sampled = o->sampled;
	j->memory_calls_fentry = t->bpf.syscall_fentry;
	j->version = MEMATTR_VERSION;
	j->cmdline = t->cmdline;
	session_counters(s, &j->c);
	/* The kernel side's counters are node-wide: one BPF object serves every job. */
	j->c.dropped = t->kstats[STAT_RINGBUF_DROPS];
	j->c.job_dropped = s->drops;
	j->c.sample_gap_max_s = s->max_sample_gap;
	j->c.samples_late = s->late_samples;
	j->c.samples_behind = s->behind_samples;
	j->c.stack_read_failures = t->kstats[STAT_STACK_READ_FAIL];
	j->c.rss_without_cause = t->kstats[STAT_NO_CTX_RSS];
	j->c.heap_untracked = t->kstats[STAT_HEAP_FULL];
	j->c.unknown_pid_events = t->unknown_pid_events;
	j->c.ended_events = t->ended_events;
	/* At fork in the kernel, or when user space adds a process found in /proc. */
	j->c.traced_map_full = t->kstats[STAT_TRACED_FULL] + t->map_full;
	j->c.output_errors = s->out_open ? s->out.nfailed : 0;
	j->c.probing = o->mpi_calls || o->heap;
	j->c.probes_attached = t->probes.attached;
	j->c.probe_failures = t->probes.failed;
	j->c.oom_watched = t->bpf.oom_watched;
	j->c.node_programs_on_demand = o->probes_on_demand;
	j->c.node_programs_wait_ms = s->probe_attach_ms;
	infer_attach_counters(t, s, &j->c.inferred);
}
