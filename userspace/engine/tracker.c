// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine: one BPF object for every session, its API (engine.h) and its
 * loop. An event goes to the session its process belongs to, then to its
 * process there (events.c); each sample round reads what events cannot
 * give (/proc) and hands the figures to the session's sinks (sample.c). A
 * process that exits is retired at once (retire.c): its figures go to the
 * sinks and its memory is freed. Here: the tracker made and freed,
 * sessions made and ended, the loop that samples, summarizes and ends
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "close_many.h"
#include "held_records.h"
#include "infer_attach.h"
#include "job_view.h"
#include "mode_counts.h"
#include "mode_views.h"
#include "probe_links.h"
#include "probe_warm.h"
#include "retire.h"
#include "sample.h"
#include "tracker.h"
#include "tracker_base.h"
#include "user_specs.h"

#define RESCAN_PERIOD_S		1.0	/* env-matched jobs: look for new processes */
#define SUMMARY_PERIOD_S	5.0	/* rewrite summary.csv while running */
#define KSTATS_PERIOD_S		0.5	/* kernel counters for the live outputs */
/* The last figures: what is in the ring is read, unless a storm never lets it empty. */
#define FINAL_DRAIN_S		2.0

/* The spec MPI function at offset off of file path in p (its catalogue number), 0: none. */
static uint32_t mpi_fn_at(void *ctx, const struct proc *p, const char *path, uint64_t off)
{
	struct tracker *t = ctx;
	const struct elfsym_table *syms;
	char root_path[PATH_MAX + 32];
	const char *name;
	uint64_t delta;

	/* The file as the process sees it: its root may be a container's. */
	snprintf(root_path, sizeof(root_path), "/proc/%d/root%s", p->pid, path);
	syms = symbol_cache_get(&t->probes.symbols, root_path);
	name = syms ? elfsym_name_at(syms, off, &delta) : NULL;
	return name ? mpi_catalog_id(&t->mpi_names, name) : 0;
}

static int tracker_init(struct tracker *t, const struct options *opt,
			const struct spec_set *specs, const char *cmdline, char *err, size_t errlen)
{
	struct tracer_modes modes = { 0 };

	t->opt = opt;
	t->specs = specs;
	t->cmdline = cmdline;
	t->self = getpid();
	t->next_id = 1;
	t->pss_period = opt->pss_interval_ms / 1000.0;
	t->probing = opt->mpi_calls || opt->heap;
	if (opt->nspecs)
		t->spec_mapped = calloc(specs->n ? specs->n : 1, sizeof(*t->spec_mapped));
	mpi_catalog_init(&t->mpi_names, specs);
	if (t->probing && probes_init(&t->probes, specs, &t->mpi_names, opt->mpi_calls, opt->heap,
				      opt->verbose, err, errlen)) {
		t->probing = false;
		return -1;
	}
	t->start_mono = tracker_mono_s();
	t->start_realtime = tracker_clock_s(CLOCK_REALTIME);
	node_name(t->node, sizeof(t->node));
	t->own_job = getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "";
	t->start_boot_ns = boot_clock_ns();
	modes.mpi_calls = opt->mpi_calls;
	modes.heap = opt->heap;
	modes.fault_frame = !opt->no_fault_frame;
	modes.rss_events = !opt->sampled;
	modes.on_demand = opt->probes_on_demand;
	modes.watch_exec = opt->watch_exec;
	probe_hold_init(&t->hold, opt->probe_hold_s);
	/* The per-job command's are attached with the rest, for the whole run. */
	if (!opt->probes_on_demand)
		probe_hold_done(&t->hold, PROBE_ATTACH, true);
	if (tracer_open(&t->bpf, opt->ringbuf_mb << 20, &modes, tracker_on_event, t,
			opt->verbose, err, errlen)) {
		if (t->probing)
			probes_free(&t->probes);
		t->probing = false;
		return -1;
	}
	if (t->probing)
		probes_prewarm(&t->probes, &t->bpf, specs);
	return 0;
}

struct tracker *tracker_new(const struct options *opt, const struct spec_set *specs,
			    const char *cmdline, char *err, size_t errlen)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (tracker_init(t, opt, specs, cmdline, err, errlen)) {
		free(t->spec_mapped);
		free(t);
		return NULL;
	}
	return t;
}

void tracker_free(struct tracker *t)
{
	free(t);
}

void tracker_set_hooks(struct tracker *t, const struct tracker_hooks *hooks)
{
	t->hooks = hooks;
}

int tracker_watch_exec(struct tracker *t, bool on)
{
	return tracer_watch_exec(&t->bpf, on);
}

