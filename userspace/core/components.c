// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Component tables: names interned once per table, freed with it, looked
 * up by linear scan. A node sees a few dozen names at most, and lookups happen on
 * mapping changes (rare), not on every event, so a hash would buy nothing.
 *
 * Not thread-safe: the tool interns from its single event loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "components.h"

#define OTHER_NAME	"lib:other"

static const char *const fixed_names[COMP_FIXED_COUNT] = {
	[COMP_UNATTRIBUTED]	= "unattributed",
	[COMP_APP]		= "app",
	[COMP_STACK]		= "stack",
};

static struct comp_table default_table = {
	.names = { "unattributed", "app", "stack" },
	.count = COMP_FIXED_COUNT,
};

void comp_table_init(struct comp_table *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < COMP_FIXED_COUNT; i++)
		t->names[i] = (char *)fixed_names[i];
	t->count = COMP_FIXED_COUNT;
}

void comp_table_free(struct comp_table *t)
{
	for (size_t i = COMP_FIXED_COUNT; i < t->count; i++)
		free(t->names[i]);
	comp_table_init(t);
}

static comp_id lookup(const struct comp_table *t, const char *name)
{
	for (size_t i = 0; i < t->count; i++)
		if (!strcmp(t->names[i], name))
			return (comp_id)i;
	return COMPONENTS_MAX;
}

static comp_id append(struct comp_table *t, const char *name)
{
	char *copy = strdup(name);

	/* Out of memory: an owner we cannot name is not an owner. */
	if (!copy)
		return COMP_UNATTRIBUTED;
	t->names[t->count] = copy;
	return (comp_id)t->count++;
}

comp_id comp_table_id(struct comp_table *t, const char *name)
{
	comp_id id;
	size_t room;

	if (!name || !name[0])
		return COMP_UNATTRIBUTED;
	id = lookup(t, name);
	if (id != COMPONENTS_MAX)
		return id;
	/*
	 * Keep the last slot for "lib:other" so that folding always has
	 * somewhere to go, whatever order the names arrive in.
	 */
	room = t->other_id ? COMPONENTS_MAX : COMPONENTS_MAX - 1;
	if (t->count < room || (!t->other_id && !strcmp(name, OTHER_NAME))) {
		id = append(t, name);
		if (!strcmp(name, OTHER_NAME) && id != COMP_UNATTRIBUTED)
			t->other_id = id;
		return id;
	}
	if (!t->other_id) {
		id = append(t, OTHER_NAME);
		if (id != COMP_UNATTRIBUTED)
			t->other_id = id;
		return id;
	}
	return t->other_id;
}

const char *comp_table_name(const struct comp_table *t, comp_id id)
{
	if (id >= t->count)
		return NULL;
	return t->names[id];
}

size_t comp_table_count(const struct comp_table *t)
{
	return t->count;
}

comp_id component_id(const char *name)
{
	return comp_table_id(&default_table, name);
}

const char *component_name(comp_id id)
{
	return comp_table_name(&default_table, id);
}

size_t component_count(void)
{
	return comp_table_count(&default_table);
}

/*
 * End of the ".so" in a base name: "libz.so.1.2.13" -> after "libz.so".
 * Only a ".so" that ends the name or is followed by '.' counts, so
 * "libx.sound.so.2" becomes "libx.sound.so", not "libx.so".
 */
static size_t so_name_len(const char *base)
{
	const char *p = base;

	while ((p = strstr(p, ".so"))) {
		if (p[3] == '\0' || p[3] == '.')
			return (size_t)(p - base) + 3;
		p += 3;
	}
	return strlen(base);
}

void component_lib_name(const char *path, char *out, size_t outlen)
{
	const char *base;
	size_t len, room;

	if (!out || !outlen)
		return;
	base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : (path ? path : "");
	if (!base[0]) {
		/* "/" or "": no file name to show, but never an empty row name. */
		snprintf(out, outlen, "%s", OTHER_NAME);
		return;
	}
	len = so_name_len(base);
	room = outlen > 4 ? outlen - 4 - 1 : 0;
	if (len > room)
		len = room;
	snprintf(out, outlen, "lib:%.*s", (int)len, base);
}
