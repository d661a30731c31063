// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

static comp_id intern(const struct classifier *c, const char *name)
{
	return c->comps ? comp_table_id(c->comps, name) : component_id(name);
}

void classifier_init_table(struct classifier *c, const struct spec_set *specs,
			   struct comp_table *comps)
{
	memset(c, 0, sizeof(*c));
	c->specs = specs;
	c->comps = comps;
	c->libc = intern(c, "libc");
	c->mpi = intern(c, "mpi");
	/* Without it (no memory) every path is matched against the rules again. */
	c->cache = calloc(CLASSIFY_CACHE_SLOTS, sizeof(*c->cache));
}

void classifier_free(struct classifier *c)
{
	for (size_t i = 0; c->cache && i < CLASSIFY_CACHE_SLOTS; i++)
		free(c->cache[i].path);
	free(c->cache);
	c->cache = NULL;
}

void classifier_init(struct classifier *c, const struct spec_set *specs)
{
	classifier_init_table(c, specs, NULL);
}

const char *classify_name(const struct classifier *c, comp_id id)
{
	return c->comps ? comp_table_name(c->comps, id) : component_name(id);
}

static bool is_shared_object(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strstr(base, ".so") != NULL;
}

/* path's slot in the cache (FNV-1a of the path), NULL without a cache. */
static struct classify_cached *cache_slot(const struct classifier *c, const char *path)
{
	uint64_t h = 14695981039346656037ULL;

	if (!c->cache)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return &c->cache[h % CLASSIFY_CACHE_SLOTS];
}

static void cache_put(struct classify_cached *slot, const char *path, comp_id owner, bool is_code)
{
	char *copy = strdup(path);

	if (!copy)
		return;		/* no memory: the slot keeps what it had */
	free(slot->path);
	*slot = (struct classify_cached){ copy, owner, is_code };
}

comp_id classify_path(const struct classifier *c, const char *path,
		      const char *exe, bool *is_code)
{
	comp_id owner = COMP_UNATTRIBUTED;
	struct classify_cached *slot;
	const char *name;
	char lib[SPEC_NAME_MAX + 8];

	*is_code = false;
	if (!path[0])
		return COMP_UNATTRIBUTED;
	if (!strcmp(path, "[stack]"))
		return COMP_STACK;
	/* [heap], [vdso], [vvar], [anon:...]: nobody's file. */
	if (path[0] == '[')
		return COMP_UNATTRIBUTED;
	if (exe && exe[0] && !strcmp(path, exe)) {
		*is_code = true;
		return COMP_APP;
	}
	slot = cache_slot(c, path);
	if (slot && slot->path && !strcmp(slot->path, path)) {
		*is_code = slot->is_code;
		return slot->owner;
	}
	name = spec_component_for_path(c->specs, path);
	if (name) {
		*is_code = true;
		owner = intern(c, name);
	} else if (is_shared_object(path)) {
		*is_code = true;
		component_lib_name(path, lib, sizeof(lib));
		owner = intern(c, lib);
	}
	if (slot)
		cache_put(slot, path, owner, *is_code);
	return owner;
}

comp_id classify_anon_caller(const struct classifier *c, comp_id caller_owner,
			     bool map_stack)
{
	if (caller_owner == c->libc)
		return map_stack ? COMP_STACK : COMP_UNATTRIBUTED;
	/* The program's threads' stacks are `stack`; a library's threads' are its own. */
	if (map_stack && (caller_owner == COMP_APP || caller_owner == COMP_UNATTRIBUTED))
		return COMP_STACK;
	return caller_owner;
}