void tracker_counters(const struct tracker *t, struct tracker_counters *c)
{
	*c = (struct tracker_counters){
		.events = t->events,
		.unknown_pid_events = t->unknown_pid_events,
		.ended_events = t->ended_events,
		.dropped = t->kstats[STAT_RINGBUF_DROPS],
		/* At fork in the kernel, or when user space adds a process found in /proc. */
		.traced_map_full = t->kstats[STAT_TRACED_FULL] + t->map_full,
		.output_errors = t->output_errors,
		.global_probes = t->hold.attached,
		.global_probe_attaches = t->hold.attaches,
	};
}

int tracker_map_fill(struct tracker *t, const char *map, uint64_t *entries, uint64_t *max)
{
	return tracer_map_fill(&t->bpf, map, entries, max);
}

bool tracker_traces(const struct tracker *t, pid_t pid)
{
	for (const struct session *s = t->sessions; s; s = s->next)
		if (session_find(s, pid))
			return true;
	return false;
}

struct session *tracker_first_session(const struct tracker *t)
{
	return t->sessions;
}

struct session *tracker_new_session(struct tracker *t, const char *job, enum job_match match)
{
	struct session *s = session_new(t->next_id, job, t->specs), **tail;

	if (!s)
		return NULL;
	t->next_id++;
	s->match = match;
	/* Its kernel slot may have served an older job (JOB_DROP_SLOTS): count from now. */
	s->drops_base = tracer_job_drops(&t->bpf, s->id);
	/*
	 * Every mode: a memory request made inside the MPI library is tagged
	 * with the outermost MPI function on its stack, so mpi_calls.csv has
	 * each function's growth without a probe (--mpi-calls adds the calls).
	 */
	s->cls.mpi_fn_at = mpi_fn_at;
	s->cls.mpi_fn_ctx = t;
	/* The sinks' stacks and heap sites are named with the same symbol tables. */
	s->mode_view = mode_view_fill;
	s->mode_view_free = mode_view_free;
	s->mode_view_ctx = t;
	/* The status line first: it must be erased before the summary prints. */
	if (!t->opt->quiet) {
		session_add_sink(s, status_sink_new());
		session_add_sink(s, term_sink_new());
	}
	for (tail = &t->sessions; *tail; tail = &(*tail)->next)
		;
	*tail = s;
	return s;
}

int tracker_open_output(struct tracker *t, struct session *s, const char *dir,
			char *err, size_t errlen)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	uid_t u = uid ? (uid_t)strtoul(uid, NULL, 10) : (uid_t)-1;
	gid_t g = gid ? (gid_t)strtoul(gid, NULL, 10) : (gid_t)-1;

	return tracker_open_output_as(t, s, dir, u, g, err, errlen);
}

