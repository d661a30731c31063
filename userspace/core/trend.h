/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How a process's components grew before its last sample: what an OOM
 * post-mortem reports as the trend before the kill. Two earlier samples
 * are kept, TREND_STEP_S apart, not every sample: the growth is measured
 * over TREND_STEP_S to twice that (from the first sample in a younger
 * process), at the cost of two copies of its figures per process.
 */
#ifndef MEMATTR_TREND_H
#define MEMATTR_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TREND_STEP_S	5.0

struct trend_snap {
	double t;		/* tracker time of the sample */
	int64_t total;
	int64_t *rss;		/* by component id */
	size_t n;
	bool set;
};

struct trend {
	double last;		/* the latest sample's time, < 0: none yet */
	struct trend_snap ref[2];	/* [0] the newer */
};

void trend_init(struct trend *tr);
void trend_free(struct trend *tr);

/* A sample at now: true when its figures are to be kept (trend_keep). */
bool trend_sampled(struct trend *tr, double now);

/* Keep this sample's figures (rss[i]: component i's, n of them). 0 or -ENOMEM. */
int trend_keep(struct trend *tr, double now, int64_t total, const int64_t *rss, size_t n);

/*
 * Growth from the older kept sample (else the newer, when it is older than
 * the latest sample) to the latest sample, whose figures are total and
 * rss[0..n): into *dtotal and d[0..n) (a component the kept sample did
 * not have grew from 0). Returns the seconds it spans, 0 when no sample
 * was kept before the latest (d and *dtotal are then 0).
 */
double trend_growth(const struct trend *tr, int64_t total, const int64_t *rss, size_t n,
		    int64_t *dtotal, int64_t *d);

#endif
