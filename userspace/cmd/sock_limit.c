// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "sock_limit.h"

enum sl_admit sl_admit(const struct sl_conn *c, size_t n, uid_t uid, size_t per_uid, size_t *victim)
{
	size_t mine = 0, oldest = n;

	for (size_t i = 0; i < n; i++) {
		if (c[i].uid != uid)
			continue;
		mine++;
		if (!c[i].ready && (oldest == n || c[i].since < c[oldest].since))
			oldest = i;
	}
	if (mine < per_uid)
		return SL_ADMIT;
	if (oldest == n)
		return SL_REFUSE;
	*victim = oldest;
	return SL_EVICT;
}

static long serving_find(const struct sl_serving *s, uid_t uid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].uid == uid)
			return (long)i;
	return -1;
}

unsigned int sl_serving_of(const struct sl_serving *s, uid_t uid)
{
	long i = serving_find(s, uid);

	return i < 0 ? 0 : s->e[i].count;
}

int sl_serving_add(struct sl_serving *s, uid_t uid)
{
	long i = serving_find(s, uid);

	if (i < 0) {
		if (s->n == SL_MAX_USERS)
			return -1;
		i = (long)s->n++;
		s->e[i].uid = uid;
		s->e[i].count = 0;
	}
	s->e[i].count++;
	return 0;
}

void sl_serving_done(struct sl_serving *s, uid_t uid)
{
	long i = serving_find(s, uid);

	if (i < 0)
		return;
	/* The last answer of a user frees its entry: the table holds users with answers only. */
	if (--s->e[i].count == 0)
		s->e[i] = s->e[--s->n];
}

long sl_pick(const struct sl_conn *c, size_t n, const struct sl_serving *s, unsigned int per_uid)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		if (!c[i].ready || sl_serving_of(s, c[i].uid) >= per_uid)
			continue;
		if (best < 0 || c[i].since < c[best].since)
			best = (long)i;
	}
	return best;
}
