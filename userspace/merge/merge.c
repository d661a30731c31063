// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf merge DIR... -o OUT`: the command. Every input is read and
 * checked (one job, one dataset per node, no rank on two nodes) before
 * anything is written; the merged dataset is written into a temporary
 * directory beside OUT and renamed to OUT only once complete, so a failure
 * (bad input found late, a full disk) leaves no half dataset behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "merge.h"

#define EXIT_USAGE	2

static void usage(FILE *f)
{
	fputs("usage: memattr-bpf merge DIR... -o OUT [--compress]\n"
	      "  One dataset from the per-node datasets of one job (each written with\n"
	      "  --output DIR/%n on its node): ranks unique across nodes, time_s on the job's\n"
	      "  clock (the earliest node's start), a node column, summary.csv recomputed,\n"
	      "  counters summed, nodes.csv. OUT must not exist (or be an empty directory).\n"
	      "  --compress   timelines as rank-<R>.csv.gz\n", f);
}

static int fail(const char *msg)
{
	fprintf(stderr, "memattr-bpf merge: %s\n", msg);
	return EXIT_FAILURE;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The node's timeline files, sorted, and how many are ranks. */
static int list_timelines(struct mg_node *n, char *err, size_t errlen)
{
	int fd = dup(n->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		snprintf(err, errlen, "%s: cannot list: %s", n->dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		int rank = mg_timeline_rank(de->d_name);
		char **grown;

		if (rank == -2)
			continue;
		grown = realloc(n->files, (n->nfiles + 1) * sizeof(*grown));
		if (!grown || !(grown[n->nfiles] = strdup(de->d_name))) {
			if (grown)
				n->files = grown;
			closedir(d);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		n->files = grown;
		n->nfiles++;
		n->nranks += rank >= 0;
	}
	closedir(d);
	if (!n->nfiles) {
		snprintf(err, errlen, "%s: no rank-<R>.csv or pid-<P>.csv: not a memattr-bpf output directory", n->dir);
		return -1;
	}
	qsort(n->files, n->nfiles, sizeof(*n->files), cmp_name);
	return 0;
}

struct rank_at {
	int rank;
	size_t node;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank_at *x = a, *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* A rank on two nodes: two datasets of one node, or of two different runs. */
static int check_ranks(const struct mg_node *nodes, size_t n, char *err, size_t errlen)
{
	struct rank_at *all;
	size_t total = 0, k = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		total += nodes[i].nranks;
	all = calloc(total ? total : 1, sizeof(*all));
	if (!all) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t f = 0; f < nodes[i].nfiles; f++)
			if (mg_timeline_rank(nodes[i].files[f]) >= 0)
				all[k++] = (struct rank_at){ mg_timeline_rank(nodes[i].files[f]), i };
	qsort(all, total, sizeof(*all), cmp_rank);
	for (size_t i = 1; i < total && !ret; i++) {
		const struct mg_node *a = &nodes[all[i - 1].node], *b = &nodes[all[i].node];

		if (all[i].rank != all[i - 1].rank)
			continue;
		if (a == b)
			snprintf(err, errlen, "%s holds rank %d twice (rank-%d.csv and rank-%d.csv.gz)",
				 a->dir, all[i].rank, all[i].rank, all[i].rank);
		else
			snprintf(err, errlen, "rank %d is in both %s (node %s) and %s (node %s): not one run of one job",
				 all[i].rank, a->dir, a->name, b->dir, b->name);
		ret = -1;
	}
	free(all);
	return ret;
}

static int load_nodes(struct mg_node *nodes, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		nodes[i].dirfd = open(nodes[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (nodes[i].dirfd < 0) {
			snprintf(err, errlen, "%s: %s", nodes[i].dir,
				 errno == ENOTDIR ? "not a directory" : strerror(errno));
			return -1;
		}
		if (mg_read_info(&nodes[i], err, errlen) || list_timelines(&nodes[i], err, errlen))
			return -1;
	}
	if (mg_check_nodes(nodes, n, err, errlen))
		return -1;
	return check_ranks(nodes, n, err, errlen);
}

static void free_nodes(struct mg_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].dirfd > 0)
			close(nodes[i].dirfd);
		for (size_t f = 0; f < nodes[i].nfiles; f++)
			free(nodes[i].files[f]);
		free(nodes[i].files);
		free(nodes[i].info);
	}
	free(nodes);
}

/* OUT is new, or an empty directory the rename may replace. */
static int check_out(const char *out, char *err, size_t errlen)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int entries = 0;

	if (lstat(out, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "-o %s: %s", out, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "-o %s: exists and is not a directory", out);
		return -1;
	}
	d = opendir(out);
	while (d && (de = readdir(d)))
		entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	if (!d || entries) {
		snprintf(err, errlen, "-o %s: %s", out, d ? "exists and is not empty: merge writes a new dataset"
							  : strerror(errno));
		return -1;
	}
	return 0;
}

/* The temporary directory's files, then itself: a failed merge leaves nothing. */
static void remove_tmp(struct mg_out *o, const char *tmp)
{
	int fd = o->dir.dirfd >= 0 ? dup(o->dir.dirfd) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	outdir_close(&o->dir);
	rmdir(tmp);
}

