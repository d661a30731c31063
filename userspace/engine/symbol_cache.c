// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "symbol_cache.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t path_slot(const char *path)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h % SYMBOL_CACHE_PATHS;
}

/*
 * The file path names now: from its slot when it was stat'ed less than
 * recheck_ns ago, else stat'ed (and remembered). -1 when stat fails; a
 * failure is not remembered, the next lookup tries again.
 */
static int file_at(struct symbol_cache *sc, const char *path, struct symbol_path_seen *file)
{
	struct symbol_path_seen *s = &sc->seen[path_slot(path)];
	uint64_t window = sc->recheck_ns ? sc->recheck_ns : SYMBOL_CACHE_RECHECK_NS;
	uint64_t now = mono_ns();
	struct stat st;

	if (s->path && !strcmp(s->path, path) && now - s->at_ns < window) {
		*file = *s;
		return 0;
	}
	if (stat(path, &st)) {
		if (s->path && !strcmp(s->path, path)) {
			free(s->path);
			s->path = NULL;
		}
		return -1;
	}
	*file = (struct symbol_path_seen){
		.dev = (uint64_t)st.st_dev,
		.ino = (uint64_t)st.st_ino,
		.size = (uint64_t)st.st_size,
		.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
		.at_ns = now,
	};
	if (!s->path || strcmp(s->path, path)) {
		free(s->path);
		s->path = strdup(path);	/* out of memory: not remembered */
	}
	if (s->path) {
		file->path = s->path;
		*s = *file;
	}
	return 0;
}

const struct elfsym_table *symbol_cache_get(struct symbol_cache *sc, const char *path)
{
	struct symbol_path_seen file;
	struct elfsym_table t;

	/* Keyed by the file itself: after an upgrade, or in a container, one path names another file. */
	if (file_at(sc, path, &file))
		return NULL;
	for (size_t i = 0; i < sc->nfiles; i++) {
		const struct elfsym_table *f = &sc->files[i];

		if (f->dev != file.dev || f->ino != file.ino || f->size != file.size ||
		    f->mtime_ns != file.mtime_ns)
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
	for (size_t i = 0; i < SYMBOL_CACHE_PATHS; i++) {
		free(sc->seen[i].path);
		sc->seen[i].path = NULL;
	}
}
