// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memattr-bpf daemon: every job on the node, for as long as it runs.
 *
 * One engine (tracker.c) with one BPF object; the kernel side reports the
 * exec of every process that may be a job's (watch_exec: a job variable in
 * its environment or a Slurm job in its cgroup, bpf/exec_filter.h), and a
 * process whose environment or cgroup names a job starts that job's
 * session or joins it. From there the
 * job grows by fork as with the per-job command (launchers followed, not
 * accounted), and its session ends with its last process. Each session
 * writes SPOOL/<job>/ (<ID>.u<uid> where only the environment names the
 * job; spool.c) (gzip'ed timelines, files 0640, group of the job's
 * owner) and feeds the node's metrics, which the listener thread serves
 * from a snapshot the loop publishes: a scraper never stalls the loop.
 * Users ask for their own job's files on a unix socket (daemon_socket.c),
 * served by a thread from the table of jobs the loop keeps there.
 *
 * Bounded: past --max-jobs or --max-procs a new job is refused as a whole
 * and counted (memattr_refused_total), never traced in part.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caps.h"
#include "daemon.h"
#include "daemon_cfg.h"
#include "daemon_socket.h"
#include "run_specs.h"
#include "http_listen.h"
#include "metrics.h"
#include "proc_at.h"
#include "proc_owner.h"
#include "procfs.h"
#include "engine.h"
#include "spool.h"
#include "syscall_hooks.h"

#define ENVIRON_MAX		(1 << 20)
#define RENDER_PERIOD_S		0.5	/* metrics snapshot and textfile: at most this stale */
#define SCAN_PERIOD_S		30.0	/* /proc walk for processes no exec showed us */
#define DROP_SCAN_PERIOD_S	1.0	/* ... and at most this often after a loss */
#define RINGBUF_MB		16	/* every job of the node shares it (as big as the per-job command's) */
#define RETAIN_PERIOD_S		3600.0
#define REFUSED_RING		256	/* jobs refused lately: their later processes too */

/*
 * Who a process says it works for, and how far that is believed: a Slurm
 * cgroup is the batch system's word (trusted, owned by the cgroup's
 * uid); an environment variable is the process's own, so its job is
 * (its real uid, ID), a job of its own user's and nobody else's.
 */
struct job_key {
	char id[256];	/* as the socket's protocol takes (JSP_JOB_MAX) */
	uid_t owner;		/* JOB_ANY_UID: not known yet (a v2 cgroup's root process) */
	bool trusted;
};

/*
 * A job refused at its start: its later processes are refused too (never
 * traced in part), until a walk of /proc finds none of them left. Then
 * the key is forgotten: a real job that comes later with the ID is
 * judged afresh, whatever filled the caps before.
 */
struct refused_job {
	struct job_key key;
	bool used;
	bool seen;		/* a process of it was met since the last walk began */
};

/* Job directories in the spool per user (spool_count_owners), for --max-spool-dirs-per-user. */
struct spool_count {
	uid_t uid;
	unsigned int n;
};

struct daemon {
	struct daemon_cfg cfg;
	int argc;			/* the options after "daemon", for SIGHUP */
	char **argv;
	struct options opt;
	struct spec_set specs;
	struct tracker *t;
	struct metrics m;
	struct http_listen *http;
	struct daemon_socket *sock;	/* NULL: --socket none */
	uint64_t refused[MX_REFUSED_NR];
	uint64_t ended_unwind_failures;
	uint64_t execs_examined;
	struct refused_job refused_jobs[REFUSED_RING];
	struct spool_count *spool_counts;
	size_t nspool_counts;
	unsigned int nrefused_jobs;
	double last_render, last_scan, last_retain;
	uint64_t drops_seen;		/* kernel drops at the last /proc walk */
	bool textfile_failing;		/* said so; quiet until it works again */
	pid_t self;
};

