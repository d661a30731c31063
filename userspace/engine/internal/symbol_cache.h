/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The symbol tables of library files, loaded on first use and kept for the
 * most recently used files: the modes find where to probe in them, and
 * every mode names code addresses with them (MPI functions, heap sites).
 */
#ifndef MEMATTR_SYMBOL_CACHE_H
#define MEMATTR_SYMBOL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"

#define SYMBOL_CACHE_FILES	64	/* library files whose symbols are kept */
#define SYMBOL_CACHE_PATHS	32	/* paths whose file identity is remembered */
/* A path's file identity is taken again (stat) after this long. */
#define SYMBOL_CACHE_RECHECK_NS	100000000ULL

/* Which file a path named when it was last looked at. */
struct symbol_path_seen {
	char *path;		/* NULL: an empty slot */
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint64_t at_ns;		/* CLOCK_MONOTONIC of the stat */
};

struct symbol_cache {
	struct elfsym_table files[SYMBOL_CACHE_FILES];	/* most recently used last */
	size_t nfiles;
	/*
	 * Naming an allocation stack looks up every frame's file, most of
	 * them the same few paths: one stat per path per recheck_ns, not one
	 * per frame. A file replaced under its path is seen at the next stat.
	 */
	struct symbol_path_seen seen[SYMBOL_CACHE_PATHS];
	uint64_t recheck_ns;	/* 0: SYMBOL_CACHE_RECHECK_NS (tests set their own) */
};

/*
 * The symbol table of path, loaded on first use; NULL when unreadable.
 * The cache owns it: good until the next call (which may evict it).
 */
const struct elfsym_table *symbol_cache_get(struct symbol_cache *sc, const char *path);
void symbol_cache_free(struct symbol_cache *sc);

#endif
