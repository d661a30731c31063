// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf export DIR --format folded|speedscope|pprof [--rank R]
 * [--at peak|end|TIME] [--value rss|pss|heap] [-o FILE]`: a finished
 * run's resident memory as stacks for flame graph tools. The options and
 * what goes to the user are here; reading, stacks and formats are
 * export/'s (export.h). No root, no BPF.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_args.h"
#include "export.h"
#include "export_cmd.h"
#include "num_arg.h"

static void usage(FILE *f)
{
	fputs("usage: memattr-bpf export DIR [--format folded|speedscope|pprof] [--rank R]\n"
	      "                          [--at peak|end|TIME] [--value rss|pss|heap] [-o FILE]\n"
	      "  A run's resident memory as stacks: component, then the MPI function or the\n"
	      "  heap call site where the run knows it. Standard output by default.\n"
	      "  -f, --format F      folded (default: flamegraph.pl, inferno), speedscope (JSON),\n"
	      "                      pprof (gzip'ed profile.proto: go tool pprof)\n"
	      "  -r, --rank R        one rank only (default: every process)\n"
	      "  -a, --at WHEN       peak (default: each process's largest total), end, or a\n"
	      "                      time_s (each process's last sample by then)\n"
	      "  -V, --value V       folded and speedscope: rss (default), pss, or heap (--heap's\n"
	      "                      live bytes, at the peak or the end); pprof holds them all\n"
	      "  -o, --output FILE   write FILE (whole, through a temporary file) instead\n", f);
}

static const struct option opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "rank", required_argument, NULL, 'r' },
	{ "at", required_argument, NULL, 'a' },
	{ "value", required_argument, NULL, 'V' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_value(const char *s, enum ex_value *v)
{
	if (!strcmp(s, "rss"))
		*v = EX_RSS;
	else if (!strcmp(s, "pss"))
		*v = EX_PSS;
	else if (!strcmp(s, "heap"))
		*v = EX_INUSE;
	else
		return -1;
	return 0;
}

int export_parse_args(int argc, char **argv, struct export_args *a, char *err, size_t errlen)
{
	unsigned long rank;
	int c;

	memset(a, 0, sizeof(*a));
	a->writer = ex_writer_find("folded");
	a->sel.at = EX_AT_PEAK;
	cmd_args_reset();
	while ((c = getopt_long(argc, argv, "f:r:a:V:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->writer = ex_writer_find(optarg);
			if (!a->writer) {
				snprintf(err, errlen, "--format '%s': one of %s", optarg, ex_writer_names());
				return -1;
			}
			break;
		case 'r':
			if (num_parse_uint(optarg, 0, INT_MAX, &rank)) {
				snprintf(err, errlen, "--rank '%s': a rank number", optarg);
				return -1;
			}
			a->sel.one_rank = true;
			a->sel.rank = (int)rank;
			break;
		case 'a':
			if (ex_parse_at(optarg, &a->sel.at, &a->sel.at_time)) {
				snprintf(err, errlen, "--at '%s': peak, end or a time in seconds", optarg);
				return -1;
			}
			break;
		case 'V':
			if (parse_value(optarg, &a->value)) {
				snprintf(err, errlen, "--value '%s': rss, pss or heap", optarg);
				return -1;
			}
			break;
		case 'o':
			if (cmd_args_name("-o", "file", optarg, &a->out, err, errlen))
				return -1;
			break;
		case 'h':
			return 1;
		default:
			cmd_args_unknown(argv, err, errlen);
			return -1;
		}
	}
	if (optind != argc - 1) {
		if (optind >= argc)
			snprintf(err, errlen, "no run directory given");
		else
			snprintf(err, errlen, "one run directory, not %d", argc - optind);
		return -1;
	}
	a->dir = argv[optind];
	/* Heap sites are kept at each process's peak and at its end: no other moment has them. */
	if (a->value == EX_INUSE && a->sel.at == EX_AT_TIME) {
		snprintf(err, errlen, "--value heap: heap sites' live bytes are kept at the peak and the end only (add --at peak or --at end)");
		return -1;
	}
	return 0;
}

struct write_arg {
	const struct export_args *a;
	const struct ex_profile *pr;
};

static int write_profile(FILE *f, void *arg, char *err, size_t errlen)
{
	const struct write_arg *w = arg;

	return w->a->writer->write(f, w->pr, w->a->value, err, errlen);
}

/* What the dataset holds but this export could not show, said once each. */
static void notes(const struct ex_profile *pr)
{
	if (pr->dropped_fns)
		fputs("memattr-bpf export: mpi_calls.csv gives MPI functions' memory at the end of the run only: --at end splits mpi by them\n",
		      stderr);
	if (pr->dropped_heap)
		fputs("memattr-bpf export: heap sites' live heap is kept at the peak (heap_sites_peak.csv, if the run has it) and the end only: --at peak or end shows the call sites\n",
		      stderr);
	if (pr->dropped_stacks)
		fputs("memattr-bpf export: alloc_stacks.csv gives stacks at the peak and the end of each process only: --at peak or end shows them\n",
		      stderr);
	if (pr->fn_over)
		fprintf(stderr, "memattr-bpf export: %zu process%s' MPI functions hold more than mpi's rss: left unsplit\n",
			pr->fn_over, pr->fn_over == 1 ? "" : "es");
}

int export_main(int argc, char **argv)
{
	struct export_args a;
	struct ex_data d;
	struct ex_profile pr;
	struct write_arg w = { .a = &a, .pr = &pr };
	char err[EX_ERRLEN];
	int r, ret = EXIT_FAILURE;

	r = cmd_args_done("export", export_parse_args(argc, argv, &a, err, sizeof(err)), err, usage);
	if (r >= 0)
		return r;
	if (a.writer->binary && (!a.out || !strcmp(a.out, "-")) && isatty(STDOUT_FILENO)) {
		cmd_fail("export", "--format %s is binary: give -o FILE or redirect the output",
			 a.writer->name);
		return CMD_EXIT_USAGE;
	}
	if (ex_load(&d, a.dir, &a.sel, err, sizeof(err)))
		return cmd_fail("export", "%s", err);
	if (a.value == EX_INUSE && !d.has_sites) {
		cmd_fail("export", "%s: no heap_sites.csv (--value heap needs a run traced with --heap)",
			 a.dir);
		goto out_data;
	}
	if (a.value == EX_INUSE && a.sel.at == EX_AT_PEAK && !d.has_peak_sites) {
		cmd_fail("export", "%s: no heap_sites_peak.csv (traced before the sites were kept at the peak): add --at end",
			 a.dir);
		goto out_data;
	}
	if (ex_build(&d, &a.sel, &pr, err, sizeof(err))) {
		cmd_fail("export", "%s", err);
		goto out_data;
	}
	if (ex_output(a.out, write_profile, &w, err, sizeof(err)))
		cmd_fail("export", "%s", err);
	else
		ret = 0;
	notes(&pr);
	ex_profile_free(&pr);
out_data:
	ex_data_free(&d);
	return ret;
}