static volatile sig_atomic_t stop_requested, reload_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	/* No SA_RESTART: the event poll returns to see the flags. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static size_t count_procs(const struct tracker *t, size_t *njobs)
{
	size_t n = 0, j = 0;

	for (const struct session *s = tracker_first_session(t); s; s = session_next(s), j++)
		n += session_nprocs(s);
	if (njobs)
		*njobs = j;
	return n;
}

static bool same_key(const struct job_key *a, const struct job_key *b)
{
	return a->trusted == b->trusted && a->owner == b->owner && !strcmp(a->id, b->id);
}

/*
 * The session k joins. A trusted process joins the batch system's job of
 * its ID; an untrusted one joins the batch system's job of its ID when it
 * is its own user's (mpirun under salloc runs outside any step), else its
 * user's own job of that ID. Never another user's.
 */
static struct session *session_of_key(struct tracker *t, const struct job_key *k)
{
	struct session *own = NULL;

	for (struct session *s = tracker_first_session(t); s; s = session_next(s)) {
		if (!session_job(s) || strcmp(session_job(s), k->id))
			continue;
		if (k->trusted && session_trusted(s))
			return s;
		if (session_owner(s) != k->owner)
			continue;
		if (session_trusted(s))
			return s;
		own = s;
	}
	/*
	 * The Slurm job's first process in its cgroup, after processes of its
	 * own user that claimed the ID by environment (an mpirun under salloc):
	 * one job, now vouched for (two would expose the same series twice).
	 */
	if (own && k->trusted)
		session_set_owner(own, session_owner(own), true);
	return own;
}

static bool was_refused(struct daemon *d, const struct job_key *k)
{
	for (unsigned int i = 0; i < REFUSED_RING; i++)
		if (d->refused_jobs[i].used && same_key(&d->refused_jobs[i].key, k)) {
			d->refused_jobs[i].seen = true;
			return true;
		}
	return false;
}

/* After a whole walk of /proc: refused jobs none of whose processes was met are over. */
static void forget_refused(struct daemon *d)
{
	for (unsigned int i = 0; i < REFUSED_RING; i++) {
		if (d->refused_jobs[i].used && !d->refused_jobs[i].seen)
			d->refused_jobs[i].used = false;
		d->refused_jobs[i].seen = false;
	}
}

static unsigned int jobs_of(const struct tracker *t, uid_t owner)
{
	unsigned int n = 0;

	for (const struct session *s = tracker_first_session(t); s; s = session_next(s))
		n += session_owner(s) == owner;
	return n;
}

/* The job is not traced at all; its later processes are not either. */
static void refuse(struct daemon *d, const struct job_key *k, enum mx_refusal why)
{
	struct refused_job *slot = &d->refused_jobs[d->nrefused_jobs++ % REFUSED_RING];

	slot->key = *k;
	slot->used = true;
	slot->seen = true;
	d->refused[why]++;
	fprintf(stderr, "memattr-bpf: job %s not traced: %s reached (its processes of uid %u too)\n",
		k->id, why == MX_REFUSED_MAX_JOBS ? "--max-jobs" :
		why == MX_REFUSED_MAX_USER_JOBS ? "--max-jobs-per-user" : "--max-procs",
		(unsigned int)k->owner);
}

/* The owner's name and group (the spool's group): from the user database, else the process's. */
static void owner_names(const struct job_key *k, pid_t pid, char *user, size_t len, gid_t *gid)
{
	struct passwd *pw = getpwuid(k->owner);
	uid_t puid;
	gid_t pgid;

	if (pw) {
		snprintf(user, len, "%s", pw->pw_name);
		*gid = pw->pw_gid;
		return;
	}
	snprintf(user, len, "%u", (unsigned int)k->owner);
	*gid = !proc_owner_read(pid, &puid, &pgid) && puid == k->owner ? pgid : (gid_t)-1;
}

static struct spool_count *spool_count_of(struct daemon *d, uid_t uid, bool add)
{
	struct spool_count *c;

	for (size_t i = 0; i < d->nspool_counts; i++)
		if (d->spool_counts[i].uid == uid)
			return &d->spool_counts[i];
	if (!add)
		return NULL;
	c = realloc(d->spool_counts, (d->nspool_counts + 1) * sizeof(*c));
	if (!c)
		return NULL;
	d->spool_counts = c;
	c += d->nspool_counts++;
	*c = (struct spool_count){ .uid = uid };
	return c;
}

static void count_one(void *ctx, uid_t uid)
{
	struct spool_count *c = spool_count_of(ctx, uid, true);

	if (c)
		c->n++;
}