int tracker_open_output_as(struct tracker *t, struct session *s, const char *dir,
			   uid_t u, gid_t g, char *err, size_t errlen)
{
	struct sink_job j;

	if (outdir_open(&s->out, dir, u, g, err, errlen))
		return -1;
	s->out_open = true;
	/* Every mode: growth per MPI function needs no probe (mpi_fn.h), each request's stack comes with its walk. */
	if (session_add_sink(s, csv_sink_new(&s->out, t->opt->compress)) ||
	    session_add_sink(s, mpi_calls_sink_new(&s->out)) ||
	    session_add_sink(s, alloc_stacks_sink_new(&s->out)) ||
	    (t->opt->heap && (session_add_sink(s, heap_sites_sink_new(&s->out)) ||
			      session_add_sink(s, heap_peak_sink_new(&s->out))))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tracker_job_view(t, s, &j);
	if (session_begin(s, &j)) {
		snprintf(err, errlen, "output %s: cannot begin writing", dir);
		return -1;
	}
	return 0;
}

/* Figures so far: the kernel's counts of the opt-in modes first (in the views), then the sinks' summaries. */
static void summarize(struct tracker *t, struct session *s)
{
	struct sink_job j;

	mode_counts_collect_live(t, s);
	tracker_job_view(t, s, &j);
	session_summary(s, &j);
}

static bool known_pid(void *ctx, pid_t pid)
{
	return tracker_find_proc(ctx, pid, NULL) != NULL;
}

/* Processes of the job that started without a traced ancestor. */
static void rescan_job(struct tracker *t, struct session *s)
{
	struct pid_list found = {0};

	/* Only the job owner's processes: another user's environment claims nothing. */
	if (job_scan_env(s->job, s->owner, t->self, known_pid, t, &found, NULL) == 0)
		for (size_t i = 0; i < found.n; i++)
			if (!retired_leaving(t, found.pids[i]))
				tracker_add_pid(t, s, found.pids[i], false);
	pid_list_free(&found);
}

/* Every process of s has ended (or tracing stops): its outputs finish, it is freed. */
static void end_session(struct tracker *t, struct session *s)
{
	struct session **pp;
	struct proc *p, *tmp;
	struct sink_job j;

	proc_table_for_each(&s->procs, p, tmp)
		retire(t, s, p);
	s->ending = true;
	summarize(t, s);
	tracker_job_view(t, s, &j);
	session_end(s, &j);
	if (s->out_open)
		t->output_errors += s->out.nfailed;
	if (t->hooks && t->hooks->session_ended)
		t->hooks->session_ended(t->hooks->ctx, t, s);
	for (pp = &t->sessions; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	infer_attach_forget(t, s);
	session_free(s);
}

int tracker_run(struct tracker *t, volatile sig_atomic_t *stop)
{
	double interval = t->opt->interval_ms / 1000.0, next = 0, last_kstats = -1;
	/* --duration is the user's time of tracing: reading what was held before (inference) is not part of it. */
	double started = tracker_now(t);

	while (!*stop) {
		double now = tracker_now(t);
		struct session *s, *sn;
		double wait_ms;
		int ret;

		if (now >= next) {
			held_records_round_begins(t, now);
			held_records_drain(t);
			if (now - last_kstats >= KSTATS_PERIOD_S) {
				tracker_refresh_kstats(t);
				last_kstats = now;
			}
			sample_sessions(t);
			for (s = t->sessions; s; s = sn) {
				sn = s->next;
				if (s->match == JOB_MATCH_ENV && now - s->last_scan >= RESCAN_PERIOD_S) {
					rescan_job(t, s);
					s->last_scan = now;
				}
				if (now - s->last_summary >= SUMMARY_PERIOD_S) {
					summarize(t, s);
					s->last_summary = now;
				}
				/*
				 * Its last process exited: the job is over (for the
				 * per-job command the last one ends in finish).
				 */
				if (!s->procs.n && (t->hooks || s != t->sessions || sn))
					end_session(t, s);
			}
			tracker_probes_tick(t, now);
			if (t->hooks) {
				/* The node service goes on without jobs. */
				if (t->hooks->tick)
					t->hooks->tick(t->hooks->ctx, t, now);
			} else if (!t->sessions || (!t->sessions->next && !t->sessions->procs.n)) {
				break;
			}
			if (t->opt->duration_s && now - started >= t->opt->duration_s)
				break;
			/* Stay on the grid: a slow sample does not shift later ones. */
			while (next <= now)
				next += interval;
		}
		/*
		 * A sample that took longer than the interval leaves next in the
		 * past: a negative timeout would block until the next event, for
		 * ever on an idle job (--duration was never checked again).
		 */
		wait_ms = (next - tracker_now(t)) * 1000 + 1;
		/* Records are read until the next sample is due, not until the ring is empty. */
		ret = tracer_poll(&t->bpf, wait_ms > 0 ? (int)wait_ms : 0, wait_ms >= 1 ? (int)wait_ms : 1);
		tracker_end_drain(t);
		if (tracer_watch_fired(&t->bpf))
			next = tracker_now(t);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "memattr-bpf: reading BPF events: %s\n", strerror(-ret));
			return -1;
		}
	}
	return 0;
}

int tracker_sample_on(struct tracker *t, int fd)
{
	return tracer_watch_fd(&t->bpf, fd);
}

void tracker_finish(struct tracker *t)
{
	struct session *s;
	struct proc *p;
	int *links = NULL;
	size_t nlinks = 0;

	sample_flush_runs(t);
	t->drain_until = tracker_now(t) + FINAL_DRAIN_S;
	held_records_drain(t);
	for (s = t->sessions; s; s = s->next) {
		struct sink_job j;
		double now = tracker_now(t);

		tracker_job_view(t, s, &j);
		j.now = now - s->t0;	/* the job's clock (session.h) */
		for (p = s->procs.first; p; p = p->next) {
			/* Stopped before the first round: the attach read's sample first, then the last. */
			session_attach_sample(s, p, &j);
			if (p->account && p->named && !p->oom_marked && proc_sample(p, &s->cls, now) == 0)
				session_sample(s, p, &j);
		}
	}
	tracker_refresh_kstats(t);
	/* Figures first, then every link detached at once (the maps go with tracer_close). */
	for (s = t->sessions; s; s = s->next)
		for (p = s->procs.first; p; p = p->next) {
			mode_counts_collect(t, p);
			if (probes_move_links(p, &links, &nlinks))
				probes_detach(p);
		}
	if (t->probing && probes_move_warm(&t->probes, &links, &nlinks))
		probes_close_warm(&t->probes);
	detach_after_exit();
	close_many(links, nlinks);
	free(links);
	/* Probes are gone: the figures collected above are final. */
	t->probing = false;
	tracer_close(&t->bpf);
	while (t->sessions)
		end_session(t, t->sessions);
	user_specs_warn(t);
	free(t->spec_mapped);
	t->spec_mapped = NULL;
	infer_attach_free(t);
	/* Also without probes: mpi_fn_at's symbol tables are cached there. */
	probes_free(&t->probes);
}
