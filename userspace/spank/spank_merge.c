// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The end of a --memattr step, as the user (srun; for a batch step, a
 * child of slurmstepd that became the user): each node's tracer
 * writes DIR/<node>/ and marks its run_info.csv `finished,1` once every
 * file is final. srun can end before the nodes' tracers do, so this waits
 * for as many final datasets as the step had nodes, then merges them into
 * DIR/job/ and writes its report. Where DIR is not shared by the nodes,
 * the wait times out and says so; the per-node datasets stay where they
 * are, for `memattr-bpf merge` by hand.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spank_memattr.h"

#define MAX_NODES	4096
#define MERGED		"job"

/* A command run to its end, as the caller; its exit status, or -1. */
static int run(const char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);	/* its one-line summary; errors still reach stderr */
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* run_info.csv of DIR/name says the run ended and its files are final. */
static int finished(const char *dir, const char *name)
{
	char path[PATH_MAX * 2], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/run_info.csv", dir, name);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		found |= !strcmp(line, "finished,1\n");
	if (f)
		fclose(f);
	return found;
}

/* The node datasets in dir (every subdirectory but the merged one); how many are final. */
static size_t scan(const char *dir, char **names, size_t max, size_t *final)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	*final = 0;
	while (d && (de = readdir(d)) && n < max) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || !strcmp(de->d_name, MERGED))
			continue;
		names[n] = strdup(de->d_name);
		if (!names[n])
			break;
		*final += finished(dir, names[n]);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int merge(const char *bin, const char *dir, char **names, size_t n, char *why, size_t whylen)
{
	const char **argv = calloc(n + 6, sizeof(*argv));
	char out[PATH_MAX + 8], **paths = calloc(n, sizeof(*paths));
	int ret = -1;
	size_t a = 0;

	if (!argv || !paths) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	snprintf(out, sizeof(out), "%s/" MERGED, dir);
	argv[a++] = bin;
	argv[a++] = "merge";
	for (size_t i = 0; i < n; i++) {
		if (asprintf(&paths[i], "%s/%s", dir, names[i]) < 0)
			goto out;
		argv[a++] = paths[i];
	}
	argv[a++] = "-o";
	argv[a++] = out;
	if (run(argv)) {
		snprintf(why, whylen, "merging the nodes' datasets in %s failed (above)", dir);
		goto out;
	}
	if (run((const char *const[]){ bin, "report", out, NULL })) {
		snprintf(why, whylen, "the report of %s failed (above)", out);
		goto out;
	}
	fprintf(stderr, "memattr: %zu node%s merged into %s (report: %s/report.html)\n", n,
		n == 1 ? "" : "s", out, out);
	ret = 0;
out:
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	free(argv);
	return ret;
}

int ma_merge_step(const char *bin, const char *dir, unsigned int nnodes, double timeout_s,
		  char *why, size_t whylen)
{
	char **names = calloc(MAX_NODES, sizeof(*names));
	double t0 = now_s();
	size_t n = 0, final = 0;
	int ret;

	if (!names) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (;;) {
		n = scan(dir, names, MAX_NODES, &final);
		if (n && final == n && (!nnodes || n >= nnodes))
			break;
		free_names(names, n);
		if (now_s() - t0 > timeout_s) {
			snprintf(why, whylen, "%zu of %u node datasets in %s were final after %.0f s (is %s on a filesystem the nodes share?): merge them with `memattr-bpf merge %s/* -o OUT`",
				 final, nnodes ? nnodes : (unsigned int)n, dir, timeout_s, dir, dir);
			free(names);
			return -1;
		}
		usleep(200 * 1000);
	}
	ret = merge(bin, dir, names, n, why, whylen);
	free_names(names, n);
	free(names);
	return ret;
}