/* The spool's job directories per user, afresh: at start and after --retain removed some. */
static void recount_spool(struct daemon *d)
{
	d->nspool_counts = 0;
	spool_count_owners(d->cfg.spool, count_one, d);
}

/*
 * A job directory for k, unless its user has --max-spool-dirs-per-user of
 * them already (short processes with ever new job IDs would fill the
 * disk's inodes): then the job is traced for the metrics only. 0: dir made.
 */
static int open_spool(struct daemon *d, struct session *s, const struct job_key *k, gid_t gid,
		      char *dir, size_t dirlen, char *err, size_t errlen)
{
	struct spool_count *c = spool_count_of(d, k->owner, false);

	if (k->owner != 0 && c && c->n >= d->cfg.max_user_spool) {
		d->refused[MX_REFUSED_SPOOL_DIRS]++;
		snprintf(err, errlen, "its user has %u job directories in the spool already (--max-spool-dirs-per-user)",
			 c->n);
		return -1;
	}
	if (spool_job_dir(d->cfg.spool, k->id, k->owner, k->trusted, dir, dirlen)) {
		snprintf(err, errlen, "no free directory name");
		return -1;
	}
	if (tracker_open_output_as(d->t, s, dir, (uid_t)-1, gid, err, errlen))
		return -1;
	/* Counted across restarts where the filesystem keeps trusted attributes; in memory anyway. */
	spool_mark_owner(session_output_fd(s), k->owner);
	count_one(d, k->owner);
	return 0;
}

static struct session *start_job(struct daemon *d, const struct job_key *k, pid_t pid)
{
	char user[256], dir[4096], err[512] = "";
	struct session *s;
	gid_t gid;
	size_t njobs, nprocs = count_procs(d->t, &njobs);

	if (njobs >= d->cfg.max_jobs) {
		refuse(d, k, MX_REFUSED_MAX_JOBS);
		return NULL;
	}
	/* Root's own processes aside: one user cannot take every slot. */
	if (k->owner != 0 && jobs_of(d->t, k->owner) >= d->cfg.max_user_jobs) {
		refuse(d, k, MX_REFUSED_MAX_USER_JOBS);
		return NULL;
	}
	if (nprocs >= d->cfg.max_procs) {
		refuse(d, k, MX_REFUSED_MAX_PROCS);
		return NULL;
	}
	owner_names(k, pid, user, sizeof(user), &gid);
	s = tracker_new_session(d->t, k->id, JOB_MATCH_NONE);
	if (!s)
		return NULL;
	session_set_owner(s, k->owner, k->trusted);
	/* Its time_s, duration_s and start_time_unix_s count from now, not from the daemon's start. */
	session_set_t0(s, tracker_now(d->t));
	if (session_add_sink(s, metrics_sink_new(&d->m, k->id, user, k->owner)))
		fprintf(stderr, "memattr-bpf: job %s: no metrics (out of memory)\n", k->id);
	if (tracker_add_pid(d->t, s, pid, false))
		return s;	/* gone already: the session ends at the next round */
	/* Root's files, readable by the owner's group: the owner reads, cannot alter. */
	if (open_spool(d, s, k, gid, dir, sizeof(dir), err, sizeof(err)))
		fprintf(stderr, "memattr-bpf: job %s: no spool files: %s\n", k->id, err);
	else {
		fprintf(stderr, "memattr-bpf: job %s of %s: tracing, writing %s%s\n", k->id, user, dir,
			k->trusted ? "" : " (its ID from its processes' environment)");
		/* Its owner may now ask for it. */
		daemon_socket_job_started(d->sock, k->id, dir, k->owner);
	}
	return s;
}

/*
 * The job pid claims, and how far it is believed: Slurm's cgroup first (a
 * job's mpirun run with an emptied environment carries no SLURM_JOB_ID,
 * and a process cannot leave the cgroup Slurm put it in), then the
 * environment, which is the process's own word: its job is its user's.
 */
static bool key_of(int pfd, const struct proc_who *who, const struct environ_buf *env,
		   struct job_key *k)
{
	struct slurm_cgroup sc;
	const char *id;
	uid_t v1_owner;

