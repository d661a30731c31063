// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "modes_out.h"
#include "summary.h"
#include "tracker.h"

#define ENVIRON_MAX		(1 << 20)
#define RESCAN_PERIOD_S		1.0	/* env-matched jobs: look for new processes */
#define SUMMARY_PERIOD_S	5.0	/* rewrite summary.csv while running */
#define FORK_SETTLE_S		0.5	/* a forked child usually execs within this */
#define SMAPS_BUDGET		0.02	/* at most 2% of a core reading smaps */

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double tracker_now(const struct tracker *t)
{
	return mono_now() - t->start_mono;
}

/* time_s of a kernel event (its clock is CLOCK_BOOTTIME). */
static double event_time(const struct tracker *t, const struct ev_header *h)
{
	return ((double)h->ts_ns - (double)t->start_boot_ns) / 1e9;
}

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

static struct proc *find_alive(struct tracker *t, pid_t pid);

/* One walk of the kernel's site table for every live process (it may hold 64 Ki sites). */
static void collect_site_any(void *ctx, pid_t tgid, uint64_t site, const struct site_stats *st)
{
	struct proc *p = find_alive(ctx, tgid);

	if (p && p->account)
		add_site(p, site, st);
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

/*
 * Copy what the kernel counted for p in the opt-in modes (MPI call counts,
 * heap call sites) into p, where it outlives the process.
 */
static void collect_modes(struct tracker *t, struct proc *p)
{
	if (!t->probing || !p->account)
		return;
	collect_mpi_calls(t, p);
	if (!t->opt->heap)
		return;
	p->nheap_sites = 0;
	tracer_heap_sites(&t->bpf, p->pid, collect_site, p);
}

/* p is gone (or tracing ends): keep its figures, remove its probes and kernel state. */
static void release_probes(struct tracker *t, struct proc *p)
{
	if (!t->probing)
		return;
	collect_modes(t, p);
	probes_detach(p);
	tracer_forget_process(&t->bpf, p->pid);
}

static struct proc *find_alive(struct tracker *t, pid_t pid)
{
	for (size_t i = t->nprocs; i-- > 0;)
		if (t->procs[i]->pid == pid && t->procs[i]->alive)
			return t->procs[i];
	return NULL;
}

static bool rank_taken(struct tracker *t, const struct proc *self, int rank)
{
	for (size_t i = 0; i < t->nprocs; i++) {
		struct proc *p = t->procs[i];

		if (p != self && p->rank == rank && (p->alive || p->csv))
			return true;
	}
	return false;
}

/*
 * Who the process is: its rank (unless an ancestor of the job already holds
 * that rank: a rank's own children inherit its environment) and whether it
 * is a launcher.
 */
static void identify(struct tracker *t, struct proc *p)
{
	struct environ_buf env = {0};
	struct proc_stat st;
	int rank;

	if (procfs_read_stat(p->pid, &st) == 0)
		memcpy(p->comm, st.comm, sizeof(p->comm));
	p->account = !job_is_launcher(p->comm);
	if (p->csv || procfs_read_environ(p->pid, &env, ENVIRON_MAX))
		return;		/* once a file is named, the identity stays */
	rank = environ_rank(&env);
	environ_free(&env);
	p->rank = rank >= 0 && !rank_taken(t, p, rank) ? rank : -1;
}

static struct proc *add_proc(struct tracker *t, pid_t pid)
{
	struct proc *p, **grown;

	if (t->nprocs >= TRACKER_MAX_PROCS) {
		t->procs_refused++;
		return NULL;
	}
	p = proc_new(pid, tracker_now(t));
	if (!p)
		return NULL;
	grown = realloc(t->procs, (t->nprocs + 1) * sizeof(*grown));
	if (!grown) {
		proc_free(p);
		return NULL;
	}
	t->procs = grown;
	t->procs[t->nprocs++] = p;
	return p;
}

static void mark_exited(struct tracker *t, struct proc *p)
{
	if (!p->alive)
		return;
	p->alive = false;
	if (p->csv) {
		fclose(p->csv);
		p->csv = NULL;
		p->csv_closed = true;
	}
	/*
	 * Its figures stay for the summary; its address space is gone. The
	 * kernel dropped it from the traced set at its exit (ma_exit): deleting
	 * here could untrace a new process that already reuses the pid.
	 */
	release_probes(t, p);
	proc_release_mm(p);
}

/*
 * Still the process we started tracing? Its exit event can be lost (a full
 * ring buffer) and its pid reused: then it must end here, never be sampled
 * or probed as someone else's process.
 */
static bool still_same(struct proc *p)
{
	struct proc_stat st;

	if (procfs_read_stat(p->pid, &st))
		return false;
	if (!p->start_ticks)
		p->start_ticks = st.starttime;
	return st.starttime == p->start_ticks;
}

static void timed_sync(struct tracker *t, struct proc *p)
{
	double t0 = mono_now(), cost;
	int ret;

	if (!still_same(p)) {
		mark_exited(t, p);
		return;
	}
	ret = proc_sync(p, &t->cls, tracker_now(t));
	if (ret == -ESRCH || ret == -ENOENT) {
		mark_exited(t, p);	/* gone; its exit event, if any, finds nothing */
		return;
	}
	cost = mono_now() - t0;
	t->smaps_cost = t->smaps_cost ? 0.9 * t->smaps_cost + 0.1 * cost : cost;
	/* Libraries loaded since the last read get their probes now. */
	if (t->probing)
		probes_update(&t->probes, &t->bpf, p);
}

int tracker_add_pid(struct tracker *t, pid_t pid, bool follow_only)
{
	struct proc *p = find_alive(t, pid);
	int ret;

	if (p)
		return 0;
	p = add_proc(t, pid);
	if (!p)
		return -ENOMEM;
	p->exec_seen = true;	/* running before we came: its identity is final */
	identify(t, p);
	if (follow_only)
		p->account = false;
	ret = tracer_add_process(&t->bpf, pid, 0,
				 TRACED_FOLLOW | (p->account ? TRACED_ACCOUNT : 0));
	if (ret)
		return ret;
	if (p->account)
		timed_sync(t, p);
	return 0;
}

static void on_fork(struct tracker *t, const struct ev_task *e)
{
	struct proc *old = find_alive(t, e->child_tgid), *p, *parent;

	if (old)
		mark_exited(t, old);	/* a reused PID is a new process */
	p = add_proc(t, e->child_tgid);
	if (!p) {
		tracer_remove_process(&t->bpf, e->child_tgid);
		return;
	}
	memcpy(p->comm, e->comm, sizeof(e->comm));
	p->account = !job_is_launcher(p->comm);
	/* A copy of the parent's address space: its requests resolve from the first one. */
	parent = find_alive(t, e->parent_tgid);
	if (t->probing)
		probes_at_fork(&t->probes, &t->bpf, p);
	if (p->account && parent && parent->account) {
		proc_copy_mm(p, parent);
		/* A rank's child is never a rank itself: its pid file can open now. */
		p->exec_seen = true;
	}
}

static void on_exec(struct tracker *t, const struct ev_task *e)
{
	struct proc *p = find_alive(t, e->h.tgid);

	if (!p)
		return;
	proc_reset_mm(p);
	/* The kernel dropped the old image's heap sites and call counts (ma_exec). */
	p->nheap_sites = 0;
	mpi_fn_free(&p->mpi_fns);
	p->exec_seen = true;
	identify(t, p);
	if (t->probing && p->account)
		probes_at_exec(&t->probes, &t->bpf, p, &t->cls);
	/* The new image's code must be known before its first requests arrive. */
	if (p->account)
		timed_sync(t, p);
	tracer_add_process(&t->bpf, p->pid, 0,
			   TRACED_FOLLOW | (p->account ? TRACED_ACCOUNT : 0));
}

/*
 * The loader mapped a library's code. A process waiting for its probes gets
 * them now rather than at the next sample: MPI_Init may be only
 * milliseconds away.
 */
static bool maps_new_code(const struct ev_syscall *e)
{
	return e->nr == NR_MMAP && e->ret > 0 && (e->args[2] & PROT_EXEC) && !(e->args[3] & MAP_ANONYMOUS);
}

/* --mpi-calls: the spec MPI function whose code holds addr in p (its cookie), 0: none. */
static uint32_t mpi_fn_at(void *ctx, const struct proc *p, uint64_t addr)
{
	struct tracker *t = ctx;
	const struct code_map *m = proc_code_map(p, addr);
	const struct elfsym_table *syms;
	char path[PATH_MAX + 32];
	const char *name;
	uint64_t delta;

	if (!m)
		return 0;
	/* The file as the process sees it: its root may be a container's. */
	snprintf(path, sizeof(path), "/proc/%d/root%s", p->pid, m->path);
	syms = probes_symbols(&t->probes, path);
	name = syms ? elfsym_name_at(syms, addr - m->start + m->pgoff, &delta) : NULL;
	return name ? probes_mpi_fn(&t->probes, name) : 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct tracker *t = ctx;
	const struct ev_header *h = data;
	struct proc *p;

	if (size < sizeof(*h))
		return 0;
	t->events++;
	switch (h->type) {
	case EV_FORK:
		if (size >= sizeof(struct ev_task))
			on_fork(t, data);
		return 0;
	case EV_EXEC:
		if (size >= sizeof(struct ev_task))
			on_exec(t, data);
		return 0;
	}
	p = find_alive(t, h->tgid);
	if (!p) {
		t->unknown_pid_events++;
		return 0;
	}
	switch (h->type) {
	case EV_EXIT:
		mark_exited(t, p);
		break;
	case EV_RSS:
		t->rss_events++;
		if (p->account && size >= sizeof(struct ev_rss))
			proc_apply_rss(p, &t->cls, data, event_time(t, h));
		break;
	case EV_SYSCALL:
		t->syscall_events++;
		if (!p->account || size < EV_SYSCALL_NOSTACK_SIZE)
			break;
		proc_apply_syscall(p, &t->cls, data, event_time(t, h));
		if (maps_new_code(data) && t->probing && probes_waiting(&t->probes, p))
			timed_sync(t, p);
		break;
	}
	return 0;
}

int tracker_init(struct tracker *t, const struct options *opt,
		 const struct spec_set *specs, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->opt = opt;
	t->specs = specs;
	t->self = getpid();
	t->pss_period = opt->pss_interval_ms / 1000.0;
	classifier_init(&t->cls, specs);
	t->probing = opt->mpi_calls || opt->heap;
	status_line_init(&t->status, opt->quiet);
	if (opt->mpi_calls) {
		t->cls.mpi_fn_at = mpi_fn_at;
		t->cls.mpi_fn_ctx = t;
	}
	if (t->probing && probes_init(&t->probes, specs, opt->mpi_calls, opt->heap,
				      opt->verbose, err, errlen))
		return -1;
	t->start_mono = mono_now();
	t->start_boot_ns = boot_clock_ns();
	if (tracer_open(&t->bpf, opt->ringbuf_mb << 20, opt->mpi_calls, opt->heap, on_event, t,
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

int tracker_open_output(struct tracker *t, const char *dir, char *err, size_t errlen)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	uid_t u = uid ? (uid_t)strtoul(uid, NULL, 10) : (uid_t)-1;
	gid_t g = gid ? (gid_t)strtoul(gid, NULL, 10) : (gid_t)-1;

	if (outdir_open(&t->out, dir, u, g, err, errlen))
		return -1;
	t->out_open = true;
	return 0;
}

/* A forked child is named once it has exec'd or lived long enough not to. */
static void open_csv(struct tracker *t, struct proc *p, double now)
{
	char name[64];

	if (p->csv || p->csv_closed || !t->out_open || !p->account)
		return;
	if (!p->exec_seen && now - p->born_time < FORK_SETTLE_S)
		return;
	csv_file_name(p->rank, p->pid, name, sizeof(name));
	p->csv = outdir_create(&t->out, name);
	if (!p->csv) {
		fprintf(stderr, "memattr-bpf: cannot create %s/%s: %s\n", t->out.path, name,
			strerror(errno));
		p->csv_closed = true;
		return;
	}
	csv_write_header(p->csv);
}

/*
 * Keep smaps reading within budget: with many processes the period between
 * reads of each one stretches (documented in the README).
 */
static double effective_pss_period(struct tracker *t, size_t nalive)
{
	double need = t->smaps_cost * nalive / SMAPS_BUDGET;

	return need > t->pss_period ? need : t->pss_period;
}

static void sample_all(struct tracker *t)
{
	double now = tracker_now(t), period;
	size_t nalive = 0;
	int ret;

	for (size_t i = 0; i < t->nprocs; i++)
		nalive += t->procs[i]->alive && t->procs[i]->account;
	period = effective_pss_period(t, nalive);
	for (size_t i = 0; i < t->nprocs; i++) {
		struct proc *p = t->procs[i];

		if (!p->alive || !p->account)
			continue;
		if (p->needs_sync || now - p->last_sync_time >= period)
			timed_sync(t, p);
		open_csv(t, p, now);
		/* Not yet named (a launcher's child may exec into a rank): no peaks before rows. */
		if (!p->csv && !p->csv_closed && t->out_open)
			continue;
		ret = proc_sample(p, now);
		if (ret == -ESRCH || ret == -ENOENT)
			mark_exited(t, p);	/* gone, its exit event lost */
	}
}

/* The opt-in modes' files, with the kernel's counters of the live processes. */
static void write_modes(struct tracker *t)
{
	if (!t->probing)
		return;
	for (size_t i = 0; i < t->nprocs; i++) {
		struct proc *p = t->procs[i];

		if (!p->alive || !p->account)
			continue;
		collect_mpi_calls(t, p);
		p->nheap_sites = 0;
	}
	if (t->opt->heap)
		tracer_heap_sites(&t->bpf, 0, collect_site_any, t);
	modes_write_csv(t);
}

static void rescan_job(struct tracker *t)
{
	struct pid_list found = {0};

	if (job_scan_env(t->opt->job, t->self, &found) == 0)
		for (size_t i = 0; i < found.n; i++)
			if (!find_alive(t, found.pids[i]))
				tracker_add_pid(t, found.pids[i], false);
	pid_list_free(&found);
}

static bool any_alive(struct tracker *t)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i]->alive)
			return true;
	return false;
}

