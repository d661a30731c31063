// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf model RUN... [--predict RANKS[,SIZE]] [-o FILE]`: the
 * command. Reads every run first and checks they belong together (one
 * program, the same components, enough rank counts, sizes given for all
 * or none), then fits each component (model_fit.c) and prints
 * (model_print.c). The CSV goes to a temporary file beside FILE, renamed
 * over it once whole: a failure leaves no half-written file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_args.h"
#include "model.h"

#define MIN_RUNS	3
#define MIN_RANK_COUNTS	3
#define SMALL_SHARE	0.01	/* text shows components above 1% of the total */
#define FOREIGN_SHARE	0.05	/* a component missing from a run and this big: another configuration */

static void usage(FILE *f)
{
	fputs("usage: memattr-bpf model RUN[:SIZE]... [--predict RANKS[,SIZE]] [-o FILE]\n"
	      "                         [--stat max|mean] [--pss] [--all]\n"
	      "  Fits each component's per-rank peak over runs of one program at several\n"
	      "  rank counts (and problem sizes: RUN:SIZE, or problem_size in run_info.csv)\n"
	      "  and predicts it at RANKS ranks, in MiB per rank with a 95% interval.\n"
	      "  -p, --predict RANKS[,SIZE]  the scale to predict\n"
	      "  -o, --output FILE           also write the models as CSV to FILE\n"
	      "  --stat max|mean             fit the largest rank's peak (default) or the mean\n"
	      "  --pss                       fit peak pss instead of peak rss\n"
	      "  --all                       print every component, however small\n", f);
}

static int fail(const char *msg)
{
	return cmd_fail("model", "%s", msg);
}

