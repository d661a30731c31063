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

#include "cmd_args.h"
#include "diff_cmd.h"
#include "export.h"
#include "num_arg.h"

static void usage(FILE *f)
{
	fputs("usage: memattr-bpf diff A B [-o DIR] [--fail-above PCT]\n"
	      "  Two runs' per-rank figures side by side (ranks matched by rank): each\n"
	      "  component's peak and final rss and pss in A and B and the change, and\n"
	      "  what each MPI function held.\n"
	      "  -o, --output DIR       also write DIR/diff.csv, DIR/mpi_diff.csv, difffolded.pl's\n"
	      "                         form (stack A B) of each rank at its peak (diff.folded) and\n"
	      "                         at the end (diff-end.folded), a page (diff.html: per rank\n"
	      "                         and component, then the stacks that changed most), and\n"
	      "                         each run's pprof profile\n"
	      "                         at the peak (a.pb.gz, b.pb.gz) and the end (a-end.pb.gz,\n"
	      "                         b-end.pb.gz) for pprof's base convention:\n"
	      "                           go tool pprof -top -base DIR/a.pb.gz DIR/b.pb.gz\n"
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
	cmd_args_reset();
	while ((c = getopt_long(argc, argv, "o:F:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (cmd_args_name("-o", "directory", optarg, &a->out, err, errlen))
				return -1;
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
			cmd_args_unknown(argv, err, errlen);
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

/* Both runs' profiles at each rank's peak ([0]) and at the end ([1]), built once. */
struct outputs {
	const struct ex_diff *d;
	const char *name_a, *name_b;
	struct ex_profile a[2], b[2];
	int at;		/* the moment the writer at hand takes */
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
static int w_folded(FILE *f, void *arg, char *err, size_t errlen)
{
	struct outputs *o = arg;

	if (!ex_diff_folded(f, &o->a[o->at], &o->b[o->at], EX_RSS))
		return 0;
	snprintf(err, errlen, "write error or out of memory");
	return -1;
}

/* The page: per rank and component, then the stacks that changed most. */
static int w_html(FILE *f, void *arg, char *err, size_t errlen)
{
	struct outputs *o = arg;

	if (!ex_diff_html(f, o->d, o->name_a, o->name_b, &o->a[0], &o->b[0], &o->a[1], &o->b[1]))
		return 0;
	snprintf(err, errlen, "write error or out of memory");
	return -1;
}

/* One run's profile for `pprof -base A B`: every sample type, so the two merge. */
static int w_pprof_a(FILE *f, void *arg, char *err, size_t errlen)
{
	struct outputs *o = arg;

	return ex_write_pprof(f, &o->a[o->at], EX_RSS, err, errlen);
}

static int w_pprof_b(FILE *f, void *arg, char *err, size_t errlen)
{
	struct outputs *o = arg;

	return ex_write_pprof(f, &o->b[o->at], EX_RSS, err, errlen);
}

static void free_profiles(struct outputs *o)
{
	for (int i = 0; i < 2; i++) {
		ex_profile_free(&o->a[i]);
		ex_profile_free(&o->b[i]);
	}
}

static int build_profiles(struct outputs *o, const struct ex_data *a, const struct ex_data *b,
			  char *err, size_t errlen)
{
	static const enum ex_at moments[2] = { EX_AT_PEAK, EX_AT_END };

	memset(o->a, 0, sizeof(o->a));
	memset(o->b, 0, sizeof(o->b));
	for (int i = 0; i < 2; i++) {
		struct ex_select sel = { .at = moments[i] };

		if (ex_build(a, &sel, &o->a[i], err, errlen) || ex_build(b, &sel, &o->b[i], err, errlen)) {
			free_profiles(o);
			return -1;
		}
		/*
		 * pprof merges a base only with a profile of the same sample
		 * types: a run with heap sites gives both the heap types.
		 */
		o->a[i].has_heap = o->b[i].has_heap = o->a[i].has_heap || o->b[i].has_heap;
	}
	return 0;
}

/*
 * DIR's files, each whole; DIR is made when missing. At each rank's peak
 * and at the end (mpi split by MPI function: where a leak in the library
 * shows by name): difffolded.pl's form, and each run's pprof profile; and
 * the page of both moments.
 */
static int write_dir(const char *dir, const struct diff_args *args, const struct ex_data *a,
		     const struct ex_data *b, const struct ex_diff *d, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		int (*fn)(FILE *, void *, char *, size_t);
		int at;
	} files[] = {
		{ "diff.csv", w_csv, 0 },
		{ "mpi_diff.csv", w_fn_csv, 0 },
		{ "diff.folded", w_folded, 0 },
		{ "diff-end.folded", w_folded, 1 },
		{ "diff.html", w_html, 0 },
		{ "a.pb.gz", w_pprof_a, 0 },
		{ "b.pb.gz", w_pprof_b, 0 },
		{ "a-end.pb.gz", w_pprof_a, 1 },
		{ "b-end.pb.gz", w_pprof_b, 1 },
	};
	struct outputs o = { .d = d, .name_a = args->a, .name_b = args->b };
	int ret = -1;

	if (build_profiles(&o, a, b, err, errlen))
		return -1;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/%s", dir, files[i].name) >= (int)sizeof(path)) {
			snprintf(err, errlen, "%.64s...: path too long", dir);
			goto out;
		}
		o.at = files[i].at;
		if (ex_output(path, files[i].fn, &o, err, errlen))
			goto out;
	}
	ret = 0;
out:
	free_profiles(&o);
	return ret;
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

	r = cmd_args_done("diff", diff_parse_args(argc, argv, &a, err, sizeof(err)), err, usage);
	if (r >= 0)
		return r;
	if (ex_load(&da, a.a, NULL, err, sizeof(err)))
		return cmd_fail("diff", "%s", err);
	if (ex_load(&db, a.b, NULL, err, sizeof(err))) {
		ex_data_free(&da);
		return cmd_fail("diff", "%s", err);
	}
	if (ex_diff_build(&da, &db, &d)) {
		cmd_fail("diff", "out of memory");
		goto out;
	}
	if (ex_diff_text(stdout, &d, a.a, a.b) || fflush(stdout)) {
		cmd_fail("diff", "cannot write the output: %s", strerror(errno));
		goto out_diff;
	}
	if (a.out && write_dir(a.out, &a, &da, &db, &d, err, sizeof(err))) {
		cmd_fail("diff", "%s", err);
		goto out_diff;
	}
	ret = 0;
	if (a.gate && ex_diff_over(&d, a.fail_above, &g)) {
		char grew[32], base[32];

		rp_fmt_bytes((double)g.growth, grew, sizeof(grew));
		rp_fmt_bytes((double)g.base, base, sizeof(base));
		ret = cmd_fail("diff", "rank %d: %s's peak grew by %s, %.1f%% of A's total peak (%s), above %g%%",
			       g.rank, g.component, grew, g.pct, base, a.fail_above);
		name_stack(&da, &db, &g);
	}
out_diff:
	ex_diff_free(&d);
out:
	ex_data_free(&da);
	ex_data_free(&db);
	return ret;
}
