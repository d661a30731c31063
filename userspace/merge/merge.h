/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `memattr-bpf merge DIR... -o OUT`: the per-node datasets of one job
 * (written on each node with --output out/%n, or by the SPANK plugin)
 * become one dataset: ranks unique across nodes, every node's time_s moved
 * onto the job's clock (the earliest node's start), a trailing `node`
 * column in every file, summary.csv recomputed from the merged timelines,
 * the nodes' counters summed in run_info.csv and nodes.csv saying how each
 * node was aligned. `memattr-bpf report OUT` reads it like any run.
 *
 * merge.c is the command (arguments, checks, the output directory made
 * whole or not at all), merge_info.c reads and merges run_info.csv,
 * merge_files.c rewrites timelines and tables, merge_read.c reads lines.
 * Everything streams: a 1,000-node job is read once, file by file.
 */
#ifndef MEMATTR_MERGE_H
#define MEMATTR_MERGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "csv_out.h"
#include "node_name.h"
#include "report.h"

#define MG_ERRLEN	(PATH_MAX + 512)
/* Largest input file merge reads (a day of 100 ms samples of 64 components is ~3 GiB). */
#define MG_MAX_FILE	(16ULL << 30)

struct mg_kv {
	char key[128];	/* oom_kill_<N>_job_rss_bytes:<component> is long */
	char value[256];
};

/* One node's dataset. */
struct mg_node {
	const char *dir;		/* as given on the command line */
	int dirfd;
	char name[NODE_NAME_MAX];	/* run_info.csv's hostname */
	char job[64];			/* run_info.csv's job ("" when it traced no job) */
	double start;			/* start_time_unix_s */
	double offset;			/* start minus the job's earliest start */
	double duration;		/* duration_s, 0 when absent */
	struct mg_kv *info;
	size_t ninfo;
	char **files;			/* timeline files, sorted */
	size_t nfiles;
	size_t nranks;
};

/*
 * merge_read.c: a node's file, its lines then read with report's struct
 * rp_reader (named by its path: errors say "DIR/FILE:LINE: why").
 */
/* name inside dirfd for reading (gzip'ed when it ends in .gz); NULL with errno. */
FILE *mg_open(int dirfd, const char *name);

/* merge_info.c */
int mg_read_info(struct mg_node *n, char *err, size_t errlen);
const char *mg_info(const struct mg_node *n, const char *key);	/* NULL: absent */
/* One job, nodes named apart; sets every node's offset. */
int mg_check_nodes(struct mg_node *nodes, size_t n, char *err, size_t errlen);
int mg_write_info(FILE *f, const struct mg_node *nodes, size_t n, const char *cmdline,
		  size_t cut_lines);
int mg_write_nodes(FILE *f, const struct mg_node *nodes, size_t n);

/* merge_files.c */
struct mg_out {
	struct output_dir dir;
	FILE *summary;
	bool compress;
	size_t cut_lines;	/* lines still being written when read: left out */
};

/* Rank from "rank-<R>.csv[.gz]", -1 for "pid-<P>.csv[.gz]", -2: not a timeline. */
int mg_timeline_rank(const char *name);
int mg_timeline(struct mg_out *o, const struct mg_node *n, const char *file, char *err, size_t errlen);
/* mpi_calls.csv or heap_sites.csv of every node into one, times shifted. */
int mg_table(struct mg_out *o, const struct mg_node *nodes, size_t n, const char *file,
	     const char *header, char *err, size_t errlen);

int merge_main(int argc, char **argv);

#endif