	memset(k, 0, sizeof(*k));
	if (!proc_at_slurm_cgroup(pfd, &sc, &v1_owner) && sc.job) {
		snprintf(k->id, sizeof(k->id), "%llu", (unsigned long long)sc.job);
		k->trusted = true;
		/* v1 names the owner (uid_<U>); in v2, slurmstepd (root) sits beside the user's tasks. */
		k->owner = v1_owner != (uid_t)-1 ? v1_owner : who->uid ? who->uid : JOB_ANY_UID;
		return true;
	}
	id = environ_job_id(env);
	if (!id || strlen(id) >= sizeof(k->id))
		return false;
	snprintf(k->id, sizeof(k->id), "%s", id);
	k->owner = who->uid;
	return true;
}

/* pid may belong to a job: start or join its session. */
static void admit(struct daemon *d, pid_t pid)
{
	struct environ_buf env = {0};
	struct proc_who who;
	struct job_key k;
	struct session *s;
	bool keyed;
	int pfd;

	if (pid == d->self)
		return;
	if (tracker_traces(d->t, pid)) {
		if (d->cfg.verbose)
			fprintf(stderr, "memattr-bpf: exec of %d: traced already\n", pid);
		return;
	}
	/*
	 * Every file through one /proc/PID descriptor: a PID reused meanwhile
	 * fails the reads instead of pairing one process's uid with another's
	 * environment; and the owner read again after the environment, in
	 * case a setuid exec came between.
	 */
	pfd = proc_at_open(pid);
	if (pfd < 0 || proc_at_who(pfd, &who) || proc_at_environ(pfd, &env, ENVIRON_MAX)) {
		if (d->cfg.verbose)
			fprintf(stderr, "memattr-bpf: exec of %d: environment unreadable\n", pid);
		if (pfd >= 0)
			close(pfd);
		return;		/* gone, or a kernel thread */
	}
	keyed = key_of(pfd, &who, &env, &k) && proc_at_still(pfd, &who);
	close(pfd);
	if (keyed && !was_refused(d, &k)) {
		s = session_of_key(d->t, &k);
		if (s)
			tracker_add_pid(d->t, s, pid, false);
		else if (k.owner != JOB_ANY_UID)	/* a user's process starts it, not slurmstepd */
			start_job(d, &k, pid);
	}
	environ_free(&env);
}

static void on_untraced_exec(void *ctx, struct tracker *t, pid_t pid)
{
	struct daemon *d = ctx;

	(void)t;
	d->execs_examined++;
	admit(d, pid);
}

/* Processes of jobs that no exec showed us: those running when we started. */
static void scan_proc(struct daemon *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			admit(d, (pid_t)strtol(de->d_name, NULL, 10));
	closedir(dir);
	forget_refused(d);
}

static void on_session_ended(void *ctx, struct tracker *t, struct session *s)
{
	struct daemon *d = ctx;
	struct sink_counters c;

	(void)t;
	session_counters(s, &c);
	d->ended_unwind_failures += c.unwind_failures;
	/* Its sinks have finished: the files a client is told are final are. */
	if (session_output_dir(s))
		daemon_socket_job_ended(d->sock, session_output_dir(s));
	if (session_job(s))
		fprintf(stderr, "memattr-bpf: job %s ended (%llu processes traced)\n", session_job(s),
			(unsigned long long)c.procs_traced);
}

