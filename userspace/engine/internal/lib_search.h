/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the dynamic loader will find a library a program names
 * (DT_NEEDED), found before the loader maps it: the modes probe a new
 * program's libraries at its exec.
 */
#ifndef MEMATTR_LIB_SEARCH_H
#define MEMATTR_LIB_SEARCH_H

#include <limits.h>
#include <stdbool.h>

/* Where the loader looks when nothing else says (Debian's multiarch layout first). */
#define LIB_SEARCH_DEFAULT_DIRS \
	"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib"

/*
 * name as the loader finds it, resolved into out (PATH_MAX bytes): in
 * ldpath (LD_LIBRARY_PATH, NULL: none), then runpath (DT_RUNPATH, NULL:
 * none), then the default directories; $ORIGIN is origin, the program's
 * directory. False when none has it.
 */
bool lib_search_find(const char *ldpath, const char *runpath, const char *origin,
		     const char *name, char out[PATH_MAX]);

#endif
