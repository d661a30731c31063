/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Component names interned to small integers so regions can carry an owner
 * in two bytes. A table is bounded (the names a job sees are few: app, mpi,
 * libc, lib:<name>.so, stack, unattributed) and belongs to one session: it
 * is freed when the job ends. The component_*() calls use a default table
 * (tests, tools that trace one thing).
 */
#ifndef MEMATTR_COMPONENTS_H
#define MEMATTR_COMPONENTS_H

#include <stddef.h>
#include <stdint.h>

#define COMPONENTS_MAX	512

typedef uint16_t comp_id;

/* Always present, in this order. */
enum {
	COMP_UNATTRIBUTED = 0,
	COMP_APP,
	COMP_STACK,
	COMP_FIXED_COUNT,
};

struct comp_table {
	char *names[COMPONENTS_MAX];	/* the fixed ones point at literals */
	size_t count;
	comp_id other_id;		/* 0 until "lib:other" is interned */
};

void comp_table_init(struct comp_table *t);
void comp_table_free(struct comp_table *t);

/* Id of name, interning it. Past COMPONENTS_MAX, names fold into "lib:other". */
comp_id comp_table_id(struct comp_table *t, const char *name);
const char *comp_table_name(const struct comp_table *t, comp_id id);
size_t comp_table_count(const struct comp_table *t);

/* The same on the default table. */
comp_id component_id(const char *name);
const char *component_name(comp_id id);
size_t component_count(void);

/*
 * "lib:<base name up to and including .so>" for a library path:
 * /usr/lib/x86_64-linux-gnu/libz.so.1.2.13 -> lib:libz.so,
 * /opt/x/plugin.so -> lib:plugin.so, /opt/data.bin -> lib:data.bin.
 */
void component_lib_name(const char *path, char *out, size_t outlen);

#endif