static int write_small(struct mg_out *o, const char *name, const struct mg_node *nodes, size_t n,
		       const char *cmdline, char *err, size_t errlen)
{
	FILE *f = outdir_create(&o->dir, name);
	int bad;

	if (!f) {
		snprintf(err, errlen, "%s/%s: cannot create: %s", o->dir.path, name, strerror(errno));
		return -1;
	}
	if (!strcmp(name, FILE_NODES))
		bad = mg_write_nodes(f, nodes, n);
	else
		bad = mg_write_info(f, nodes, n, cmdline, o->cut_lines);
	bad |= ferror(f);
	if (fclose(f) || bad) {
		snprintf(err, errlen, "%s/%s: cannot write: %s", o->dir.path, name, strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

static int write_all(struct mg_out *o, const struct mg_node *nodes, size_t n, const char *cmdline,
		     char *err, size_t errlen)
{
	int bad;

	o->summary = outdir_create(&o->dir, FILE_SUMMARY);
	if (!o->summary || fputs(SUMMARY_HEADER_NODE "\n", o->summary) == EOF) {
		snprintf(err, errlen, "%s/%s: cannot create: %s", o->dir.path, FILE_SUMMARY, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t f = 0; f < nodes[i].nfiles; f++)
			if (mg_timeline(o, &nodes[i], nodes[i].files[f], err, errlen))
				return -1;
	bad = ferror(o->summary);
	if (fclose(o->summary) || bad) {
		o->summary = NULL;
		snprintf(err, errlen, "%s/%s: cannot write: %s", o->dir.path, FILE_SUMMARY,
			 strerror(errno ? errno : EIO));
		return -1;
	}
	o->summary = NULL;
	if (mg_table(o, nodes, n, FILE_MPI_CALLS, MPI_CALLS_HEADER, err, errlen) ||
	    mg_table(o, nodes, n, FILE_HEAP_SITES, HEAP_SITES_HEADER, err, errlen) ||
	    mg_table(o, nodes, n, FILE_HEAP_SITES_PEAK, HEAP_SITES_HEADER, err, errlen) ||
	    mg_table(o, nodes, n, FILE_ALLOC_STACKS, ALLOC_STACKS_HEADER, err, errlen) ||
	    write_small(o, FILE_NODES, nodes, n, cmdline, err, errlen) ||
	    write_small(o, FILE_RUN_INFO, nodes, n, cmdline, err, errlen))
		return -1;
	return 0;
}

/* Made beside OUT (the same filesystem: the final rename is atomic), owned as OUT will be. */
static int open_tmp(struct mg_out *o, const char *out, char *tmp, size_t len, char *err, size_t errlen)
{
	const char *uid = geteuid() == 0 ? getenv("SUDO_UID") : NULL;
	const char *gid = geteuid() == 0 ? getenv("SUDO_GID") : NULL;
	struct stat st;

	snprintf(tmp, len, "%s.merging-%d", out, (int)getpid());
	if (!lstat(tmp, &st)) {
		snprintf(err, errlen, "%s exists (a merge that was killed?): remove it", tmp);
		return -1;
	}
	return outdir_open(&o->dir, tmp, uid ? (uid_t)strtoul(uid, NULL, 10) : (uid_t)-1,
			   gid ? (gid_t)strtoul(gid, NULL, 10) : (gid_t)-1, err, errlen);
}

static char *join_args(int argc, char **argv)
{
	size_t len = 32;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	strcpy(s, "memattr-bpf");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int run(struct mg_node *nodes, size_t n, const char *out, bool compress, const char *cmdline)
{
	struct mg_out o = { .compress = compress, .dir = { .dirfd = -1 } };
	char err[MG_ERRLEN], tmp[PATH_MAX + 32];
	size_t ranks = 0, procs = 0;

	if (load_nodes(nodes, n, err, sizeof(err)) || check_out(out, err, sizeof(err)) ||
	    open_tmp(&o, out, tmp, sizeof(tmp), err, sizeof(err)))
		return fail(err);
	if (write_all(&o, nodes, n, cmdline, err, sizeof(err))) {
		if (o.summary)
			fclose(o.summary);
		remove_tmp(&o, tmp);
		return fail(err);
	}
	outdir_close(&o.dir);
	if (rename(tmp, out)) {
		snprintf(err, sizeof(err), "cannot move the merged dataset into %s: %s", out, strerror(errno));
		o.dir.dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		remove_tmp(&o, tmp);
		return fail(err);
	}
	for (size_t i = 0; i < n; i++) {
		ranks += nodes[i].nranks;
		procs += nodes[i].nfiles;
	}
	printf("memattr-bpf merge: %zu node%s, %zu rank%s (%zu processes) into %s%s\n", n,
	       n == 1 ? "" : "s", ranks, ranks == 1 ? "" : "s", procs, out,
	       o.cut_lines ? " (lines still being written were left out)" : "");
	return 0;
}

int merge_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "compress", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char out[PATH_MAX] = "";
	bool compress = false;
	struct mg_node *nodes;
	char *cmdline;
	int c, ret;
	size_t n;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == 'o' && optarg[0] && strlen(optarg) < sizeof(out)) {
			/* "job/" names the directory job: the temporary one goes beside it. */
			snprintf(out, sizeof(out), "%s", optarg);
			for (size_t l = strlen(out); l > 1 && out[l - 1] == '/'; l--)
				out[l - 1] = '\0';
		} else if (c == 'z') {
			compress = true;
		} else {
			fprintf(stderr, "memattr-bpf merge: %s '%s'\n",
				c == 'o' ? "empty or too long output path" : "unknown option or missing value",
				argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	n = (size_t)(argc - optind);
	if (!out[0] || !n) {
		fprintf(stderr, "memattr-bpf merge: %s\n", !out[0] ? "no -o OUT given" : "no dataset given");
		usage(stderr);
		return EXIT_USAGE;
	}
	nodes = calloc(n, sizeof(*nodes));
	cmdline = join_args(argc, argv);
	if (!nodes || !cmdline) {
		free(nodes);
		free(cmdline);
		return fail("out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		nodes[i].dir = argv[optind + i];
		nodes[i].dirfd = -1;
	}
	ret = run(nodes, n, out, compress, cmdline);
	free_nodes(nodes, n);
	free(cmdline);
	return ret;
}
