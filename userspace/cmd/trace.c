// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memattr-bpf --job ID | --pid P | -- CMD: the tracing command, what runs
 * when argv[1] names no other command (main.c).
 *
 * Order matters here: everything that can be refused (arguments, privileges,
 * specs, the output path, the job) is checked before the kernel is touched,
 * and the output directory is created only once tracing works, so a refusal
 * leaves nothing behind.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "cli.h"
#include "daemon_cfg.h"
#include "discovery.h"
#include "engine.h"
#include "job_client.h"
#include "launch.h"
#include "output_dir.h"
#include "procfs.h"
#include "run_specs.h"
#include "spec.h"
#include "trace.h"

#define EXIT_USAGE	2
#define WAIT_POLL_US	250000

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int fail(const char *msg)
{
	fprintf(stderr, "memattr-bpf: %s\n", msg);
	return EXIT_FAILURE;
}

/* Each uprobe of the opt-in modes holds a descriptor: allow as many as root may. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* SIGPIPE as the caller had it goes to a launched command (launch.h). */
static void install_signals(struct sigaction *caller_sigpipe)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ignore = { .sa_handler = SIG_IGN };

	/* No SA_RESTART: the event poll must return to see the flag. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGPIPE, &ignore, caller_sigpipe);
}

/* Find the processes to trace; with --wait, until the job appears. */
/* "alice (1001), bob (1002)": the users claiming a job, for the message asking to choose. */
static void name_claimants(const struct job_owner *who, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < who->nclaimants && at < len; i++) {
		struct passwd *pw = getpwuid(who->claimants[i]);
		int n = snprintf(buf + at, len - at, "%s%s (%u)", i ? ", " : "",
				 pw ? pw->pw_name : "?", (unsigned int)who->claimants[i]);

		if (n < 0)
			break;
		at += (size_t)n;
	}
}

/*
 * The job as --job names it: its processes of one uid's claim. Named with
 * --job-user; else the only uid claiming it; else, under sudo, the
 * invoking user's own claim; else none (the message names the users).
 */
static enum job_match find_job(const struct options *o, struct pid_list *pids,
			       struct job_owner *who, char *err, size_t errlen)
{
	const char *sudo = getenv("SUDO_UID");
	enum job_match m = job_find(o->job, getpid(), o->job_uid, pids, who);
	char names[512];

	if (m != JOB_MATCH_AMBIGUOUS)
		return m;
	if (o->job_uid == (uid_t)-1 && sudo) {
		uid_t me = (uid_t)strtoul(sudo, NULL, 10);

		for (size_t i = 0; i < who->nclaimants; i++)
			if (who->claimants[i] == me) {
				pids->n = 0;
				return job_find(o->job, getpid(), me, pids, who);
			}
	}
	name_claimants(who, names, sizeof(names));
	snprintf(err, errlen, "job '%s': processes of several users carry this ID in their environment (%s), and no batch system vouches for any: name whose with --job-user USER",
		 o->job, names);
	return JOB_MATCH_AMBIGUOUS;
}

static int resolve_targets(const struct options *o, struct pid_list *pids,
			   enum job_match *match, struct job_owner *who, char *err, size_t errlen)
{
	struct proc_stat st;

	if (o->target == TARGET_PIDS) {
		for (size_t i = 0; i < o->npids; i++) {
			struct pid_list tree = {0};

			if (procfs_read_stat(o->pids[i], &st)) {
				snprintf(err, errlen, "--pid: no process %d", o->pids[i]);
				return -1;
			}
			/* No user memory: it would give all-zero files, and kthreadd's children are every kernel thread. */
			if (st.flags & PROC_PF_KTHREAD) {
				snprintf(err, errlen, "--pid: %d (%s) is a kernel thread, it has no user memory to trace",
					 o->pids[i], st.comm);
				return -1;
			}
			/* "and their children": those already running too (an mpirun's ranks). */
			if (job_descendants(o->pids[i], &tree))
				pid_list_add(&tree, o->pids[i]);
			for (size_t k = 0; k < tree.n; k++)
				if (!pid_list_has(pids, tree.pids[k]))
					pid_list_add(pids, tree.pids[k]);
			pid_list_free(&tree);
		}
		return 0;
	}
	for (;;) {
		*match = find_job(o, pids, who, err, errlen);
		if (*match == JOB_MATCH_AMBIGUOUS)
			return -1;
		if (*match != JOB_MATCH_NONE)
			return 0;
		if (!o->wait) {
			snprintf(err, errlen, "no process of job '%s' on this node (in no Slurm job or step cgroup of that ID, no SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID or PMIX_NAMESPACE equals it, and it is not a running launcher's PID); --wait waits for it",
				 o->job);
			return -1;
		}
		if (stop_requested) {
			snprintf(err, errlen, "stopped while waiting for job '%s'", o->job);
			return -1;
		}
		usleep(WAIT_POLL_US);
	}
}

