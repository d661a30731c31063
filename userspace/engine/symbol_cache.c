// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include <sys/stat.h>

#include "symbol_cache.h"

const struct elfsym_table *symbol_cache_get(struct symbol_cache *sc, const char *path)
{
	struct elfsym_table t;
	struct stat st;

	/* Keyed by the file itself: after an upgrade, or in a container, one path names another file. */
	if (stat(path, &st))
		return NULL;
	for (size_t i = 0; i < sc->nfiles; i++) {
		const struct elfsym_table *f = &sc->files[i];

		if (f->dev != (uint64_t)st.st_dev || f->ino != (uint64_t)st.st_ino ||
		    f->size != (uint64_t)st.st_size ||
		    f->mtime_ns != (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec)
			continue;
		/* Keep the most recently used last: the first is evicted. */
		t = sc->files[i];
		memmove(&sc->files[i], &sc->files[i + 1], (sc->nfiles - i - 1) * sizeof(t));
		sc->files[sc->nfiles - 1] = t;
		return &sc->files[sc->nfiles - 1];
	}
	if (elfsym_load(&t, path))
		return NULL;
	if (sc->nfiles == SYMBOL_CACHE_FILES) {
		elfsym_free(&sc->files[0]);
		memmove(&sc->files[0], &sc->files[1], (sc->nfiles - 1) * sizeof(t));
		sc->nfiles--;
	}
	sc->files[sc->nfiles++] = t;
	return &sc->files[sc->nfiles - 1];
}

void symbol_cache_free(struct symbol_cache *sc)
{
	for (size_t i = 0; i < sc->nfiles; i++)
		elfsym_free(&sc->files[i]);
	sc->nfiles = 0;
}
