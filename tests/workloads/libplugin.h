/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libplugin.so: a plugin mpi_dlopen loads with dlopen() while it runs (never
 * linked in), so memattr-bpf meets the library only after it attached and
 * must still charge the plugin's own memory to `lib:libplugin.so`.
 */
#ifndef LIBPLUGIN_H
#define LIBPLUGIN_H

#include <stddef.h>

/*
 * One malloc of large bytes (above the mmap threshold: a mapping malloc makes
 * for the plugin) and one anonymous mmap of map bytes, every page touched
 * with a pattern seeded by seed. Returns 0, or -1 when an allocation failed.
 */
typedef int (*plugin_alloc_fn)(size_t large, size_t map, unsigned seed);
int plugin_alloc(size_t large, size_t map, unsigned seed);

/* Bytes the plugin holds now, as the kernel counts them (whole pages). */
typedef size_t (*plugin_bytes_fn)(void);
size_t plugin_bytes(void);

/* Check every page's pattern, then give everything back; returns the number of bad pages. */
typedef size_t (*plugin_free_fn)(void);
size_t plugin_free(void);

#endif
