/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The symbol tables of library files, loaded on first use and kept for the
 * most recently used files: the modes find where to probe in them, and
 * every mode names code addresses with them (MPI functions, heap sites).
 */
#ifndef MEMATTR_SYMBOL_CACHE_H
#define MEMATTR_SYMBOL_CACHE_H

#include <stddef.h>

#include "elfsym.h"

#define SYMBOL_CACHE_FILES	64	/* library files whose symbols are kept */

struct symbol_cache {
	struct elfsym_table files[SYMBOL_CACHE_FILES];	/* most recently used last */
	size_t nfiles;
};

/*
 * The symbol table of path, loaded on first use; NULL when unreadable.
 * The cache owns it: good until the next call (which may evict it).
 */
const struct elfsym_table *symbol_cache_get(struct symbol_cache *sc, const char *path);
void symbol_cache_free(struct symbol_cache *sc);

#endif
