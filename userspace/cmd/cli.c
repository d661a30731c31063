// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "node_name.h"
#include "num_arg.h"


void cli_usage(FILE *f)
{
	fputs("usage: memattr-bpf --job ID    [options]   every process of a batch job on this node\n"
	      "       memattr-bpf --pid P[,P] [options]   given processes (and their children)\n"
	      "       memattr-bpf [options] -- CMD ARGS   launch CMD and trace it from the start\n"
	      "       memattr-bpf daemon [options]        every job on this node (memattr-bpf daemon --help)\n"
	      "       memattr-bpf report DIR [RUN...]     DIR/report.html from a run's CSVs (no root needed); with RUNs, the model\n"
	      "       memattr-bpf merge DIR... -o OUT     one dataset from a job's per-node datasets\n"
	      "       memattr-bpf model RUN... [--predict P] per-component memory model from runs at several rank counts\n"
	      "       memattr-bpf export DIR [--format F] a run's resident memory as folded stacks, speedscope or pprof\n"
	      "       memattr-bpf diff A B [--fail-above PCT] two runs per rank and component; exit 1 past PCT% growth\n"
	      "options:\n"
	      "  --output DIR        where CSVs go (default ./memattr-<job or pid>); %n is this node's\n"
	      "                      name, %j the job ID (--output out/%n on every node of a job)\n"
	      "  --interval MS       sample period in ms (default 100)\n"
	      "  --pss-interval MS   shortest period between smaps reads for PSS (default 1000)\n"
	      "  --duration S        stop after S seconds (default: when all traced processes exit)\n"
	      "  --spec FILE         extra uprobe spec (repeatable)\n"
	      "  --spec-dir DIR      directory of built-in specs (default: next to the binary or installed)\n"
	      "  --mpi-calls         per-MPI-function growth (uprobes on the spec's MPI entry points; ~1 us a call)\n"
	      "  --heap              live heap per call site and library (uprobes on the malloc family; ~1-2 us a call)\n"
	      "  --job-user USER     with --job: the job USER's processes claim (user name or uid),\n"
	      "                      when processes of several users carry the ID in their environment\n"
	      "  --wait              wait for a job that has not started yet\n"
	      "  --ringbuf-mb N      BPF ring buffer size in MiB, a power of two (default 16)\n"
	      "  --compress          rank timelines gzip'ed (rank-<R>.csv.gz, readable while written)\n"
	      "  --quiet             no end-of-run summary on stdout\n"
	      "  --verbose           libbpf and attribution diagnostics on stderr\n"
	      "  --attribution MODE  exact (default): every page fault's owner, as it happens; sampled:\n"
	      "                      no program at any page fault, pages counted at samples where the\n"
	      "                      components drift from the kernel's total (docs/attribution.md)\n"
	      "  --no-fault-frame    a program at every page fault's entry gives its address, not the\n"
	      "                      fault's own frame (for a kernel whose frames mislead the tool)\n"
	      "  --infer-budget MIB  at attach, read at most MIB of each process's memory to infer who holds\n"
	      "                      what it allocated before (default 1024; 0: no limit)\n"
	      "  --no-infer          leave memory allocated before attach unattributed (no read of it)\n"
	      "  --problem-size N    the run's problem size, kept in run_info.csv for `memattr-bpf model`\n"
	      "  --socket PATH       without root, --job asks the daemon here (default /run/memattr-bpf/memattr.sock)\n"
	      "  --ready-fd FD       write one line to descriptor FD once every target is traced (launchers)\n"
	      "  --help, --version\n", f);
}

static int parse_pids(const char *arg, struct options *o, char *err, size_t errlen)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long v;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *p;

		if (num_parse_uint(tok, 1, INT_MAX, &v)) {
			snprintf(err, errlen, "--pid: '%s' is not a process ID", tok);
			free(copy);
			return -1;
		}
		p = realloc(o->pids, (o->npids + 1) * sizeof(*p));
		if (!p) {
			free(copy);
			return -1;
		}
		o->pids = p;
		o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	if (!o->npids) {
		snprintf(err, errlen, "--pid: no process ID given");
		return -1;
	}
	return 0;
}

enum {
	OPT_JOB = 256, OPT_PID, OPT_OUTPUT, OPT_INTERVAL, OPT_PSS_INTERVAL,
	OPT_DURATION, OPT_SPEC, OPT_SPEC_DIR, OPT_WAIT, OPT_RINGBUF, OPT_QUIET,
	OPT_VERBOSE, OPT_HELP, OPT_VERSION, OPT_MPI_CALLS, OPT_HEAP, OPT_COMPRESS,
	OPT_SOCKET, OPT_READY_FD, OPT_NO_FAULT_FRAME, OPT_JOB_USER, OPT_NO_INFER,
	OPT_INFER_BUDGET, OPT_PROBLEM_SIZE, OPT_ATTRIBUTION,
};

