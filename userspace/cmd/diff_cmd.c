// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf diff A B [-o DIR] [--fail-above PCT]`: two runs of a
 * program (before and after a change, two MPI libraries, two sizes) per
 * rank and component, and a gate a CI job can run: with --fail-above, exit
 * 1 naming the component whose peak grew by more than PCT percent of A's
 * total peak. Figures and formats are export/'s (exp_diff*.c); the
 * options, messages and exit statuses are here.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diff_cmd.h"
#include "export.h"
#include "num_arg.h"

#define EXIT_USAGE	2

static void usage(FILE *f)
{
	fputs("usage: memattr-bpf diff A B [-o DIR] [--fail-above PCT]\n"
	      "  Two runs' per-rank figures side by side (ranks matched by rank): each\n"
	      "  component's peak and final rss and pss in A and B and the change, and\n"
	      "  what each MPI function held.\n"
	      "  -o, --output DIR       also write DIR/diff.csv, DIR/mpi_diff.csv, and\n"
	      "                         difffolded.pl's form of each rank at its peak (diff.folded)\n"
	      "                         and at the end (diff-end.folded)\n"
	      "  -F, --fail-above PCT   exit 1 when a component's peak rss grew by more than\n"
	      "                         PCT percent of A's total peak of that rank, naming it\n", f);
}

static const struct option opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "fail-above", required_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int diff_parse_args(int argc, char **argv, struct diff_args *a, char *err, size_t errlen)
{
	int c;

	memset(a, 0, sizeof(*a));
	optind = 0;	/* glibc: start afresh (the tests parse more than once) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:F:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0]) {
				snprintf(err, errlen, "-o: empty directory name");
				return -1;
			}
			a->out = optarg;
			break;
		case 'F':
			/* 0 is a gate too: any growth at all fails. */
			if (strcmp(optarg, "0") && num_parse_positive(optarg, 1e6, &a->fail_above)) {
				snprintf(err, errlen, "--fail-above '%s': a percentage, 0 or more", optarg);
				return -1;
			}
			a->gate = true;
			break;
		case 'h':
			return 1;
		default:
			snprintf(err, errlen, "unknown option or missing value: %s (see --help)",
				 argv[optind - 1]);
			return -1;
		}
	}
	if (argc - optind != 2) {
		snprintf(err, errlen, "two run directories, A and B (%d given)", argc - optind);
		return -1;
	}
	a->a = argv[optind];
	a->b = argv[optind + 1];
	return 0;
}

struct outputs {
	const struct ex_diff *d;
	const struct ex_data *a, *b;
};

static int w_csv(FILE *f, void *arg, char *err, size_t errlen)
{
	if (!ex_diff_csv(f, ((struct outputs *)arg)->d))
		return 0;
	snprintf(err, errlen, "write error");
	return -1;
}

static int w_fn_csv(FILE *f, void *arg, char *err, size_t errlen)
{
	if (!ex_diff_fn_csv(f, ((struct outputs *)arg)->d))
		return 0;
	snprintf(err, errlen, "write error");
	return -1;
}

/* Both runs' stacks at one moment, as difffolded.pl writes them. */
static int w_folded_at(FILE *f, const struct outputs *o, enum ex_at at, char *err, size_t errlen)
{
	struct ex_select sel = { .at = at };
	struct ex_profile pa, pb;
	int ret = -1;

	if (ex_build(o->a, &sel, &pa, err, errlen))
		return -1;
	if (ex_build(o->b, &sel, &pb, err, errlen)) {
		ex_profile_free(&pa);
		return -1;
	}
	ret = ex_diff_folded(f, &pa, &pb, EX_RSS);
	if (ret)
		snprintf(err, errlen, "write error or out of memory");
	ex_profile_free(&pa);
	ex_profile_free(&pb);
	return ret;
}

static int w_folded_peak(FILE *f, void *arg, char *err, size_t errlen)
{
	return w_folded_at(f, arg, EX_AT_PEAK, err, errlen);
}

/* At the end mpi is split by MPI function: where a leak in the library shows by name. */
static int w_folded_end(FILE *f, void *arg, char *err, size_t errlen)
{
	return w_folded_at(f, arg, EX_AT_END, err, errlen);
}

