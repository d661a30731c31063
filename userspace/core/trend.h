/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How a process's components stood and grew before a moment: what an OOM
 * post-mortem reports at the kill. The kill is stamped by the kernel and
 * read from the ring later, so a sample may have been taken after it,
 * while the victim was being torn down: the two latest samples are kept,
 * to give the last one taken before the kill. For the growth, two earlier
 * samples are kept TREND_STEP_S apart, not every sample: it is measured
 * over TREND_STEP_S to twice that (from the first sample in a younger
 * process). Four copies of its figures per process, reused once sizes
 * settle.
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
	struct trend_snap recent[2];	/* the two latest samples, [0] the newer */
	struct trend_snap ref[2];	/* TREND_STEP_S apart, [0] the newer */
};

void trend_init(struct trend *tr);
void trend_free(struct trend *tr);

/*
 * A sample at now, its figures total and rss[i] (component i's, n of
 * them). Returns 1 when it was also kept as a TREND_STEP_S step, 0 when
 * not, -ENOMEM when it could not be recorded.
 */
int trend_sample(struct trend *tr, double now, int64_t total, const int64_t *rss, size_t n);

/* The latest sample taken at or before t, else the oldest one kept; NULL: none. */
const struct trend_snap *trend_at(const struct trend *tr, double t);

/*
 * Growth from the older kept step taken before to (else the newer) to the
 * sample to: into *dtotal and d[0..to->n) (a component the step did not
 * have grew from 0). Returns the seconds it spans, 0 when no step was kept
 * before it (d and *dtotal are then 0).
 */
double trend_growth(const struct trend *tr, const struct trend_snap *to, int64_t *dtotal,
		    int64_t *d);

#endif