static const struct option long_opts[] = {
	{ "job", required_argument, NULL, OPT_JOB },
	{ "job-user", required_argument, NULL, OPT_JOB_USER },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "pss-interval", required_argument, NULL, OPT_PSS_INTERVAL },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "spec", required_argument, NULL, OPT_SPEC },
	{ "spec-dir", required_argument, NULL, OPT_SPEC_DIR },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "mpi-calls", no_argument, NULL, OPT_MPI_CALLS },
	{ "heap", no_argument, NULL, OPT_HEAP },
	{ "ringbuf-mb", required_argument, NULL, OPT_RINGBUF },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "compress", no_argument, NULL, OPT_COMPRESS },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "ready-fd", required_argument, NULL, OPT_READY_FD },
	{ "no-fault-frame", no_argument, NULL, OPT_NO_FAULT_FRAME },
	{ "no-infer", no_argument, NULL, OPT_NO_INFER },
	{ "attribution", required_argument, NULL, OPT_ATTRIBUTION },
	{ "infer-budget", required_argument, NULL, OPT_INFER_BUDGET },
	{ "problem-size", required_argument, NULL, OPT_PROBLEM_SIZE },
	{ NULL, 0, NULL, 0 },
};

/* A user name, or a uid (numeric, known to the system or not). */
static int parse_user(const char *arg, struct options *o, char *err, size_t errlen)
{
	struct passwd *pw = getpwnam(arg);
	unsigned long v;

	if (pw) {
		o->job_uid = pw->pw_uid;
		return 0;
	}
	if (num_parse_uint(arg, 0, (uid_t)-2, &v)) {
		snprintf(err, errlen, "--job-user: '%s' is neither a user name nor a uid", arg);
		return -1;
	}
	o->job_uid = (uid_t)v;
	return 0;
}

static int parse_one(int c, const char *arg, struct options *o, char *err, size_t errlen)
{
	unsigned long v;

	switch (c) {
	case OPT_JOB:
		if (!arg[0]) {
			snprintf(err, errlen, "--job: empty job ID");
			return -1;
		}
		o->job = arg;
		return 0;
	case OPT_JOB_USER:
		return parse_user(arg, o, err, errlen);
	case OPT_PID:
		return parse_pids(arg, o, err, errlen);
	case OPT_OUTPUT:
		if (!arg[0]) {
			snprintf(err, errlen, "--output: empty path");
			return -1;
		}
		o->output = arg;
		return 0;
	case OPT_INTERVAL:
	case OPT_PSS_INTERVAL:
		if (num_parse_uint(arg, 1, 3600 * 1000, &v)) {
			snprintf(err, errlen, "--%s: '%s' is not a positive number of milliseconds",
				 c == OPT_INTERVAL ? "interval" : "pss-interval", arg);
			return -1;
		}
		if (c == OPT_INTERVAL)
			o->interval_ms = v;
		else
			o->pss_interval_ms = v;
		return 0;
	case OPT_DURATION:
		if (num_parse_positive(arg, 1e9, &o->duration_s)) {
			snprintf(err, errlen, "--duration: '%s' is not a positive number of seconds", arg);
			return -1;
		}
		return 0;
	case OPT_SPEC:
		if (o->nspecs == CLI_MAX_SPECS) {
			snprintf(err, errlen, "--spec: at most %d spec files", CLI_MAX_SPECS);
			return -1;
		}
		o->specs[o->nspecs++] = arg;
		return 0;
	case OPT_SPEC_DIR:
		o->spec_dir = arg;
		return 0;
	case OPT_WAIT:
		o->wait = true;
		return 0;
	case OPT_MPI_CALLS:
		o->mpi_calls = true;
		return 0;
	case OPT_HEAP:
		o->heap = true;
		return 0;
	case OPT_RINGBUF:
		if (num_parse_uint(arg, 1, 1024, &v) || (v & (v - 1))) {
			snprintf(err, errlen, "--ringbuf-mb: '%s' is not a power of two between 1 and 1024", arg);
			return -1;
		}
		o->ringbuf_mb = v;
		return 0;
	case OPT_QUIET:
		o->quiet = true;
		return 0;
	case OPT_COMPRESS:
		o->compress = true;
		return 0;
	case OPT_VERBOSE:
		o->verbose = true;
		return 0;
	case OPT_NO_FAULT_FRAME:
		o->no_fault_frame = true;
		return 0;
	case OPT_NO_INFER:
		o->no_infer = true;
		return 0;
	case OPT_ATTRIBUTION:
		if (attribution_parse(arg, &o->sampled)) {
			snprintf(err, errlen, "--attribution: '%s' is not exact or sampled", arg);
			return -1;
		}
		return 0;
	case OPT_INFER_BUDGET:
		/* 0 is no limit: stored as UINT_MAX, 0 in options being the default. */
		if (num_parse_uint(arg, 0, 1u << 30, &v)) {
			snprintf(err, errlen, "--infer-budget: '%s' is not a number of MiB", arg);
			return -1;
		}
		o->infer_budget_mib = v ? (unsigned int)v : UINT_MAX;
		return 0;
	case OPT_PROBLEM_SIZE:
		if (num_parse_positive(arg, 1e300, &o->problem_size)) {
			snprintf(err, errlen, "--problem-size: '%s' is not a positive number in digits (1000000, 2.5)", arg);
			return -1;
		}
		return 0;
	case OPT_SOCKET:
		o->socket = arg;
		return 0;
	case OPT_READY_FD:
		if (num_parse_uint(arg, 3, INT_MAX, &v)) {
			snprintf(err, errlen, "--ready-fd: '%s' is not a descriptor number above 2", arg);
			return -1;
		}
		o->ready_fd = (int)v;
		return 0;
	}
	return -1;
}

