// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"
#include "procfs.h"
#include "session.h"

_Static_assert(SINK_MAX <= PROC_OUT_SLOTS, "each sink needs a slot in struct proc");

struct session *session_new(uint32_t id, const char *job, const struct spec_set *specs)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = id;
	s->last_sample = -1;
	s->owner = JOB_ANY_UID;
	if (job && !(s->job = strdup(job))) {
		free(s);
		return NULL;
	}
	comp_table_init(&s->comps);
	classifier_init_table(&s->cls, specs, &s->comps);
	proc_table_init(&s->procs);
	s->out.dirfd = -1;
	return s;
}

void session_free(struct session *s)
{
	struct proc *p, *tmp;

	if (!s)
		return;
	proc_table_for_each(&s->procs, p, tmp) {
		proc_table_remove(&s->procs, p);
		proc_free(p);
	}
	proc_table_free(&s->procs);
	for (size_t i = 0; i < s->nsinks; i++)
		s->sinks[i]->ops->destroy(s->sinks[i]);
	if (s->out_open)
		outdir_close(&s->out);
	classifier_free(&s->cls);
	comp_table_free(&s->comps);
	free(s->job);
	free(s);
}

int session_add_sink(struct session *s, struct sink *k)
{
	if (!k)
		return 0;
	if (s->nsinks >= SINK_MAX) {
		k->ops->destroy(k);
		return -ENOSPC;
	}
	s->sinks[s->nsinks++] = k;
	return 0;
}

struct proc *session_add_proc(struct session *s, pid_t pid, double now)
{
	struct proc *p;

	if (s->procs.n >= SESSION_MAX_PROCS) {
		s->procs_refused++;
		return NULL;
	}
	p = proc_new(pid, now);
	if (!p)
		return NULL;
	if (proc_table_add(&s->procs, p)) {
		proc_free(p);
		return NULL;
	}
	s->procs_traced++;
	return p;
}

void session_counters(const struct session *s, struct sink_counters *c)
{
	const struct proc *p;

	c->events = s->events;
	c->rss_events = s->rss_events;
	c->syscall_events = s->syscall_events;
	c->requests = s->ended_requests;
	c->unwind_failures = s->ended_unwind_failures;
	c->unwind_walks = s->ended_walks;
	c->unwind_walk_ns = s->ended_walk_ns;
	c->unwind_fallbacks = s->ended_fallbacks;
	c->interposer_hooks = s->ended_hooks;
	c->unplaced_events = s->ended_unplaced;
	c->procs_traced = s->procs_traced;
	c->procs_refused = s->procs_refused;
	c->recounts = s->recounts;
	c->recounts_touched = s->recounts_touched;
	c->recount_ns = s->recount_ns;
	c->recount_read_bytes = s->recount_read_bytes;
	for (p = s->procs.first; p; p = p->next) {
		c->requests += p->requests;
		c->unwind_failures += p->unknown_callers;
		c->unwind_walks += p->code.walks;
		c->unwind_walk_ns += p->code.walk_ns;
		c->unwind_fallbacks += p->code.fallbacks;
		c->interposer_hooks += p->code.hooks_found;
		c->unplaced_events += p->unplaced_events;
	}
}

/* A tracker time on the job's own clock (t0: when its tracing began); never before 0. */
static double since(double t, double t0)
{
	return t > t0 ? t - t0 : 0;
}

static void fill_comp(struct sink_comp *c, const char *name, const struct comp_stats *st,
		      int64_t at_peak, double t0)
{
	*c = (struct sink_comp){
		.name = name, .rss = st->rss, .pss = st->pss,
		.peak_rss = st->peak_rss, .peak_pss = st->peak_pss,
		.peak_rss_time = since(st->peak_rss_time, t0),
		.peak_pss_time = since(st->peak_pss_time, t0),
		.rss_at_total_peak = at_peak,
	};
}

/* p as the sinks see it; comps must hold p->ncomps entries. */
static void view_of(const struct session *s, const struct proc *p, struct sink_proc *v,
		    struct sink_comp *comps)
{
	size_t n = 0;

	memset(v, 0, sizeof(*v));
	v->rank = p->rank;
	v->pid = p->pid;
	v->step = p->step;
	v->time = since(p->total.peak_rss_time, s->t0);
	fill_comp(&v->total, "total", &p->total, p->total.peak_rss, s->t0);
	v->peak_from_events = p->live.on;
	v->kernel_hwm = p->kernel_hwm;
	v->hwm_before_attach = p->image_before_attach;
	for (size_t i = 0; i < p->ncomps; i++)
		if (p->comps[i].seen)
			fill_comp(&comps[n++], comp_table_name(&s->comps, (comp_id)i), &p->comps[i],
				  p->peak_comp_rss[i], s->t0);
	v->comps = comps;
	v->ncomps = n;
}

static bool reported(const struct proc *p)
{
	return p->account && p->total.seen;
}

/* The opt-in modes' figures of p in its view (session.h mode_view). */
static void modes_of(const struct session *s, struct proc *p, struct sink_proc *v)
{
	if (s->mode_view)
		s->mode_view(s->mode_view_ctx, s, p, v);
}

static void modes_free(const struct session *s, struct sink_proc *v)
{
	if (s->mode_view_free)
		s->mode_view_free(v);
}