int tracker_run(struct tracker *t, volatile int *stop)
{
	double interval = t->opt->interval_ms / 1000.0, next = 0;

	while (!*stop) {
		double now = tracker_now(t);
		int ret;

		if (now >= next) {
			tracer_drain(&t->bpf);
			sample_all(t);
			status_line_update(&t->status, t, now);
			if (t->match == JOB_MATCH_ENV && now - t->last_scan >= RESCAN_PERIOD_S) {
				rescan_job(t);
				t->last_scan = now;
			}
			if (now - t->last_summary >= SUMMARY_PERIOD_S) {
				summary_write_csv(t);
				write_modes(t);
				t->last_summary = now;
			}
			if (!any_alive(t))
				break;
			if (t->opt->duration_s && now >= t->opt->duration_s)
				break;
			/* Stay on the grid: a slow sample does not shift later ones. */
			while (next <= now)
				next += interval;
		}
		ret = tracer_poll(&t->bpf, (int)((next - tracker_now(t)) * 1000) + 1);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "memattr-bpf: reading BPF events: %s\n", strerror(-ret));
			return -1;
		}
	}
	return 0;
}

static bool mapped_anywhere(const struct tracker *t, const struct spec_rule *r)
{
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t k = 0; k < t->procs[i]->nmaps; k++)
			if (spec_rule_matches(r, t->procs[i]->maps[k].path))
				return true;
	return false;
}