static void fill_self(struct daemon *d, struct mx_self *x)
{
	static const char *const maps[] = { "traced", "mm_anchors" };
	struct tracker_counters tc;
	struct rusage ru;
	size_t njobs;
	long pages = 0;
	FILE *f;

	memset(x, 0, sizeof(*x));
	tracker_counters(d->t, &tc);
	x->events = tc.events;
	x->execs_examined = d->execs_examined;
	tracker_exec_filter_counts(d->t, &x->execs_skipped, &x->execs_undecided);
	x->dropped = tc.dropped;
	x->node_programs = tc.global_probes;
	x->node_program_attaches = tc.global_probe_attaches;
	x->unwind_failures = d->ended_unwind_failures;
	for (struct session *s = tracker_first_session(d->t); s; s = session_next(s)) {
		struct sink_counters c;

		session_counters(s, &c);
		x->unwind_failures += c.unwind_failures;
		x->refused[MX_REFUSED_MAX_PROCS] += c.procs_refused;
	}
	x->processes = count_procs(d->t, &njobs);
	x->jobs = njobs;
	for (int i = 0; i < MX_REFUSED_NR; i++)
		x->refused[i] += d->refused[i];
	x->refused[MX_REFUSED_MAP_FULL] += tc.traced_map_full;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]) && x->nmaps < MX_MAPS; i++) {
		x->maps[x->nmaps].name = maps[i];
		if (!tracker_map_fill(d->t, maps[i], &x->maps[x->nmaps].entries,
				     &x->maps[x->nmaps].max))
			x->nmaps++;
	}
	x->version = MEMATTR_VERSION;
	x->attribution = d->opt.sampled ? "sampled" : "exact";	/* as started: SIGHUP waits for a restart */
	/* fentry until a link the kernel refused made it fall back (bpf_loader.c). */
	x->memory_calls = syscall_hooks_fentry() ? "fentry" : "tracepoints";
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%*d %ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	x->rss_bytes = (int64_t)pages * sysconf(_SC_PAGESIZE);
	if (!getrusage(RUSAGE_SELF, &ru))
		x->cpu_seconds = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int render(struct daemon *d, const struct mx_self *x, bool om, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = metrics_render(f, &d->m, x, om);
	if (fclose(f))
		ret = -ENOMEM;
	return ret;
}

/* DIR/memattr.prom by rename: node_exporter never reads half a file. 0, or -errno. */
static int try_textfile(const char *dir, const char *text, size_t len)
{
	char tmp[4200], path[4200];
	ssize_t n;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s/.memattr.prom.%d", dir, (int)getpid());
	snprintf(path, sizeof(path), "%s/memattr.prom", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	errno = 0;
	n = write(fd, text, len);
	if (n != (ssize_t)len || fchmod(fd, 0644))
		err = errno ? errno : ENOSPC;	/* a short write: the disk is full */
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err)
		unlink(tmp);	/* every path: no temporary file is left */
	return -err;
}

/* Said once per streak of failures: the file is rewritten every 0.5 s. */
static void write_textfile(struct daemon *d, const char *text, size_t len)
{
	int err = try_textfile(d->cfg.textfile, text, len);

	if (err && !d->textfile_failing)
		fprintf(stderr, "memattr-bpf: cannot write %s/memattr.prom: %s (the previous one stays)\n",
			d->cfg.textfile, strerror(-err));
	d->textfile_failing = err != 0;
}

static void publish(struct daemon *d)
{
	char *text = NULL, *om = NULL;
	size_t tlen = 0, olen = 0;
	struct mx_self x;

	fill_self(d, &x);
	if (!render(d, &x, false, &text, &tlen) && !render(d, &x, true, &om, &olen)) {
		if (d->http)
			http_listen_publish(d->http, text, tlen, om, olen);
		if (d->cfg.textfile[0])
			write_textfile(d, text, tlen);
	}
	free(text);
	free(om);
}

static bool dir_in_use(void *ctx, const char *path)
{
	struct daemon *d = ctx;

	for (struct session *s = tracker_first_session(d->t); s; s = session_next(s))
		if (session_output_dir(s) && !strcmp(session_output_dir(s), path))
			return true;
	return false;
}

static void retain(struct daemon *d)
{
	int n = spool_retain(d->cfg.spool, d->cfg.retain_days, dir_in_use, d);

	if (n > 0) {
		fprintf(stderr, "memattr-bpf: removed %d job director%s older than %u days\n", n,
			n == 1 ? "y" : "ies", d->cfg.retain_days);
		recount_spool(d);
	}
}

static int start_listener(struct daemon *d, char *err, size_t errlen)
{
	if (!strcmp(d->cfg.listen, "none"))
		return 0;
	d->http = http_listen_start(d->cfg.listen, err, errlen);
	return d->http ? 0 : -1;
}

