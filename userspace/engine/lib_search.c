// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_search.h"

/*
 * Where the loader will find name: the first of dirs (':'-separated) that
 * has it, resolved into out (PATH_MAX bytes).
 */
static bool find_in_dirs(const char *dirs, const char *origin, const char *name,
			 char out[PATH_MAX])
{
	char buf[PATH_MAX], *save = NULL, *dir;
	char *copy = strdup(dirs);
	bool found = false;

	if (!copy)
		return false;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		/* Relative entries would resolve against the tool's own directory. */
		if (dir[0] != '/' && dir[0] != '$')
			continue;
		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 7, name);
		else if (!strncmp(dir, "${ORIGIN}", 9))
			snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 9, name);
		else
			snprintf(buf, sizeof(buf), "%s/%s", dir, name);
		found = realpath(buf, out) != NULL;
	}
	free(copy);
	return found;
}

bool lib_search_find(const char *ldpath, const char *runpath, const char *origin,
		     const char *name, char out[PATH_MAX])
{
	/* The loader's order: LD_LIBRARY_PATH, DT_RUNPATH, then the default directories. */
	return (ldpath && find_in_dirs(ldpath, origin, name, out)) ||
	       (runpath && find_in_dirs(runpath, origin, name, out)) ||
	       find_in_dirs(LIB_SEARCH_DEFAULT_DIRS, origin, name, out);
}