static const struct option opts[] = {
	{ "predict", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "stat", required_argument, NULL, 'S' },
	{ "pss", no_argument, NULL, 'P' },
	{ "all", no_argument, NULL, 'A' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct args {
	const char *csv;
	double pred_p, pred_n;	/* pred_p 0: none; pred_n < 0: none */
	enum md_stat stat;
	bool pss, all;
};

/* "4096" or "4096,1e6": ranks a positive integer, size a positive number. */
static int parse_predict(const char *s, double *p, double *n, char *err, size_t errlen)
{
	char *end;
	long long r;

	errno = 0;
	r = strtoll(s, &end, 10);
	if (end == s || errno || r < 1 || r > INT_MAX || (*end && *end != ',') || s[0] == '+' ||
	    s[0] == ' ') {
		snprintf(err, errlen, "--predict '%s': RANKS must be a whole number of ranks, at least 1 (RANKS[,SIZE])",
			 s);
		return -1;
	}
	*p = (double)r;
	*n = -1;
	if (*end == ',') {
		const char *v = end + 1;

		errno = 0;
		*n = strtod(v, &end);
		if (end == v || *end || errno || !(*n > 0) || !isfinite(*n)) {
			snprintf(err, errlen, "--predict '%s': SIZE must be a positive number", s);
			return -1;
		}
	}
	return 0;
}

/* -1 bad, 0 ok, 1 --help. */
static int parse_args(int argc, char **argv, struct args *a, int *first, char *err, size_t errlen)
{
	int c;

	memset(a, 0, sizeof(*a));
	a->pred_n = -1;
	cmd_args_reset();
	while ((c = getopt_long(argc, argv, "p:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_predict(optarg, &a->pred_p, &a->pred_n, err, errlen))
				return -1;
			break;
		case 'o':
			if (cmd_args_name("-o", "file", optarg, &a->csv, err, errlen))
				return -1;
			break;
		case 'S':
			if (!strcmp(optarg, "max"))
				a->stat = MD_STAT_MAX;
			else if (!strcmp(optarg, "mean"))
				a->stat = MD_STAT_MEAN;
			else {
				snprintf(err, errlen, "--stat '%s': max or mean", optarg);
				return -1;
			}
			break;
		case 'P':
			a->pss = true;
			break;
		case 'A':
			a->all = true;
			break;
		case 'h':
			return 1;
		default:
			cmd_args_unknown(argv, err, errlen);
			return -2;
		}
	}
	*first = optind;
	return 0;
}

/* The CSV into FILE.tmp.PID beside it, renamed over FILE when whole. */
static int write_csv(const char *path, const struct md_report *rep, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, bad, saved;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	bad = md_print_csv(f, rep) || fflush(f) || ferror(f) || fsync(fileno(f));
	saved = errno;
	if (fclose(f) && !bad) {
		bad = 1;
		saved = errno;
	}
	if (!bad && rename(tmp, path)) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		unlink(tmp);
		snprintf(err, errlen, "%s: cannot write: %s", path, saved ? strerror(saved) : "I/O error");
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The runs belong together: one program, enough rank counts, sizes for all or none. */
static int check_runs(const struct md_run *runs, size_t n, bool *use_size, char *err, size_t errlen)
{
	double ps[MD_MAX_RUNS];
	size_t distinct = 0, sized = 0;
	const struct md_run *named = NULL;
	char list[256] = "";
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		if (runs[i].app[0]) {
			if (named && strcmp(named->app, runs[i].app)) {
				snprintf(err, errlen, "runs of different programs: %s (%s) and %s (%s)",
					 named->app, named->dir, runs[i].app, runs[i].dir);
				return -1;
			}
			named = named ? named : &runs[i];
		}
		ps[i] = runs[i].ranks;
		sized += runs[i].size > 0;
	}
	qsort(ps, n, sizeof(*ps), cmp_double);
	for (size_t i = 0; i < n; i++)
		if (!i || ps[i] != ps[i - 1]) {
			distinct++;
			if (at < sizeof(list))
				at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%.0f", i ? ", " : "", ps[i]);
		}
	if (distinct < MIN_RANK_COUNTS) {
		snprintf(err, errlen, "the runs are at %zu rank count%s (%s): a model in P needs runs at %d or more",
			 distinct, distinct == 1 ? "" : "s", list, MIN_RANK_COUNTS);
		return -1;
	}
	*use_size = false;
	if (sized && sized < n) {
		for (size_t i = 0; i < n; i++)
			if (!(runs[i].size > 0)) {
				snprintf(err, errlen, "%s has no problem size while other runs have one: give it as %s:SIZE (or problem_size in its run_info.csv)",
					 runs[i].dir, runs[i].dir);
				return -1;
			}
	}
	for (size_t i = 1; i < n && sized; i++)
		if (runs[i].size != runs[0].size)
			*use_size = true;
	return 0;
}

static double comp_value(const struct md_run *r, const char *name, bool *found)
{
	for (size_t i = 0; i < r->ncomp; i++)
		if (!strcmp(r->comp[i].name, name)) {
			*found = true;
			return r->comp[i].value;
		}
	*found = false;
	return 0;
}

static int cmp_result(const void *a, const void *b)
{
	const struct md_result *x = a, *y = b;

	if (!strcmp(x->name, "total") != !strcmp(y->name, "total"))
		return !strcmp(x->name, "total") ? -1 : 1;
	if (x->largest != y->largest)
		return x->largest > y->largest ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * A total fitted on its own can follow none of its parts: the components
 * grow by different laws (the program's arrays with P, the MPI library's
 * per-peer state with log P) and one two-term model of their sum picks the
 * wrong one outside the runs. So the prediction of total is the sum of the
 * components' predictions, each clamped at 0 as printed; its own fit stays
 * beside it as a check.
 */
static void total_from_components(struct md_report *rep)
{
	struct md_result *t = NULL;
	double sum = 0, var = 0;
	bool interval = true;

	for (size_t i = 0; i < rep->nres; i++) {
		struct md_result *r = &rep->res[i];

		if (!strcmp(r->name, "total")) {
			t = r;
			continue;
		}
		sum += fmax(r->pred, 0);
		if (r->half < 0)
			interval = false;
		var += r->half * r->half;
	}
	if (!t || !t->predict || rep->nres < 2)
		return;
	t->summed = true;
	t->alone_pred = t->pred;
	t->alone_half = t->half;
	t->pred = sum;
	t->half = interval ? sqrt(var) : -1;
	md_assess(t, rep->nruns, rep->pred_p, rep->pred_n);
}

/*
 * Every component of any run, fitted: a component a run lacks holds 0
 * bytes there, unless it is a sizeable share of the total elsewhere (then
 * the runs are of different configurations: refused).
 */
static int fit_all(struct md_report *rep, const struct args *a, char *err, size_t errlen)
{
	const struct md_run *runs = rep->runs;
	size_t n = rep->nruns, largest = 0;
	struct md_fit_opts fo = { .use_size = rep->use_size };
	double total_max = 0;

	for (size_t i = 0; i < n; i++) {
		bool f;

		total_max = fmax(total_max, comp_value(&runs[i], "total", &f));
		if (runs[i].ranks > runs[largest].ranks)
			largest = i;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < runs[i].ncomp; c++) {
			const char *name = runs[i].comp[c].name;
			struct md_point pt[MD_MAX_RUNS];
			struct md_result *r, *grown;
			bool seen = false, f;

			for (size_t k = 0; k < rep->nres && !seen; k++)
				seen = !strcmp(rep->res[k].name, name);
			if (seen)
				continue;
			for (size_t k = 0; k < n; k++) {
				pt[k] = (struct md_point){ runs[k].ranks, runs[k].size, comp_value(&runs[k], name, &f) };
				if (!f && runs[i].comp[c].value >= FOREIGN_SHARE * total_max) {
					char b[48];

					md_fmt_bytes(runs[i].comp[c].value, b, sizeof(b));
					snprintf(err, errlen, "component %s (%s per rank in %s) is not in %s: runs of different programs or MPI libraries?",
						 name, b, runs[i].dir, runs[k].dir);
					return -1;
				}
			}
			grown = realloc(rep->res, (rep->nres + 1) * sizeof(*grown));
			if (!grown) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			rep->res = grown;
			r = memset(&grown[rep->nres], 0, sizeof(*r));
			snprintf(r->name, sizeof(r->name), "%s", name);
			if (md_choose(pt, n, &fo, &r->m, &r->runner_up)) {
				snprintf(err, errlen, "component %s: no model can be cross-validated on these runs", name);
				return -1;
			}
			rep->nres++;
			r->largest = pt[largest].y;
			r->half = -1;
			if (a->pred_p > 0) {
				r->predict = true;
				r->pred = md_eval(&r->m, rep->pred_p, rep->pred_n);
				r->half = md_interval(&r->m, rep->pred_p, rep->pred_n);
				r->extrap = rep->pred_p / runs[largest].ranks;
			}
			md_assess(r, n, rep->pred_p, rep->pred_n);
		}
	total_from_components(rep);
	qsort(rep->res, rep->nres, sizeof(*rep->res), cmp_result);
	rep->small_below = a->all ? 0 : SMALL_SHARE * total_max;
	return 0;
}

/* --predict's SIZE against the runs' sizes. */
static int check_predict(struct md_report *rep, const struct args *a, char *err, size_t errlen)
{
	const struct md_run *r0 = &rep->runs[0];

	rep->pred_p = a->pred_p;
	rep->pred_n = a->pred_n;
	if (a->pred_p <= 0)
		return 0;
	if (rep->use_size && a->pred_n < 0) {
		snprintf(err, errlen, "--predict %.0f: the runs differ in problem size: give RANKS,SIZE",
			 a->pred_p);
		return -1;
	}
	if (!rep->use_size && a->pred_n >= 0) {
		if (!(r0->size > 0)) {
			snprintf(err, errlen, "--predict %.0f,%g: the runs give no problem size to model it by (RUN:SIZE, or problem_size in run_info.csv)",
				 a->pred_p, a->pred_n);
			return -1;
		}
		if (a->pred_n != r0->size) {
			snprintf(err, errlen, "--predict %.0f,%g: every run is at size %g: a model of these runs cannot predict another size",
				 a->pred_p, a->pred_n, r0->size);
			return -1;
		}
	}
	if (!rep->use_size)
		rep->pred_n = r0->size;
	return 0;
}

/*
 * The runs named by args (RUN or RUN:SIZE) read, checked and fitted into
 * rep (rep->runs and rep->res are the caller's to free, *runs its runs
 * array). 0, or -1 with err.
 */
static int build(struct md_report *rep, struct md_run **runsp, char *const *args, size_t n,
		 const struct args *a, char *err, size_t errlen)
{
	struct md_run *runs;

	if (n < MIN_RUNS) {
		snprintf(err, errlen, "%zu run%s given: a model in P needs at least %d, at %d or more rank counts (one is left out in turn to cross-validate)",
			 n, n == 1 ? "" : "s", MIN_RUNS, MIN_RANK_COUNTS);
		return -1;
	}
	if (n > MD_MAX_RUNS) {
		snprintf(err, errlen, "%zu runs given: at most %d", n, MD_MAX_RUNS);
		return -1;
	}
	runs = calloc(n, sizeof(*runs));
	*runsp = runs;
	if (!runs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char dir[4096];
		double size;

		if (md_split_run_arg(args[i], dir, sizeof(dir), &size)) {
			snprintf(err, errlen, "%.64s...: path too long", args[i]);
			return -1;
		}
		if (md_read_run(&runs[i], dir, size, a->stat, a->pss, err, errlen))
			return -1;
	}
	rep->runs = runs;
	rep->nruns = n;
	rep->stat = a->stat;
	rep->use_pss = a->pss;
	for (size_t i = 0; i < n && !rep->app; i++)
		if (runs[i].app[0])
			rep->app = runs[i].app;
	return check_runs(runs, n, &rep->use_size, err, errlen) || check_predict(rep, a, err, errlen) ||
	       fit_all(rep, a, err, errlen) ? -1 : 0;
}

static void free_built(struct md_report *rep, struct md_run *runs, size_t n)
{
	for (size_t i = 0; i < n && runs; i++)
		md_run_free(&runs[i]);
	free(runs);
	free(rep->res);
}

int md_model_html(FILE *f, char *const *dirs, size_t n, char *err, size_t errlen)
{
	struct md_report rep = {0};
	struct md_run *runs = NULL;
	struct args a = { .pred_n = -1 };
	int ret = -1;

	if (!build(&rep, &runs, dirs, n, &a, err, errlen)) {
		ret = md_print_html(f, &rep);
		if (ret)
			snprintf(err, errlen, "cannot write the model: %s", strerror(errno ? errno : EIO));
	}
	free_built(&rep, runs, n);
	return ret;
}

int model_main(int argc, char **argv)
{
	struct md_report rep = {0};
	struct md_run *runs = NULL;
	char err[MD_ERRLEN];
	struct args a;
	size_t n = 0;
	int first = 0, r, ret = EXIT_FAILURE;

	r = parse_args(argc, argv, &a, &first, err, sizeof(err));
	/* A bad option value is a refused input here (1); an unknown option, usage (2). */
	if (r == -1)
		return fail(err);
	r = cmd_args_done("model", r, err, usage);
	if (r >= 0)
		return r;
	if (first >= argc) {
		usage(stderr);
		return CMD_EXIT_USAGE;
	}
	n = (size_t)(argc - first);
	if (build(&rep, &runs, argv + first, n, &a, err, sizeof(err)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (runs[i].from_timelines)
			fprintf(stderr, "memattr-bpf model: %s has no summary.csv: its peaks come from the timelines\n",
				runs[i].dir);
	if (a.csv && write_csv(a.csv, &rep, err, sizeof(err)))
		goto out;
	if (md_print_text(stdout, &rep) || fflush(stdout)) {
		snprintf(err, sizeof(err), "cannot write the output: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (ret)
		fail(err);
	free_built(&rep, runs, n);
	return ret;
}
