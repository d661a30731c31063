// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trend.h"

void trend_init(struct trend *tr)
{
	memset(tr, 0, sizeof(*tr));
}

void trend_free(struct trend *tr)
{
	for (int i = 0; i < 2; i++) {
		free(tr->recent[i].rss);
		free(tr->ref[i].rss);
	}
	trend_init(tr);
}

/* Copy a sample into pair[1]'s array and make it pair[0]: no allocation once sizes settle. */
static int push(struct trend_snap pair[2], double now, int64_t total, const int64_t *rss,
		size_t n)
{
	struct trend_snap old = pair[1];

	if (old.n < n || (!old.rss && n)) {
		int64_t *grown = realloc(old.rss, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		old.rss = grown;
	}
	if (n)
		memcpy(old.rss, rss, n * sizeof(*rss));
	old.n = n;
	old.t = now;
	old.total = total;
	old.set = true;
	pair[1] = pair[0];
	pair[0] = old;
	return 0;
}

int trend_sample(struct trend *tr, double now, int64_t total, const int64_t *rss, size_t n)
{
	int ret = push(tr->recent, now, total, rss, n);

	if (ret)
		return ret;
	if (tr->ref[0].set && now - tr->ref[0].t < TREND_STEP_S)
		return 0;
	ret = push(tr->ref, now, total, rss, n);
	return ret ? ret : 1;
}

const struct trend_snap *trend_at(const struct trend *tr, double t)
{
	if (tr->recent[0].set && tr->recent[0].t <= t)
		return &tr->recent[0];
	if (tr->recent[1].set)
		return &tr->recent[1];
	return tr->recent[0].set ? &tr->recent[0] : NULL;
}

double trend_growth(const struct trend *tr, const struct trend_snap *to, int64_t *dtotal,
		    int64_t *d)
{
	const struct trend_snap *r = NULL;

	for (int i = 1; i >= 0 && !r; i--)
		if (tr->ref[i].set && tr->ref[i].t < to->t)
			r = &tr->ref[i];
	*dtotal = 0;
	memset(d, 0, to->n * sizeof(*d));
	if (!r)
		return 0;
	*dtotal = to->total - r->total;
	for (size_t i = 0; i < to->n; i++)
		d[i] = to->rss[i] - (i < r->n ? r->rss[i] : 0);
	return to->t - r->t;
}