/* SIGHUP: the file again; what can change while running changes now. */
static void reload(struct daemon *d)
{
	struct daemon_cfg c;
	char err[512];

	/* Built as at start, so a key taken out of the file is back to its default. */
	daemon_cfg_defaults(&c);
	if (daemon_cfg_parse_args(&c, d->argc, d->argv, err, sizeof(err)) ||
	    daemon_cfg_load(&c, err, sizeof(err))) {
		fprintf(stderr, "memattr-bpf: SIGHUP: %s; keeping the settings in force\n", err);
		return;
	}
	if (strcmp(c.listen, d->cfg.listen)) {
		http_listen_stop(d->http);
		d->http = NULL;
		snprintf(d->cfg.listen, sizeof(d->cfg.listen), "%s", c.listen);
		if (start_listener(d, err, sizeof(err)))
			fprintf(stderr, "memattr-bpf: SIGHUP: %s; no metrics endpoint\n", err);
	}
	if (strcmp(c.textfile, d->cfg.textfile) && d->cfg.textfile[0]) {
		char old[4200];

		snprintf(old, sizeof(old), "%s/memattr.prom", d->cfg.textfile);
		unlink(old);
	}
	memcpy(d->cfg.textfile, c.textfile, sizeof(c.textfile));
	memcpy(d->cfg.spool, c.spool, sizeof(c.spool));	/* for jobs that start from now */
	recount_spool(d);
	d->cfg.retain_days = c.retain_days;
	d->cfg.max_jobs = c.max_jobs;
	d->cfg.max_procs = c.max_procs;
	d->cfg.max_user_jobs = c.max_user_jobs;
	d->cfg.max_user_spool = c.max_user_spool;
	d->m.detail = d->cfg.metrics_detail = c.metrics_detail;
	d->m.max_ranks = d->cfg.metrics_max_ranks = c.metrics_max_ranks;
	d->cfg.detach_after_s = c.detach_after_s;
	tracker_set_probe_hold(d->t, c.detach_after_s);
	d->last_retain = -RETAIN_PERIOD_S;
	fprintf(stderr, "memattr-bpf: SIGHUP: settings re-read%s\n",
		c.interval_ms != d->cfg.interval_ms || c.pss_interval_ms != d->cfg.pss_interval_ms ?
		" (interval and pss-interval take effect at the next start)" : "");
	if (strcmp(c.socket, d->cfg.socket))
		fprintf(stderr, "memattr-bpf: SIGHUP: socket takes effect at the next start\n");
	if (c.sampled != d->cfg.sampled)
		fprintf(stderr, "memattr-bpf: SIGHUP: attribution takes effect at the next start\n");
}

static void on_tick(void *ctx, struct tracker *t, double now)
{
	struct daemon *d = ctx;
	struct tracker_counters c;

	tracker_counters(t, &c);
	if (reload_requested) {
		reload_requested = 0;
		reload(d);
	}
	/*
	 * A lost event may have been an exec: walk /proc again soon, so a
	 * job whose first exec was lost is picked up in a second, not thirty.
	 */
	if (now - d->last_scan >= SCAN_PERIOD_S ||
	    (c.dropped != d->drops_seen && now - d->last_scan >= DROP_SCAN_PERIOD_S)) {
		d->drops_seen = c.dropped;
		scan_proc(d);
		d->last_scan = now;
	}
	if (now - d->last_render >= RENDER_PERIOD_S) {
		publish(d);
		d->last_render = now;
	}
	if (d->cfg.retain_days && now - d->last_retain >= RETAIN_PERIOD_S) {
		retain(d);
		d->last_retain = now;
	}
}

static int setup(struct daemon *d, int argc, char **argv, char *err, size_t errlen)
{
	int ret;

	daemon_cfg_defaults(&d->cfg);
	d->argc = argc - 1;
	d->argv = argv + 1;
	ret = daemon_cfg_parse_args(&d->cfg, d->argc, d->argv, err, errlen);
	if (ret)
		return ret;
	if (daemon_cfg_load(&d->cfg, err, errlen))
		return -1;
	memset(&d->opt, 0, sizeof(d->opt));
	d->opt.target = TARGET_JOB;
	d->opt.interval_ms = d->cfg.interval_ms;
	d->opt.pss_interval_ms = d->cfg.pss_interval_ms;
	d->opt.sampled = d->cfg.sampled;
	/* Nothing at every syscall of the node while no job is traced (--detach-after). */
	d->opt.probes_on_demand = true;
	d->opt.probe_hold_s = d->cfg.detach_after_s;
	/* Every exec that may start or join a job (tracker_watch_exec). */
	d->opt.watch_exec = true;
	d->opt.ringbuf_mb = RINGBUF_MB;
	d->opt.compress = true;
	d->opt.quiet = true;
	d->opt.verbose = d->cfg.verbose;
	d->m.detail = d->cfg.metrics_detail;
	d->m.max_ranks = d->cfg.metrics_max_ranks;
	return 0;
}