static void default_output(const struct options *o, pid_t first, char *buf, size_t len)
{
	if (o->output)
		snprintf(buf, len, "%s", o->output);
	else if (o->target == TARGET_JOB)
		snprintf(buf, len, "memattr-%s", o->job);
	else
		snprintf(buf, len, "memattr-%d", first);
}

/*
 * Not root: a job the node's daemon traces is copied from it through its
 * socket, as this user (job_client.c); anything else stays refused (why).
 */
static int without_root(const struct options *o, const char *why)
{
	const char *sock = o->socket ? o->socket : DAEMON_DEFAULT_SOCKET;
	char outdir[PATH_MAX], err[1024];
	struct stat st;

	if (o->target != TARGET_JOB || stat(sock, &st) || !S_ISSOCK(st.st_mode)) {
		if (o->target == TARGET_JOB && o->socket) {
			fprintf(stderr, "memattr-bpf: --socket %s: no socket there (is the daemon running?); without it, %s\n",
				sock, why);
			return EXIT_FAILURE;
		}
		return fail(why);
	}
	default_output(o, 0, outdir, sizeof(outdir));
	if (output_check(outdir, err, sizeof(err)))
		return fail(err);
	return job_client_run(o, sock, outdir, &stop_requested);
}

/*
 * *ntraced: how many processes are traced once it returns. pids were read
 * from /proc before the kernel followed any fork: what they forked since
 * is adopted once each of them is followed (tracker_adopt_descendants),
 * so that no child falls between the scan and the attach. A launched
 * command is held before its exec: it has forked nothing.
 */
static int start_tracing(struct tracker *t, struct session *s, const struct pid_list *pids,
			 enum job_match match, bool launched, size_t *ntraced)
{
	size_t queued = 0;
	int ret;

	for (size_t i = 0; i < pids->n; i++) {
		/* A launcher matched by PID is followed to its ranks, not accounted. */
		bool follow_only = match == JOB_MATCH_LAUNCHER && i == 0;

		ret = tracker_add_pid(t, s, pids->pids[i], follow_only);
		if (ret && ret != -ESRCH && ret != -ENOENT) {
			fprintf(stderr, "memattr-bpf: cannot trace pid %d: %s\n", pids->pids[i],
				strerror(-ret));
			return -1;
		}
	}
	ret = launched ? 0 : tracker_adopt_descendants(t, s, &queued);
	if (ret < 0) {
		fprintf(stderr, "memattr-bpf: cannot trace the children forked while attaching: %s\n",
			strerror(-ret));
		return -1;
	}
	*ntraced = session_nprocs(s) + queued;
	return 0;
}

static bool has_control(const char *a)
{
	for (; *a; a++)
		if ((unsigned char)*a < 0x20 || *a == 0x7f)
			return true;
	return false;
}

/* An argument with a line break or other control byte, as bash's $'...' (\n, \t, \xHH): still one line. */
static size_t quote_control(const char *a, char *out)
{
	size_t n = 2;
	char esc[5];

	if (out)
		memcpy(out, "$'", 2);
	for (; *a; a++) {
		unsigned char c = (unsigned char)*a;

		if (c == '\\' || c == '\'')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c == '\n' || c == '\t')
			snprintf(esc, sizeof(esc), "\\%c", c == '\n' ? 'n' : 't');
		else if (c < 0x20 || c == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			snprintf(esc, sizeof(esc), "%c", c);
		if (out)
			memcpy(out + n, esc, strlen(esc));
		n += strlen(esc);
	}
	if (out)
		out[n] = '\'';
	return n + 1;
}

/* An argument as a shell would need it: bare when plain, else in single quotes. */
static size_t quote_arg(const char *a, char *out)
{
	size_t n = 0;

	if (has_control(a))
		return quote_control(a, out);

	if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789_./=:,+-@%") == strlen(a)) {
		if (out)
			strcpy(out, a);
		return strlen(a);
	}
	if (out)
		out[n] = '\'';
	n++;
	for (; *a; a++) {
		if (*a == '\'') {
			if (out)
				memcpy(out + n, "'\\''", 4);
			n += 4;
			continue;
		}
		if (out)
			out[n] = *a;
		n++;
	}
	if (out)
		out[n] = '\'';
	return n + 1;
}

/* The command line as run_info.csv records it: one line a shell can rerun. */
static char *join_args(int argc, char **argv)
{
	size_t len = 1, at = 0;
	char *s;

	for (int i = 0; i < argc; i++)
		len += quote_arg(argv[i], NULL) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			s[at++] = ' ';
		at += quote_arg(argv[i], s + at);
	}
	s[at] = '\0';
	return s;
}

/*
 * --ready-fd: whoever started us (the SPANK plugin, holding a step's tasks
 * before their exec) learns that every target is traced and may let them go.
 */
static void tell_ready(int fd)
{
	if (fd <= 0)
		return;
	if (write(fd, "ready\n", 6) != 6)
		fprintf(stderr, "memattr-bpf: --ready-fd %d: %s\n", fd, strerror(errno));
	close(fd);
}

