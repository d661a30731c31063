// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exposition of the node's metrics (metrics.h): Prometheus text 0.0.4
 * or OpenMetrics 1.0, each job folded (metrics_fold.c) once per render.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "metrics.h"
#include "metrics_fold.h"

enum mx_type { MX_GAUGE, MX_COUNTER, MX_INFO };

/*
 * A family's header. base is the name without "_total"/"_info": OpenMetrics
 * names the family so, the 0.0.4 text format names it as its samples.
 */
static void family(FILE *f, bool om, const char *base, enum mx_type type, const char *unit,
		   const char *help)
{
	static const char *const suffix[] = { "", "_total", "_info" };
	static const char *const om_type[] = { "gauge", "counter", "info" };
	static const char *const text_type[] = { "gauge", "counter", "gauge" };
	const char *name_suffix = om ? "" : suffix[type];

	fprintf(f, "# HELP %s%s %s\n", base, name_suffix, help);
	fprintf(f, "# TYPE %s%s %s\n", base, name_suffix, om ? om_type[type] : text_type[type]);
	if (om && unit)
		fprintf(f, "# UNIT %s %s\n", base, unit);
}

/* A job's identity on every series of it: the ID, and whose claim of the ID. */
static void job_labels(FILE *f, const char *name, const char *id, uid_t uid)
{
	fprintf(f, "%s{job=\"", name);
	metrics_put_label(f, id);
	fprintf(f, "\",uid=\"%u\"", (unsigned int)uid);
}

struct page {
	FILE *f;
	bool om;
	const struct metrics *m;
	const struct mx_folded *fos;	/* one per job, in m->jobs' order */
};

static void info_family(const struct page *pg)
{
	FILE *f = pg->f;

	family(f, pg->om, "memattr_job", MX_INFO, NULL,
	       "A job traced on this node: its owner's name (the other series carry job and uid).");
	for (const struct mx_job *j = pg->m->jobs; j; j = j->next) {
		job_labels(f, "memattr_job_info", j->id, j->uid);
		fputs(",user=\"", f);
		metrics_put_label(f, j->user);
		fputs("\"} 1\n", f);
	}
}

static void job_family(const struct page *pg, const char *name, int which, const char *help)
{
	size_t ji = 0;

	family(pg->f, pg->om, name, MX_GAUGE, "bytes", help);
	for (const struct mx_job *j = pg->m->jobs; j; j = j->next, ji++) {
		const struct mx_folded *fo = &pg->fos[ji];

		for (size_t k = 0; k < fo->nnames; k++) {
			job_labels(pg->f, name, j->id, j->uid);
			fputs(",component=\"", pg->f);
			metrics_put_label(pg->f, fo->names[k]);
			fprintf(pg->f, "\"} %" PRId64 "\n", fo->job[k * MXV_NR + which]);
		}
	}
}

static void job_rank_peak(const struct page *pg)
{
	size_t ji = 0;

	family(pg->f, pg->om, "memattr_job_rank_peak_resident_bytes", MX_GAUGE, "bytes",
	       "Largest peak resident bytes of one live rank of the job on this node so far.");
	for (const struct mx_job *j = pg->m->jobs; j; j = j->next, ji++) {
		job_labels(pg->f, "memattr_job_rank_peak_resident_bytes", j->id, j->uid);
		fprintf(pg->f, "} %" PRId64 "\n", pg->fos[ji].rank_peak);
	}
}

/* One job's storm fills the ring for every job: what each job lost, its own. */
static void job_dropped_family(const struct page *pg)
{
	family(pg->f, pg->om, "memattr_job_events_dropped", MX_COUNTER, NULL,
	       "Kernel events of the job's processes lost (ring buffer full).");
	for (const struct mx_job *j = pg->m->jobs; j; j = j->next) {
		job_labels(pg->f, "memattr_job_events_dropped_total", j->id, j->uid);
		fprintf(pg->f, "} %" PRIu64 "\n", j->dropped);
	}
}