static int start_socket(struct daemon *d, char *err, size_t errlen)
{
	if (!strcmp(d->cfg.socket, "none"))
		return 0;
	d->sock = daemon_socket_start(d->cfg.socket, err, errlen);
	return d->sock ? 0 : -1;
}

static void cleanup(struct daemon *d)
{
	http_listen_stop(d->http);
	d->http = NULL;
	daemon_socket_stop(d->sock);
	d->sock = NULL;
	if (d->cfg.textfile[0]) {
		char path[4200];

		/* No stale figures for node_exporter to serve. */
		snprintf(path, sizeof(path), "%s/memattr.prom", d->cfg.textfile);
		unlink(path);
	}
	spec_free(&d->specs);
	free(d->spool_counts);
	d->spool_counts = NULL;
}

int daemon_main(int argc, char **argv)
{
	static struct daemon d;
	const struct tracker_hooks hooks = {
		.ctx = &d, .untraced_exec = on_untraced_exec, .tick = on_tick,
		.session_ended = on_session_ended,
	};
	char err[1024] = "";
	int ret;

	ret = setup(&d, argc, argv, err, sizeof(err));
	if (ret > 0)
		return 0;
	if (ret < 0) {
		fprintf(stderr, "memattr-bpf: %s\n", err);
		return 2;
	}
	install_signals();
	d.self = getpid();
	if (caps_check(err, sizeof(err)) || spool_prepare(d.cfg.spool, err, sizeof(err)))
		goto fail;
	recount_spool(&d);
	if (d.cfg.textfile[0] && access(d.cfg.textfile, W_OK | X_OK)) {
		snprintf(err, sizeof(err), "--textfile %.900s: not a writable directory", d.cfg.textfile);
		goto fail;
	}
	spec_init(&d.specs);
	if (load_specs(&d.opt, &d.specs, err, sizeof(err)) || start_listener(&d, err, sizeof(err)) ||
	    start_socket(&d, err, sizeof(err)))
		goto fail;
	d.t = tracker_new(&d.opt, &d.specs, "memattr-bpf daemon", err, sizeof(err));
	if (!d.t)
		goto fail;
	tracker_set_hooks(d.t, &hooks);
	/* Execs first, then the walk: a job starting in between is seen by one or the other. */
	if (tracker_watch_exec(d.t, true)) {
		snprintf(err, sizeof(err), "the programs were loaded without the exec filter: no job would be found at its exec");
		tracker_finish(d.t);
		tracker_free(d.t);
		d.t = NULL;
		goto fail;
	}
	scan_proc(&d);
	d.last_scan = tracker_now(d.t);
	d.last_retain = -RETAIN_PERIOD_S;
	publish(&d);
	fprintf(stderr, "memattr-bpf: daemon: watching every job on this node; spool %s, metrics %s%s%s, user socket %s, attribution %s, memory calls through %s\n",
		d.cfg.spool, strcmp(d.cfg.listen, "none") ? "http://" : "", d.cfg.listen,
		strcmp(d.cfg.listen, "none") ? "/metrics" : "", d.cfg.socket,
		d.cfg.sampled ? "sampled (--exact for exact)" : "exact", tracer_syscall_hooks());

	ret = tracker_run(d.t, &stop_requested);
	tracker_finish(d.t);
	tracker_free(d.t);
	d.t = NULL;
	cleanup(&d);
	fprintf(stderr, "memattr-bpf: daemon: stopped\n");
	return ret ? EXIT_FAILURE : 0;
fail:
	fprintf(stderr, "memattr-bpf: %s\n", err);
	cleanup(&d);
	return EXIT_FAILURE;
}
