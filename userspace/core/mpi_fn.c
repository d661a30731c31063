// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_fn.h"
#include "spec.h"

void mpi_catalog_init(struct mpi_catalog *c, const struct spec_set *specs)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < specs->n && c->n < MPI_FN_MAX; i++) {
		const struct spec_rule *r = &specs->rules[i];

		if (r->kind != SPEC_FUNCTION || strcmp(r->component, "mpi") ||
		    mpi_catalog_id(c, r->pattern))
			continue;
		c->names[c->n++] = r->pattern;
	}
}

uint32_t mpi_catalog_id(const struct mpi_catalog *c, const char *symbol)
{
	if (!strncmp(symbol, "PMPI_", 5))
		symbol++;
	for (uint32_t i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], symbol))
			return i + 1;
	return 0;
}

const char *mpi_catalog_name(const struct mpi_catalog *c, uint32_t id)
{
	return id && id <= c->n ? c->names[id - 1] : "?";
}

struct mpi_fn_stats *mpi_fn_get(struct mpi_fn_table *t, uint32_t fn, bool create)
{
	struct mpi_fn_stats *s;
	size_t n;

	if (!fn || fn > MPI_FN_MAX)
		return NULL;
	if (fn <= t->n)
		return &t->s[fn - 1];
	if (!create)
		return NULL;
	/* Grow to the next power of two: the table is indexed directly. */
	for (n = t->n ? t->n : 16; n < fn; n *= 2)
		;
	s = realloc(t->s, n * sizeof(*s));
	if (!s)
		return NULL;
	memset(s + t->n, 0, (n - t->n) * sizeof(*s));
	t->s = s;
	t->n = n;
	return &t->s[fn - 1];
}

int mpi_fn_charge(struct mpi_fn_table *t, uint32_t fn, int64_t delta, double when)
{
	struct mpi_fn_stats *s;

	if (!fn || fn > MPI_FN_MAX)
		return -EINVAL;
	if (!delta)
		return 0;
	s = mpi_fn_get(t, fn, true);
	if (!s)
		return -ENOMEM;
	if (delta < 0) {
		s->released -= delta;
		return 0;
	}
	if (!s->gained)
		s->first_growth = when;
	s->gained += delta;
	s->last_growth = when;
	if (s->gained - s->released > s->peak)
		s->peak = s->gained - s->released;
	return 0;
}

void mpi_fn_free(struct mpi_fn_table *t)
{
	free(t->s);
	t->s = NULL;
	t->n = 0;
}