/* DIR's files, each whole; DIR is made when missing. */
static int write_dir(const char *dir, const struct ex_data *a, const struct ex_data *b,
		     const struct ex_diff *d, char *err, size_t errlen)
{
	static const char *const names[] = {
		"diff.csv", "mpi_diff.csv", "diff.folded", "diff-end.folded",
	};
	int (*const fns[])(FILE *, void *, char *, size_t) = {
		w_csv, w_fn_csv, w_folded_peak, w_folded_end,
	};
	struct outputs o = { .d = d, .a = a, .b = b };

	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
			snprintf(err, errlen, "%.64s...: path too long", dir);
			return -1;
		}
		if (ex_output(path, fns[i], &o, err, errlen))
			return -1;
	}
	return 0;
}

/*
 * The stack below the grown component that grew most at the peak (an
 * allocation stack, an MPI function at the end): what to look at first.
 * Nothing is said when the runs have no such stack.
 */
static void name_stack(const struct ex_data *a, const struct ex_data *b, const struct ex_growth *g)
{
	static const enum ex_at moments[] = { EX_AT_PEAK, EX_AT_END };
	char err[EX_ERRLEN], stack[1024], grew[32];

	for (size_t i = 0; i < sizeof(moments) / sizeof(moments[0]); i++) {
		struct ex_select sel = { .at = moments[i], .one_rank = true, .rank = g->rank };
		struct ex_profile pa, pb;
		int64_t growth = 0;
		int r;

		if (ex_build(a, &sel, &pa, err, sizeof(err)))
			return;
		if (ex_build(b, &sel, &pb, err, sizeof(err))) {
			ex_profile_free(&pa);
			return;
		}
		r = ex_diff_top_stack(&pa, &pb, g->rank, g->component, stack, sizeof(stack), &growth);
		ex_profile_free(&pa);
		ex_profile_free(&pb);
		if (r == 1) {
			rp_fmt_bytes((double)growth, grew, sizeof(grew));
			fprintf(stderr, "memattr-bpf diff: rank %d: the stack that grew most in %s (%s): %s (+%s)\n",
				g->rank, g->component, moments[i] == EX_AT_PEAK ? "at the peak" : "at the end",
				stack, grew);
			return;
		}
	}
}

int diff_main(int argc, char **argv)
{
	struct diff_args a;
	struct ex_data da, db;
	struct ex_diff d;
	struct ex_growth g;
	char err[EX_ERRLEN];
	int r, ret = EXIT_FAILURE;

	r = diff_parse_args(argc, argv, &a, err, sizeof(err));
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "memattr-bpf diff: %s\n", err);
		return EXIT_USAGE;
	}
	if (ex_load(&da, a.a, err, sizeof(err))) {
		fprintf(stderr, "memattr-bpf diff: %s\n", err);
		return EXIT_FAILURE;
	}
	if (ex_load(&db, a.b, err, sizeof(err))) {
		fprintf(stderr, "memattr-bpf diff: %s\n", err);
		ex_data_free(&da);
		return EXIT_FAILURE;
	}
	if (ex_diff_build(&da, &db, &d)) {
		fprintf(stderr, "memattr-bpf diff: out of memory\n");
		goto out;
	}
	if (ex_diff_text(stdout, &d, a.a, a.b) || fflush(stdout)) {
		fprintf(stderr, "memattr-bpf diff: cannot write the output: %s\n", strerror(errno));
		goto out_diff;
	}
	if (a.out && write_dir(a.out, &da, &db, &d, err, sizeof(err))) {
		fprintf(stderr, "memattr-bpf diff: %s\n", err);
		goto out_diff;
	}
	ret = 0;
	if (a.gate && ex_diff_over(&d, a.fail_above, &g)) {
		char grew[32], base[32];

		rp_fmt_bytes((double)g.growth, grew, sizeof(grew));
		rp_fmt_bytes((double)g.base, base, sizeof(base));
		fprintf(stderr, "memattr-bpf diff: rank %d: %s's peak grew by %s, %.1f%% of A's total peak (%s), above %g%%\n",
			g.rank, g.component, grew, g.pct, base, a.fail_above);
		name_stack(&da, &db, &g);
		ret = EXIT_FAILURE;
	}
out_diff:
	ex_diff_free(&d);
out:
	ex_data_free(&da);
	ex_data_free(&db);
	return ret;
}
