// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A run as the model sees it: per component, one figure over the run's
 * ranks (the largest rank's peak, or the mean of the ranks' peaks), the
 * number of ranks P, the problem size N and the program's name.
 *
 * The files are read by report's reader (report_csv.c): summary.csv for
 * the peaks (one pass, model_peaks.c), run_info.csv for the command line
 * and problem_size. A run
 * without summary.csv (still going, or cut short) falls back to its
 * timelines, as `memattr-bpf report` reads them: in bounded memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "columns.h"
#include "model.h"
#include "report.h"
#include "safe_open.h"

#define SIZE_KEY	"problem_size"

static FILE *open_in(int dirfd, const char *name)
{
	return safe_fopenat(dirfd, name, geteuid() == 0 ? 0 : SAFE_ANY_NLINK, RP_MAX_FILE);
}

/* Peaks from summary.csv's rank rows, read in one pass. 1: there is no summary.csv. */
static int from_summary(struct md_run *run, struct md_acc *a, int dirfd, const char *dir,
			bool use_pss, char *err, size_t errlen)
{
	char path[4200];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, FILE_SUMMARY);
	f = open_in(dirfd, FILE_SUMMARY);
	if (!f) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "%s: cannot open: %s", path, safe_open_strerror(errno));
		return -1;
	}
	ret = md_summary_peaks(run, a, f, path, use_pss, err, errlen);
	fclose(f);
	return ret;
}

/* Peaks from the timelines (no summary.csv): each rank's largest sample per component. */
static int from_timelines(struct md_run *run, struct rp_run *rp, struct md_acc *a, int dirfd,
			  const char *dir, bool use_pss, char *err, size_t errlen)
{
	int last = -1;

	if (use_pss) {
		snprintf(err, errlen, "%s: no %s: --pss needs its per-component peaks", dir, FILE_SUMMARY);
		return -1;
	}
	/*
	 * Bounded memory, as `report` reads: a long timeline is thinned as it
	 * is read, and its components' peaks still come from every sample.
	 */
	rp->max_samples = RP_PROC_SAMPLES;
	if (rp_load_dir(rp, dirfd, dir, err, errlen))
		return -1;
	run->from_timelines = true;
	for (size_t i = 0; i < rp->nprocs; i++) {
		const struct rp_proc *p = &rp->procs[i];

		if (p->rank < 0)
			continue;
		for (size_t c = 0; c < p->nrss && c < rp->ncomp; c++) {
			if (!p->rss[c])
				continue;
			if (md_add_peak(run, a, rp->comp[c], (double)rp_proc_peak(p, c, false))) {
				snprintf(err, errlen, run->ncomp >= MD_MAX_COMPS ?
					 "%s: more than " MD_MAX_COMPS_TEXT " components" :
					 "%s: out of memory", dir);
				return -1;
			}
		}
		if (p->rank != last)
			run->ranks++;
		last = p->rank;
	}
	return 0;
}

static const char *info_get(const struct rp_run *rp, const char *key)
{
	for (size_t i = 0; i < rp->ninfo; i++)
		if (!strcmp(rp->info[i].key, key))
			return rp->info[i].value;
	return NULL;
}

static int parse_size(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !*s || *end || errno || !(*out > 0) || *out > 1e300 ? -1 : 0;
}

static int read_info(struct md_run *run, struct rp_run *rp, int dirfd, const char *dir,
		     char *err, size_t errlen)
{
	char path[4200];
	const char *v;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, FILE_RUN_INFO);
	f = open_in(dirfd, FILE_RUN_INFO);
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: cannot open: %s", path, safe_open_strerror(errno));
		return -1;
	}
	ret = rp_read_info(rp, f, path, err, errlen);
	fclose(f);
	if (ret)
		return -1;
	v = info_get(rp, "command_line");
	if (!v)
		v = info_get(rp, "command");
	if (v)
		md_app_name(v, run->app, sizeof(run->app));
	v = info_get(rp, SIZE_KEY);
	if (run->size < 0 && v && parse_size(v, &run->size)) {
		snprintf(err, errlen, "%s: %s '%s' is not a positive number", path, SIZE_KEY, v);
		return -1;
	}
	return 0;
}

int md_read_run(struct md_run *run, const char *dir, double size, enum md_stat stat,
		bool use_pss, char *err, size_t errlen)
{
	struct rp_run *rp;
	struct md_acc a = {0};
	int dirfd, ret = -1, r;

	memset(run, 0, sizeof(*run));
	run->size = size;
	if (strlen(dir) >= sizeof(run->dir)) {
		snprintf(err, errlen, "%.64s...: path too long", dir);
		return -1;
	}
	snprintf(run->dir, sizeof(run->dir), "%s", dir);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, errno == ENOTDIR ? "not a directory" : strerror(errno));
		return -1;
	}
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		snprintf(err, errlen, "%s: out of memory", dir);
		goto out;
	}
	snprintf(rp->dir, sizeof(rp->dir), "%s", dir);
	r = from_summary(run, &a, dirfd, dir, use_pss, err, errlen);
	if (r > 0)
		r = from_timelines(run, rp, &a, dirfd, dir, use_pss, err, errlen);
	if (r || read_info(run, rp, dirfd, dir, err, errlen))
		goto out;
	if (run->ranks == 0) {
		snprintf(err, errlen, "%s: no MPI rank in the run (only processes that are not ranks): a model is per rank",
			 dir);
		goto out;
	}
	if (stat == MD_STAT_MEAN)
		for (size_t i = 0; i < run->ncomp; i++)
			run->comp[i].value = a.sum[i] / run->ranks;	/* a rank without it holds none of it */
	ret = 0;
out:
	free(a.sum);
	if (rp) {
		rp_run_free(rp);
		free(rp);
	}
	close(dirfd);
	if (ret)
		md_run_free(run);
	return ret;
}

void md_run_free(struct md_run *run)
{
	free(run->comp);
	run->comp = NULL;
	run->ncomp = 0;
}

int md_split_run_arg(const char *arg, char *dir, size_t dirlen, double *size)
{
	const char *colon = strrchr(arg, ':');
	struct stat st;
	double n;

	*size = -1;
	if (colon && colon != arg && stat(arg, &st) && !parse_size(colon + 1, &n)) {
		if ((size_t)(colon - arg) >= dirlen)
			return -1;
		memcpy(dir, arg, (size_t)(colon - arg));
		dir[colon - arg] = '\0';
		*size = n;
		return 0;
	}
	if (strlen(arg) >= dirlen)
		return -1;
	snprintf(dir, dirlen, "%s", arg);
	return 0;
}