static void rank_family(const struct page *pg, const char *name, int which, const char *help)
{
	FILE *f = pg->f;
	size_t ji = 0;

	family(f, pg->om, name, MX_GAUGE, "bytes", help);
	for (const struct mx_job *j = pg->m->jobs; j; j = j->next, ji++) {
		const struct mx_folded *fo = &pg->fos[ji];

		for (size_t g = 0; g < fo->ngroups; g++) {
			for (size_t k = 0; k < fo->nnames; k++) {
				job_labels(f, name, j->id, j->uid);
				fputs(",step=\"", f);
				metrics_put_label(f, fo->groups[g].step);
				if (fo->groups[g].rank < 0)
					fputs("\",rank=\"other\",component=\"", f);
				else
					fprintf(f, "\",rank=\"%d\",component=\"", fo->groups[g].rank);
				metrics_put_label(f, fo->names[k]);
				fprintf(f, "\"} %" PRId64 "\n", fo->v[(g * fo->nnames + k) * MXV_NR + which]);
			}
		}
	}
}

static void folded_family(const struct page *pg)
{
	size_t ji = 0;

	family(pg->f, pg->om, "memattr_job_ranks_folded", MX_GAUGE, NULL,
	       "Ranks of the job summed under rank=\"other\": past the per-job cap of rank series.");
	for (const struct mx_job *j = pg->m->jobs; j; j = j->next, ji++) {
		job_labels(pg->f, "memattr_job_ranks_folded", j->id, j->uid);
		fprintf(pg->f, "} %u\n", pg->fos[ji].folded);
	}
}

static void oom_family(FILE *f, bool om, const struct metrics *m)
{
	family(f, om, "memattr_oom_kills", MX_COUNTER, NULL,
	       "Processes of a job the OOM killer chose, by rank.");
	for (unsigned int i = 0; i < m->noom; i++) {
		job_labels(f, "memattr_oom_kills_total", m->oom[i].job, m->oom[i].uid);
		if (m->oom[i].rank < 0)
			fputs(",rank=\"other", f);
		else
			fprintf(f, ",rank=\"%d", m->oom[i].rank);
		fprintf(f, "\"} %" PRIu64 "\n", m->oom[i].kills);
	}
}

static void scalar(FILE *f, bool om, const char *base, enum mx_type type, const char *unit,
		   const char *help, uint64_t v)
{
	family(f, om, base, type, unit, help);
	fprintf(f, "%s%s %" PRIu64 "\n", base, type == MX_COUNTER ? "_total" : "", v);
}

static void self_metrics(FILE *f, bool om, const struct mx_self *s)
{
	static const char *const reasons[MX_REFUSED_NR] = { "max_jobs", "max_procs", "map_full",
								    "max_jobs_per_user", "spool_dirs_per_user" };

	scalar(f, om, "memattr_events", MX_COUNTER, NULL, "Kernel events read.", s->events);
	scalar(f, om, "memattr_events_dropped", MX_COUNTER, NULL,
	       "Kernel events lost (ring buffer full).", s->dropped);
	scalar(f, om, "memattr_unwind_failures", MX_COUNTER, NULL,
	       "Memory requests whose requesting code was not found.", s->unwind_failures);
	scalar(f, om, "memattr_execs_examined", MX_COUNTER, NULL,
	       "Execs of untraced processes whose environment was read for a job ID.", s->execs_examined);
	scalar(f, om, "memattr_node_programs_attached", MX_GAUGE, NULL,
	       "1 while the node-wide programs (the memory syscalls' tracepoints, which every syscall of the node pays for) are attached.",
	       s->node_programs);
	scalar(f, om, "memattr_node_program_attaches", MX_COUNTER, NULL,
	       "Times the node-wide programs were attached (a job started on an idle node).",
	       s->node_program_attaches);
	scalar(f, om, "memattr_execs_skipped", MX_COUNTER, NULL,
	       "Execs of untraced processes with no job variable and no Slurm job cgroup, not read.",
	       s->execs_skipped);
	scalar(f, om, "memattr_execs_undecided", MX_COUNTER, NULL,
	       "Execs of untraced processes the kernel could not judge (environment too long, a failed read), read.",
	       s->execs_undecided);
	scalar(f, om, "memattr_jobs", MX_GAUGE, NULL, "Jobs traced now.", s->jobs);
	scalar(f, om, "memattr_processes", MX_GAUGE, NULL, "Processes traced now.", s->processes);
	family(f, om, "memattr_refused", MX_COUNTER, NULL,
	       "Jobs or processes not traced, by reason (a cap was reached).");
	for (int i = 0; i < MX_REFUSED_NR; i++)
		fprintf(f, "memattr_refused_total{reason=\"%s\"} %" PRIu64 "\n", reasons[i], s->refused[i]);
	family(f, om, "memattr_bpf_map_entries", MX_GAUGE, NULL, "Entries in a kernel map now.");
	for (size_t i = 0; i < s->nmaps; i++) {
		fputs("memattr_bpf_map_entries{map=\"", f);
		metrics_put_label(f, s->maps[i].name);
		fprintf(f, "\"} %" PRIu64 "\n", s->maps[i].entries);
	}
	family(f, om, "memattr_bpf_map_max_entries", MX_GAUGE, NULL, "Capacity of a kernel map.");
	for (size_t i = 0; i < s->nmaps; i++) {
		fputs("memattr_bpf_map_max_entries{map=\"", f);
		metrics_put_label(f, s->maps[i].name);
		fprintf(f, "\"} %" PRIu64 "\n", s->maps[i].max);
	}
	family(f, om, "memattr_daemon_resident_bytes", MX_GAUGE, "bytes", "Resident bytes of the service itself.");
	fprintf(f, "memattr_daemon_resident_bytes %" PRId64 "\n", s->rss_bytes);
	family(f, om, "memattr_daemon_cpu_seconds", MX_COUNTER, "seconds",
	       "CPU time (user and system) the service used.");
	fprintf(f, "memattr_daemon_cpu_seconds_total %.3f\n", s->cpu_seconds);
	family(f, om, "memattr_build", MX_INFO, NULL, "The service's version.");
	fputs("memattr_build_info{version=\"", f);
	metrics_put_label(f, s->version ? s->version : "");
	fputs("\"} 1\n", f);
	if (s->attribution) {
		family(f, om, "memattr_attribution", MX_INFO, NULL,
		       "How pages get their owner: sampled (counted at samples) or exact (at each fault).");
		fputs("memattr_attribution_info{mode=\"", f);
		metrics_put_label(f, s->attribution);
		fputs("\"} 1\n", f);
	}
	if (s->memory_calls) {
		family(f, om, "memattr_memory_calls", MX_INFO, NULL,
		       "How the memory syscalls reach the service: fentry (on their own functions) or tracepoints "
		       "(every syscall of the node then takes the kernel's traced path).");
		fputs("memattr_memory_calls_info{hooks=\"", f);
		metrics_put_label(f, s->memory_calls);
		fputs("\"} 1\n", f);
	}
}

