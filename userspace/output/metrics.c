// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

struct mx_job *metrics_job_add(struct metrics *m, const char *id, const char *user)
{
	struct mx_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = strdup(id ? id : "");
	j->user = strdup(user ? user : "");
	if (!j->id || !j->user) {
		free(j->id);
		free(j->user);
		free(j);
		return NULL;
	}
	j->next = m->jobs;
	m->jobs = j;
	return j;
}

void metrics_oom_count(struct metrics *m, const char *job, int rank)
{
	struct mx_oom *o;

	if (rank < 0)
		rank = -1;
	for (unsigned int i = 0; i < m->noom; i++)
		if (m->oom[i].rank == rank && !strncmp(m->oom[i].job, job ? job : "", sizeof(o->job) - 1)) {
			m->oom[i].kills++;
			return;
		}
	if (m->noom < METRICS_OOM_KEEP) {
		o = &m->oom[m->noom++];
	} else {
		o = &m->oom[m->oom_next];
		m->oom_next = (m->oom_next + 1) % METRICS_OOM_KEEP;
	}
	snprintf(o->job, sizeof(o->job), "%s", job ? job : "");
	o->rank = rank;
	o->kills = 1;
}

static void proc_free(struct mx_proc *p)
{
	free(p->comps);
	free(p);
}

