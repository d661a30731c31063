// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trend.h"

void trend_init(struct trend *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->last = -1;
}

void trend_free(struct trend *tr)
{
	free(tr->ref[0].rss);
	free(tr->ref[1].rss);
	trend_init(tr);
}

bool trend_sampled(struct trend *tr, double now)
{
	tr->last = now;
	return !tr->ref[0].set || now - tr->ref[0].t >= TREND_STEP_S;
}

int trend_keep(struct trend *tr, double now, int64_t total, const int64_t *rss, size_t n)
{
	/* The older one's array is reused for the newest: no allocation once sizes settle. */
	struct trend_snap old = tr->ref[1];

	if (old.n < n) {
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
	tr->ref[1] = tr->ref[0];
	tr->ref[0] = old;
	return 0;
}

double trend_growth(const struct trend *tr, int64_t total, const int64_t *rss, size_t n,
		    int64_t *dtotal, int64_t *d)
{
	const struct trend_snap *r = NULL;

	if (tr->ref[1].set)
		r = &tr->ref[1];
	else if (tr->ref[0].set && tr->ref[0].t < tr->last)
		r = &tr->ref[0];
	*dtotal = 0;
	memset(d, 0, n * sizeof(*d));
	if (!r || tr->last < 0)
		return 0;
	*dtotal = total - r->total;
	for (size_t i = 0; i < n; i++)
		d[i] = rss[i] - (i < r->n ? r->rss[i] : 0);
	return tr->last - r->t;
}