int metrics_render(FILE *f, const struct metrics *m, const struct mx_self *self, bool om)
{
	bool ranks = m->detail == MX_DETAIL_RANK;
	unsigned int cap = m->max_ranks ? m->max_ranks : METRICS_DEFAULT_MAX_RANKS;
	struct mx_folded *fos;
	struct page pg;
	size_t njobs = 0, i;
	int ret = 0;

	for (const struct mx_job *j = m->jobs; j; j = j->next)
		njobs++;
	fos = calloc(njobs ? njobs : 1, sizeof(*fos));
	if (!fos)
		return -ENOMEM;
	i = 0;
	/* Per-job figures need no rank series: no cap, so none is folded. */
	for (const struct mx_job *j = m->jobs; j; j = j->next, i++)
		if (mx_fold_job(j, ranks ? cap : 0, &fos[i])) {
			ret = -ENOMEM;
			goto out;
		}
	pg = (struct page){ f, om, m, fos };
	/* A family's samples stay together, whatever the job. */
	info_family(&pg);
	job_family(&pg, "memattr_job_resident_bytes", MXV_RSS,
		   "Resident bytes of every process of the job on this node, by component.");
	job_family(&pg, "memattr_job_proportional_bytes", MXV_PSS,
		   "Proportional set size of every process of the job on this node, by component.");
	job_rank_peak(&pg);
	job_dropped_family(&pg);
	if (ranks) {
		rank_family(&pg, "memattr_rank_resident_bytes", MXV_RSS,
			    "Resident bytes of a rank, by component (the CSV's rss_bytes).");
		rank_family(&pg, "memattr_rank_proportional_bytes", MXV_PSS,
			    "Proportional set size of a rank, by component (the CSV's pss_bytes).");
		rank_family(&pg, "memattr_rank_peak_resident_bytes", MXV_PEAK,
			    "Largest resident bytes of a rank so far, by component.");
		folded_family(&pg);
	}
	oom_family(f, om, m);
	if (self)
		self_metrics(f, om, self);
	if (om)
		fputs("# EOF\n", f);
out:
	for (size_t k = 0; k < njobs; k++)
		mx_fold_free(&fos[k]);
	free(fos);
	return ret ? ret : (ferror(f) ? -EIO : 0);
}
