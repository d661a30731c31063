// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The profile's storage: interned strings (a hash table, since a job of
 * many ranks names the same components and call sites over and over),
 * frames as (component, name) pairs, samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* FNV-1a: short names, no adversary that could gain from collisions but a slower export. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int rehash(struct ex_strings *st, size_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t i = 0; i < st->n; i++) {
		size_t j = hash_str(st->s[i]) & (nslot - 1);

		while (slot[j])
			j = (j + 1) & (nslot - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(st->slot);
	st->slot = slot;
	st->nslot = nslot;
	return 0;
}

long ex_intern(struct ex_strings *st, const char *s)
{
	size_t j;
	char *copy;

	/* Index 0 is "": pprof's string table starts with it. */
	if (!st->n && st->s != NULL)
		return -1;
	if (!st->n) {
		st->cap = 64;
		st->s = calloc(st->cap, sizeof(*st->s));
		if (!st->s || !(st->s[0] = strdup("")) || rehash(st, 128))
			return -1;
		st->n = 1;
		st->slot[hash_str("") & 127] = 1;
	}
	for (j = hash_str(s) & (st->nslot - 1); st->slot[j]; j = (j + 1) & (st->nslot - 1))
		if (!strcmp(st->s[st->slot[j] - 1], s))
			return st->slot[j] - 1;
	if (st->n >= UINT32_MAX - 1)
		return -1;
	if (st->n == st->cap) {
		char **grown = realloc(st->s, 2 * st->cap * sizeof(*grown));

		if (!grown)
			return -1;
		st->s = grown;
		st->cap *= 2;
	}
	copy = strdup(s);
	if (!copy)
		return -1;
	st->s[st->n] = copy;
	st->slot[j] = (uint32_t)st->n + 1;
	st->n++;
	/* At most half full: probes stay short. */
	if (2 * st->n > st->nslot && rehash(st, 2 * st->nslot))
		return -1;
	return (long)st->n - 1;
}

void ex_strings_free(struct ex_strings *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->s[i]);
	free(st->s);
	free(st->slot);
	memset(st, 0, sizeof(*st));
}

const char *ex_str(const struct ex_profile *pr, uint32_t i)
{
	return i < pr->str.n ? pr->str.s[i] : "";
}

/* The mapping (component) named by string index name, added when new. */
static long mapping_of(struct ex_profile *pr, uint32_t name)
{
	uint32_t *grown;

	for (size_t i = 0; i < pr->nmappings; i++)
		if (pr->mappings[i] == name)
			return (long)i;
	grown = realloc(pr->mappings, (pr->nmappings + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	pr->mappings = grown;
	grown = realloc(pr->build_ids, (pr->nmappings + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	pr->build_ids = grown;
	pr->mappings[pr->nmappings] = name;
	pr->build_ids[pr->nmappings] = 0;
	return (long)pr->nmappings++;
}

int ex_mapping_build_id(struct ex_profile *pr, uint32_t mapping, const char *hex)
{
	long id;

	/* The first ID seen stays: one file name, one mapping. */
	if (mapping >= pr->nmappings || !hex[0] || pr->build_ids[mapping])
		return 0;
	id = ex_intern(&pr->str, hex);
	if (id < 0)
		return -1;
	pr->build_ids[mapping] = (uint32_t)id;
	return 0;
}

long ex_mapping(struct ex_profile *pr, const char *comp)
{
	long c = ex_intern(&pr->str, comp);

	return c < 0 ? -1 : mapping_of(pr, (uint32_t)c);
}

long ex_frame(struct ex_profile *pr, const char *comp, const char *name)
{
	long c = ex_intern(&pr->str, comp), n = ex_intern(&pr->str, name), m, k;
	struct ex_frame *grown;
	char *key;

	if (c < 0 || n < 0 || (m = mapping_of(pr, (uint32_t)c)) < 0)
		return -1;
	/* Frame i is key i + 1 of fkey ("" is key 0): one lookup per stack, not a scan. */
	if (asprintf(&key, "%s\x1f%s", comp, name) < 0)
		return -1;
	k = ex_intern(&pr->fkey, key);
	free(key);
	if (k < 1 || (size_t)k > pr->nframes + 1)
		return -1;
	if ((size_t)k <= pr->nframes)
		return k - 1;
	grown = realloc(pr->frames, (pr->nframes + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	pr->frames = grown;
	pr->frames[pr->nframes] = (struct ex_frame){ .name = (uint32_t)n, .mapping = (uint32_t)m };
	return (long)pr->nframes++;
}

struct ex_sample *ex_sample_add(struct ex_profile *pr, uint32_t proc)
{
	struct ex_sample *s;

	if (pr->nsamples == pr->cap) {
		size_t cap = pr->cap ? 2 * pr->cap : 64;
		struct ex_sample *grown = realloc(pr->samples, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		pr->samples = grown;
		pr->cap = cap;
	}
	s = &pr->samples[pr->nsamples++];
	memset(s, 0, sizeof(*s));
	s->proc = proc;
	return s;
}

void ex_profile_free(struct ex_profile *pr)
{
	ex_strings_free(&pr->str);
	ex_strings_free(&pr->fkey);
	free(pr->mappings);
	free(pr->build_ids);
	free(pr->frames);
	free(pr->samples);
	free(pr->procs);
	memset(pr, 0, sizeof(*pr));
}