int trace_main(int argc, char **argv)
{
	char err[1024], outdir[PATH_MAX];
	struct options opt;
	struct spec_set specs;
	struct pid_list pids = {0};
	struct launch child = { .pid = -1, .gate_fd = -1 };
	struct sigaction caller_sigpipe;
	enum job_match match = JOB_MATCH_NONE;
	struct job_owner who = { .uid = JOB_ANY_UID };
	struct tracker *t;
	struct tracker_counters tc;
	struct session *s;
	char *cmdline = NULL;
	int ret, status, exit_code, child_fd = -1, outfd = -1;
	size_t ntraced = 0;
	char outfd_path[64];

	err[0] = '\0';

	ret = cli_parse(argc, argv, &opt, err, sizeof(err));
	if (ret > 0)
		return 0;
	if (ret < 0) {
		fprintf(stderr, "memattr-bpf: %s\n", err);
		cli_free(&opt);		/* --pid's list may be there already */
		return EXIT_USAGE;
	}
	install_signals(&caller_sigpipe);
	if (caps_check(err, sizeof(err))) {
		ret = without_root(&opt, err);
		cli_free(&opt);
		return ret;
	}
	spec_init(&specs);
	if (opt.mpi_calls || opt.heap)
		raise_fd_limit();
	if (load_specs(&opt, &specs, err, sizeof(err)))
		goto refuse;
	if (opt.output && output_check(opt.output, err, sizeof(err)))
		goto refuse;

	if (opt.target == TARGET_LAUNCH) {
		if (launch_prepare(&child, opt.cmd, &caller_sigpipe, err, sizeof(err)))
			goto refuse;
		pid_list_add(&pids, child.pid);
	} else if (resolve_targets(&opt, &pids, &match, &who, err, sizeof(err))) {
		goto refuse;
	}
	default_output(&opt, pids.pids[0], outdir, sizeof(outdir));
	if (!opt.output && output_check(outdir, err, sizeof(err)))
		goto refuse;

	cmdline = join_args(argc, argv);
	t = tracker_new(&opt, &specs, cmdline ? cmdline : "", err, sizeof(err));
	if (!t)
		goto refuse;
	/* Under sudo the directory is the user's to make: made as them, written through its descriptor. */
	if (output_under_sudo() &&
	    output_open_as_user(outdir, &outfd, outfd_path, sizeof(outfd_path), err, sizeof(err))) {
		fprintf(stderr, "memattr-bpf: %s\n", err);
		launch_abort(&child);
		tracker_finish(t);
		tracker_free(t);
		return EXIT_FAILURE;
	}
	s = tracker_new_session(t, opt.job, match);
	/* Later processes of the job join only as the owner's (discovery.h). */
	if (s)
		session_set_owner(s, who.uid, who.trusted);
	if (!s || start_tracing(t, s, &pids, match, opt.target == TARGET_LAUNCH, &ntraced) ||
	    tracker_open_output(t, s, outfd >= 0 ? outfd_path : outdir, err, sizeof(err))) {
		if (err[0])
			fprintf(stderr, "memattr-bpf: %s\n", err);
		launch_abort(&child);
		tracker_finish(t);
		tracker_free(t);
		return EXIT_FAILURE;
	}
	fprintf(stderr, "memattr-bpf: tracing %zu process%s%s%s; writing %s\n", ntraced,
		ntraced == 1 ? "" : "es", opt.job ? " of job " : "", opt.job ? opt.job : "", outdir);
	launch_go(&child);
	tell_ready(opt.ready_fd);

	/* Its exit ends the job: the last sample comes then, not up to an interval later. */
	child_fd = child.pid > 0 ? (int)syscall(SYS_pidfd_open, child.pid, 0) : -1;
	if (child_fd >= 0 && tracker_sample_on(t, child_fd)) {
		close(child_fd);
		child_fd = -1;
	}
	ret = tracker_run(t, &stop_requested);
	tracker_finish(t);
	tracker_counters(t, &tc);
	tracker_free(t);
	/* A result that could not be written is an error, never a quiet exit 0. */
	if (tc.output_errors) {
		fprintf(stderr, "memattr-bpf: %llu file%s in %s could not be written whole (above): the results are incomplete\n",
			(unsigned long long)tc.output_errors, tc.output_errors == 1 ? "" : "s", outdir);
		ret = -1;
	}
	exit_code = ret ? EXIT_FAILURE : 0;
	/* Stopped by SIGINT/SIGTERM, the contract is exit 0, whatever the same Ctrl-C did to the command. */
	if (launch_reap(&child, &status) && !ret && !stop_requested)
		exit_code = launch_exit_code(opt.cmd[0], status);
	if (child_fd >= 0)
		close(child_fd);
	pid_list_free(&pids);
	spec_free(&specs);
	cli_free(&opt);
	free(cmdline);
	return exit_code;

refuse:
	/* Nothing attached or created yet; what was read is freed (the sanitizers' leak check). */
	launch_abort(&child);
	pid_list_free(&pids);
	spec_free(&specs);
	cli_free(&opt);
	free(cmdline);
	return fail(err);
}