void metrics_job_remove(struct metrics *m, struct mx_job *j)
{
	struct mx_job **pp;

	for (pp = &m->jobs; *pp && *pp != j; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = j->next;
	while (j->procs) {
		struct mx_proc *p = j->procs;

		j->procs = p->next;
		proc_free(p);
	}
	free(j->id);
	free(j->user);
	free(j);
}

int metrics_proc_update(struct mx_job *j, struct mx_proc **slot, int rank, const char *step,
			const struct mx_comp *total, const struct mx_comp *comps, size_t n)
{
	struct mx_proc *p = *slot;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->next = j->procs;
		if (p->next)
			p->next->pprev = &p->next;
		p->pprev = &j->procs;
		j->procs = p;
		*slot = p;
	}
	if (n > p->cap) {
		struct mx_comp *c = realloc(p->comps, n * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->comps = c;
		p->cap = n;
	}
	p->rank = rank;
	snprintf(p->step, sizeof(p->step), "%s", step ? step : "");
	p->total = *total;
	memcpy(p->comps, comps, n * sizeof(*comps));
	p->ncomps = n;
	return 0;
}

void metrics_proc_remove(struct mx_proc **slot)
{
	struct mx_proc *p = *slot;

	if (!p)
		return;
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	proc_free(p);
	*slot = NULL;
}

/*
 * Length of the valid UTF-8 sequence at p (1-4), 0 when p does not start
 * one: a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned int c = p[0], cp;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;	/* also the terminating NUL: cut short */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * A label value as the text format wants it: valid UTF-8 (a job ID or a
 * step is whatever bytes a user's environment held, and one invalid byte
 * makes Prometheus reject the whole page, every job's series with it),
 * each invalid byte written as the four characters \xHH and a backslash of
 * the ID's own as two (so that the bytes 0xff and the text "\xff" stay
 * distinct), then backslash, quote and newline escaped for the format.
 */
void metrics_put_label(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	while (*p) {
		size_t n = utf8_len(p);

		if (!n) {
			fprintf(f, "\\\\x%02x", *p++);
			continue;
		}
		if (*p == '\\')
			fputs("\\\\\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

/* ---- one job, folded: rank groups x output components ---- */

enum { V_RSS, V_PSS, V_PEAK, V_NR };

struct rank_key {
	const char *step;	/* the process's own, valid while the job is rendered */
	int rank;		/* -1: "other" */
};

struct folded {
	const char **names;	/* output components: "total", the kept ones, then "other" */
	size_t nnames;
	struct rank_key *ranks;	/* rank groups by step, ranks ascending, -1 ("other") last */
	size_t nranks;
	int64_t *v;		/* [rank group][name][V_*] */
	int64_t *job;		/* [name][V_*]: every process of the job */
};

struct comp_sum {
	const char *name;
	int64_t rss;
};

static int by_rss_desc(const void *a, const void *b)
{
	const struct comp_sum *x = a, *y = b;

	if (x->rss != y->rss)
		return x->rss < y->rss ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_rank(const void *a, const void *b)
{
	const struct rank_key *p = a, *q = b;
	int x = p->rank, y = q->rank, s = strcmp(p->step, q->step);

	if (s)
		return s;
	/* -1 ("other") sorts last. */
	if ((x < 0) != (y < 0))
		return x < 0 ? 1 : -1;
	return (x > y) - (x < y);
}

static struct rank_key key_of(const struct mx_proc *p)
{
	return (struct rank_key){ p->step, p->rank < 0 ? -1 : p->rank };
}

static bool same_key(struct rank_key a, struct rank_key b)
{
	return a.rank == b.rank && !strcmp(a.step, b.step);
}

static ssize_t find_name(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (ssize_t)i;
	return -1;
}

static void fold_free(struct folded *fo)
{
	free(fo->names);
	free(fo->ranks);
	free(fo->v);
	free(fo->job);
}

/* The components kept: the job's largest by resident bytes, summed over its processes. */
static int pick_names(const struct mx_job *j, struct folded *fo)
{
	struct comp_sum *sums = NULL;
	size_t nsums = 0, cap = 0, nkept;
	bool folds;

	for (const struct mx_proc *p = j->procs; p; p = p->next) {
		for (size_t i = 0; i < p->ncomps; i++) {
			size_t k;

			for (k = 0; k < nsums && strcmp(sums[k].name, p->comps[i].name); k++)
				;
			if (k == nsums) {
				if (nsums == cap) {
					struct comp_sum *n;

					cap = cap ? cap * 2 : 32;
					n = realloc(sums, cap * sizeof(*n));
					if (!n) {
						free(sums);
						return -ENOMEM;
					}
					sums = n;
				}
				sums[nsums++] = (struct comp_sum){ p->comps[i].name, 0 };
			}
			sums[k].rss += p->comps[i].rss;
		}
	}
	if (nsums > 1)
		qsort(sums, nsums, sizeof(*sums), by_rss_desc);
	nkept = nsums < METRICS_TOP_COMPONENTS ? nsums : METRICS_TOP_COMPONENTS;
	folds = nsums > nkept;
	fo->names = calloc(nkept + 2, sizeof(*fo->names));
	if (!fo->names) {
		free(sums);
		return -ENOMEM;
	}
	fo->names[fo->nnames++] = "total";
	for (size_t i = 0; i < nkept; i++) {
		/* A component really named "other" shares the folded series. */
		if (!strcmp(sums[i].name, "other"))
			folds = true;
		else if (strcmp(sums[i].name, "total"))
			fo->names[fo->nnames++] = sums[i].name;
	}
	if (folds)
		fo->names[fo->nnames++] = "other";
	free(sums);
	return 0;
}

static int pick_ranks(const struct mx_job *j, struct folded *fo)
{
	size_t n = 0;

	for (const struct mx_proc *p = j->procs; p; p = p->next)
		n++;
	fo->ranks = calloc(n ? n : 1, sizeof(*fo->ranks));
	if (!fo->ranks)
		return -ENOMEM;
	for (const struct mx_proc *p = j->procs; p; p = p->next) {
		struct rank_key r = key_of(p);
		size_t k;

		for (k = 0; k < fo->nranks && !same_key(fo->ranks[k], r); k++)
			;
		if (k == fo->nranks)
			fo->ranks[fo->nranks++] = r;
	}
	if (fo->nranks > 1)
		qsort(fo->ranks, fo->nranks, sizeof(*fo->ranks), by_rank);
	return 0;
}

static void add_comp(struct folded *fo, size_t g, const struct mx_comp *c, bool is_total)
{
	ssize_t k = is_total ? 0 : find_name(fo->names + 1, fo->nnames - 1, c->name);
	int64_t *v;

	if (!is_total)
		k = k < 0 ? find_name(fo->names, fo->nnames, "other") : k + 1;
	if (k < 0)
		return;
	v = fo->v + (g * fo->nnames + (size_t)k) * V_NR;
	v[V_RSS] += c->rss;
	v[V_PSS] += c->pss;
	v[V_PEAK] += c->peak_rss;
	v = fo->job + (size_t)k * V_NR;
	v[V_RSS] += c->rss;
	v[V_PSS] += c->pss;
	v[V_PEAK] += c->peak_rss;
}

static int fold_job(const struct mx_job *j, struct folded *fo)
{
	memset(fo, 0, sizeof(*fo));
	if (pick_names(j, fo) || pick_ranks(j, fo))
		goto fail;
	fo->v = calloc((fo->nranks ? fo->nranks : 1) * fo->nnames * V_NR, sizeof(*fo->v));
	fo->job = calloc(fo->nnames * V_NR, sizeof(*fo->job));
	if (!fo->v || !fo->job)
		goto fail;
	for (const struct mx_proc *p = j->procs; p; p = p->next) {
		struct rank_key r = key_of(p);
		size_t g;

		for (g = 0; !same_key(fo->ranks[g], r); g++)
			;
		add_comp(fo, g, &p->total, true);
		for (size_t i = 0; i < p->ncomps; i++)
			add_comp(fo, g, &p->comps[i], false);
	}
	return 0;
fail:
	fold_free(fo);
	return -ENOMEM;
}

/* ---- exposition ---- */

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

static void job_labels(FILE *f, const struct mx_job *j)
{
	fputs("job=\"", f);
	metrics_put_label(f, j->id);
	fputs("\",user=\"", f);
	metrics_put_label(f, j->user);
	fputc('"', f);
}

static void rank_family(FILE *f, bool om, const struct metrics *m, const struct folded *fos,
			const char *name, int which, const char *help)
{
	size_t ji = 0;

	family(f, om, name, MX_GAUGE, "bytes", help);
	for (const struct mx_job *j = m->jobs; j; j = j->next, ji++) {
		const struct folded *fo = &fos[ji];

		for (size_t g = 0; g < fo->nranks; g++) {
			for (size_t k = 0; k < fo->nnames; k++) {
				fprintf(f, "%s{", name);
				job_labels(f, j);
				fputs(",step=\"", f);
				metrics_put_label(f, fo->ranks[g].step);
				if (fo->ranks[g].rank < 0)
					fputs("\",rank=\"other\",component=\"", f);
				else
					fprintf(f, "\",rank=\"%d\",component=\"", fo->ranks[g].rank);
				metrics_put_label(f, fo->names[k]);
				fprintf(f, "\"} %" PRId64 "\n",
					fo->v[(g * fo->nnames + k) * V_NR + which]);
			}
		}
	}
}

static void job_family(FILE *f, bool om, const struct metrics *m, const struct folded *fos)
{
	size_t ji = 0;

	family(f, om, "memattr_job_resident_bytes", MX_GAUGE, "bytes",
	       "Resident bytes of every process of the job on this node, by component.");
	for (const struct mx_job *j = m->jobs; j; j = j->next, ji++) {
		for (size_t k = 0; k < fos[ji].nnames; k++) {
			fputs("memattr_job_resident_bytes{", f);
			job_labels(f, j);
			fputs(",component=\"", f);
			metrics_put_label(f, fos[ji].names[k]);
			fprintf(f, "\"} %" PRId64 "\n", fos[ji].job[k * V_NR + V_RSS]);
		}
	}
}

static void oom_family(FILE *f, bool om, const struct metrics *m)
{
	family(f, om, "memattr_oom_kills", MX_COUNTER, NULL,
	       "Processes of a job the OOM killer chose, by rank.");
	for (unsigned int i = 0; i < m->noom; i++) {
		fputs("memattr_oom_kills_total{job=\"", f);
		metrics_put_label(f, m->oom[i].job);
		if (m->oom[i].rank < 0)
			fputs("\",rank=\"other", f);
		else
			fprintf(f, "\",rank=\"%d", m->oom[i].rank);
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
}

int metrics_render(FILE *f, const struct metrics *m, const struct mx_self *self, bool om)
{
	struct folded *fos;
	size_t njobs = 0, i;
	int ret = 0;

	for (const struct mx_job *j = m->jobs; j; j = j->next)
		njobs++;
	fos = calloc(njobs ? njobs : 1, sizeof(*fos));
	if (!fos)
		return -ENOMEM;
	i = 0;
	for (const struct mx_job *j = m->jobs; j; j = j->next, i++)
		if (fold_job(j, &fos[i])) {
			ret = -ENOMEM;
			goto out;
		}
	/* A family's samples stay together, whatever the job. */
	rank_family(f, om, m, fos, "memattr_rank_resident_bytes", V_RSS,
		    "Resident bytes of a rank, by component (the CSV's rss_bytes).");
	rank_family(f, om, m, fos, "memattr_rank_proportional_bytes", V_PSS,
		    "Proportional set size of a rank, by component (the CSV's pss_bytes).");
	rank_family(f, om, m, fos, "memattr_rank_peak_resident_bytes", V_PEAK,
		    "Largest resident bytes of a rank so far, by component.");
	job_family(f, om, m, fos);
	oom_family(f, om, m);
	if (self)
		self_metrics(f, om, self);
	if (om)
		fputs("# EOF\n", f);
out:
	for (size_t k = 0; k < njobs; k++)
		fold_free(&fos[k]);
	free(fos);
	return ret ? ret : (ferror(f) ? -EIO : 0);
}