/*
 * A --spec file the user wrote for this job that names a library no traced
 * process mapped is probably a typo: say so (the built-in specs list many
 * optional libraries, and are not checked).
 */
static void warn_unused_user_specs(const struct tracker *t)
{
	for (size_t i = 0; i < t->specs->n; i++) {
		const struct spec_rule *r = &t->specs->rules[i];
		bool user = false;

		for (size_t k = 0; k < t->opt->nspecs; k++)
			user |= !strcmp(r->file, t->opt->specs[k]);
		if (user && (r->kind == SPEC_LIBRARY || r->kind == SPEC_PATH) && !mapped_anywhere(t, r))
			fprintf(stderr, "memattr-bpf: warning: %s:%d: no traced process mapped a file matching '%s'\n",
				r->file, r->line, r->pattern);
	}
}

void tracker_finish(struct tracker *t)
{
	status_line_clear(&t->status);
	tracer_drain(&t->bpf);
	for (size_t i = 0; i < t->nprocs; i++) {
		struct proc *p = t->procs[i];

		if (p->alive && p->account && p->csv)
			proc_sample(p, tracker_now(t));
	}
	tracer_stats(&t->bpf, t->kstats);
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i]->alive)
			release_probes(t, t->procs[i]);
	if (t->probing)
		probes_close_warm(&t->probes);
	tracer_close(&t->bpf);
	summary_write_csv(t);
	modes_write_csv(t);
	warn_unused_user_specs(t);
	if (!t->opt->quiet)
		summary_print(t, stdout);
	for (size_t i = 0; i < t->nprocs; i++)
		proc_free(t->procs[i]);
	free(t->procs);
	t->procs = NULL;
	t->nprocs = 0;
	if (t->probing)
		probes_free(&t->probes);
	t->probing = false;
	if (t->out_open)
		outdir_close(&t->out);
}
