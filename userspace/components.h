/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Component names interned to small integers so regions can carry an owner
 * in two bytes. The table is global and bounded: the names a node sees are
 * few (app, mpi, libc, lib:<name>.so, stack, unattributed).
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

/* Id of name, interning it. Past COMPONENTS_MAX, names fold into "lib:other". */
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