int session_begin(struct session *s, const struct sink_job *j)
{
	for (size_t i = 0; i < s->nsinks; i++) {
		int ret = s->sinks[i]->ops->job_begin ? s->sinks[i]->ops->job_begin(s->sinks[i], j) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

void session_sample(struct session *s, struct proc *p, const struct sink_job *j)
{
	struct sink_comp comps[p->ncomps ? p->ncomps : 1];
	struct sink_proc v;

	if (!reported(p))
		return;
	view_of(s, p, &v, comps);
	v.time = j->now;
	p->named = true;
	oom_note_sample(p, j->now);
	for (size_t i = 0; i < s->nsinks; i++) {
		v.state = &p->out_state[i];
		if (s->sinks[i]->ops->proc_sample)
			s->sinks[i]->ops->proc_sample(s->sinks[i], j, &v);
	}
}

void session_attach_sample(struct session *s, struct proc *p, const struct sink_job *j)
{
	struct sink_job at;

	if (!p->attach_pending)
		return;
	p->attach_pending = false;
	if (!p->account || p->named)
		return;
	/* The attach read's VmRSS, and what came after it set apart (a failed read since dropped its mark). */
	p->sample_mark_ns = p->attach_mark_ns;
	p->sample_total = p->attach_total;
	if (proc_account(p, &s->cls, p->attach_total, p->attach_time))
		return;
	at = *j;
	at.now = since(p->attach_time, s->t0);
	session_sample(s, p, &at);
}

/*
 * Without its exit record (tracing ends first, or the record was lost),
 * the kernel's peak is read from /proc while the process is still the one
 * traced.
 */
static void read_hwm(struct proc *p)
{
	struct proc_stat st;
	uint64_t hwm;

	if (p->kernel_hwm >= 0 || !p->start_ticks || procfs_read_stat(p->pid, &st) ||
	    st.starttime != p->start_ticks || procfs_read_hwm(p->pid, &hwm) ||
	    procfs_read_stat(p->pid, &st) || st.starttime != p->start_ticks)
		return;
	p->kernel_hwm = (int64_t)hwm;
}

static void end_proc(struct session *s, struct proc *p, const struct sink_job *j)
{
	struct sink_comp comps[p->ncomps ? p->ncomps : 1];
	struct sink_proc v;

	proc_finish_peak(p);
	if (reported(p))
		read_hwm(p);
	if (reported(p)) {
		view_of(s, p, &v, comps);
		modes_of(s, p, &v);
		v.time = j->now;
		for (size_t i = 0; i < s->nsinks; i++) {
			v.state = &p->out_state[i];
			if (s->sinks[i]->ops->proc_end)
				s->sinks[i]->ops->proc_end(s->sinks[i], j, &v);
		}
		modes_free(s, &v);
	}
	s->ended_requests += p->requests;
	s->ended_unwind_failures += p->unknown_callers;
	s->ended_walks += p->code.walks;
	s->ended_walk_ns += p->code.walk_ns;
	s->ended_fallbacks += p->code.fallbacks;
	s->ended_hooks += p->code.hooks_found;
	s->ended_unplaced += p->unplaced_events;
	proc_table_remove(&s->procs, p);
	proc_free(p);
}

void session_end_proc(struct session *s, struct proc *p, const struct sink_job *j)
{
	/* Gone before any round took its sample: the one its attach read took is its row. */
	session_attach_sample(s, p, j);
	/* Its view sized after that sample's components. */
	end_proc(s, p, j);
}

void session_oom(struct session *s, const struct sink_oom *o, const struct sink_job *j)
{
	s->oom_kills++;
	for (size_t i = 0; i < s->nsinks; i++)
		if (s->sinks[i]->ops->job_oom)
			s->sinks[i]->ops->job_oom(s->sinks[i], j, o);
}

void session_summary(struct session *s, const struct sink_job *j)
{
	size_t n = 0, ncomps = 0, used = 0;
	struct sink_proc *views, **live;
	struct sink_comp *comps;
	struct proc *p;

	for (p = s->procs.first; p; p = p->next)
		if (reported(p)) {
			n++;
			ncomps += p->ncomps;
		}
	views = calloc(n ? n : 1, sizeof(*views));
	live = calloc(n ? n : 1, sizeof(*live));
	comps = calloc(ncomps ? ncomps : 1, sizeof(*comps));
	if (!views || !live || !comps)
		goto out;
	n = 0;
	for (p = s->procs.first; p; p = p->next) {
		if (!reported(p))
			continue;
		view_of(s, p, &views[n], comps + used);
		modes_of(s, p, &views[n]);
		used += p->ncomps;
		live[n] = &views[n];
		n++;
	}
	for (size_t i = 0; i < s->nsinks; i++)
		if (s->sinks[i]->ops->job_summary)
			s->sinks[i]->ops->job_summary(s->sinks[i], j,
						      (const struct sink_proc *const *)live, n);
out:
	for (size_t i = 0; views && i < n; i++)
		modes_free(s, &views[i]);
	free(views);
	free(live);
	free(comps);
}

void session_end(struct session *s, const struct sink_job *j)
{
	for (size_t i = 0; i < s->nsinks; i++)
		if (s->sinks[i]->ops->job_end)
			s->sinks[i]->ops->job_end(s->sinks[i], j);
}

struct session *session_next(const struct session *s)
{
	return s->next;
}

const char *session_job(const struct session *s)
{
	return s->job;
}

uid_t session_owner(const struct session *s)
{
	return s->owner;
}

bool session_trusted(const struct session *s)
{
	return s->trusted;
}

void session_set_owner(struct session *s, uid_t owner, bool trusted)
{
	s->owner = owner;
	s->trusted = trusted;
}

void session_set_t0(struct session *s, double t0)
{
	s->t0 = t0;
}

size_t session_nprocs(const struct session *s)
{
	return s->procs.n;
}

const char *session_output_dir(const struct session *s)
{
	return s->out_open ? s->out.path : NULL;
}

int session_output_fd(const struct session *s)
{
	return s->out_open ? s->out.dirfd : -1;
}
