// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The specs a run loads, for the tracing command and the daemon alike:
 * the built-in directory, then every --spec file.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_specs.h"

/* Built-in specs: next to the binary in a source tree, else the installed ones. */
static const char *default_spec_dir(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (n > 0) {
		exe[n] = '\0';
		snprintf(buf, len, "%s/uprobe_specs", dirname(exe));
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return buf;
	}
	return MEMATTR_SPEC_DIR;
}

int load_specs(const struct options *o, struct spec_set *specs, char *err, size_t errlen)
{
	char buf[PATH_MAX + 16];
	const char *dir = o->spec_dir ? o->spec_dir : default_spec_dir(buf, sizeof(buf));

	if (spec_load_dir(specs, dir, err, errlen))
		return -1;
	for (size_t i = 0; i < o->nspecs; i++)
		if (spec_load_file(specs, o->specs[i], err, errlen))
			return -1;
	return 0;
}
