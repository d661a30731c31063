/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One job's processes folded into what the exposition writes: its kept
 * components (metrics.h) and its rank groups, each summed over the
 * processes it holds. Used by metrics_render.c only.
 */
#ifndef MEMATTR_METRICS_FOLD_H
#define MEMATTR_METRICS_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

enum { MXV_RSS, MXV_PSS, MXV_PEAK, MXV_NR };

struct mx_group {
	const char *step;	/* a process's own, valid while the job is rendered */
	int rank;		/* -1: "other" */
	int64_t rss, peak;	/* the group's total, for the cap and the largest rank */
};

struct mx_folded {
	const char **names;	/* output components: "total", the kept ones, then "other" */
	size_t nnames;
	struct mx_group *groups;	/* by step, ranks ascending, "other" last in each step */
	size_t ngroups;
	int64_t *v;		/* [group][name][MXV_*] */
	int64_t *job;		/* [name][MXV_*]: every process of the job */
	unsigned int folded;	/* ranks summed under rank="other" past max_ranks */
	int64_t rank_peak;	/* the largest total peak of one rank (of the "other" groups when no rank) */
};

/*
 * Fold j: ranks past the max_ranks largest by resident bytes (0: no cap)
 * join their step's rank="other". 0, or -ENOMEM (fo then holds nothing).
 * Pointers in *fo are into j's processes: valid until j changes.
 */
int mx_fold_job(const struct mx_job *j, unsigned int max_ranks, struct mx_folded *fo);
void mx_fold_free(struct mx_folded *fo);

#endif