/*
 * --output out/%n: one command for every node of a job (srun ... memattr-bpf)
 * gives each node its own directory; %j is the job (--job, or the Slurm job
 * the tool itself runs in).
 */
static int expand_output(struct options *o, char *err, size_t errlen)
{
	char node[NODE_NAME_MAX], path[PATH_MAX];
	const char *job = o->job ? o->job : getenv("SLURM_JOB_ID");

	if (!o->output || !strchr(o->output, '%'))
		return 0;
	node_name(node, sizeof(node));
	if (node_expand_path(o->output, node, job, path, sizeof(path))) {
		snprintf(err, errlen, "--output: '%s' has a '%%' that is not %%n (node), %%j (job) or %%%% (a percent sign), or is too long",
			 o->output);
		return -1;
	}
	if (!path[0]) {
		snprintf(err, errlen, "--output: '%s' is empty once expanded", o->output);
		return -1;
	}
	o->output_expanded = strdup(path);
	if (!o->output_expanded) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->output = o->output_expanded;
	return 0;
}

int cli_parse(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
	int c, ntargets;

	memset(o, 0, sizeof(*o));
	o->job_uid = (uid_t)-1;
	o->interval_ms = 100;
	o->pss_interval_ms = 1000;
	o->ringbuf_mb = 16;	/* half of it overflowed as a node's ranks started at once */
	opterr = 0;
	optind = 1;
	/* '+': stop at the first non-option, so CMD's own flags stay CMD's. */
	while ((c = getopt_long(argc, argv, "+h", long_opts, NULL)) != -1) {
		if (c == 'h' || c == OPT_HELP) {
			cli_usage(stdout);
			return 1;
		}
		if (c == OPT_VERSION) {
			printf("memattr-bpf %s\n", MEMATTR_VERSION);
			return 1;
		}
		if (c == '?') {
			/* getopt_long sets optopt to a known option's value when its argument is missing. */
			if (optopt >= OPT_JOB)
				snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			else
				snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
		if (parse_one(c, optarg, o, err, errlen))
			return -1;
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--")) {
			snprintf(err, errlen, "unexpected argument '%s' (a command to launch goes after --)",
				 argv[optind]);
			return -1;
		}
		o->cmd = &argv[optind];
	}
	ntargets = !!o->job + !!o->npids + !!o->cmd;
	if (ntargets != 1) {
		snprintf(err, errlen, ntargets ? "give only one of --job, --pid and -- CMD"
					       : "nothing to trace: give --job ID, --pid P or -- CMD (see --help)");
		return -1;
	}
	o->target = o->job ? TARGET_JOB : o->npids ? TARGET_PIDS : TARGET_LAUNCH;
	if (o->job_uid != (uid_t)-1 && o->target != TARGET_JOB) {
		snprintf(err, errlen, "--job-user applies to --job only");
		return -1;
	}
	if (o->wait && o->target != TARGET_JOB) {
		snprintf(err, errlen, "--wait applies to --job only");
		return -1;
	}
	/* Which MPI function a page went to is known only at the fault that brought it in. */
	if (o->sampled && o->mpi_calls) {
		snprintf(err, errlen, "--mpi-calls needs --attribution exact (the faults inside each MPI call)");
		return -1;
	}
	return expand_output(o, err, errlen);
}

void cli_free(struct options *o)
{
	free(o->pids);
	o->pids = NULL;
	free(o->output_expanded);
	o->output_expanded = NULL;
}
