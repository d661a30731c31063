/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The output directory of a run, checked before anything is traced and,
 * under sudo, made with the rights of the user who ran sudo: the path is
 * theirs to choose, so a symlink they planted on it (into a directory
 * only root may write) must meet their rights, not root's. A forked child
 * that became the user checks the path, and later makes and opens the
 * directory and hands it back as a descriptor; root then writes through
 * that descriptor (/proc/self/fd/N/.) and never resolves the path again.
 */
#ifndef MEMATTR_OUTPUT_DIR_H
#define MEMATTR_OUTPUT_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* Running as root under sudo for a user other than root. */
bool output_under_sudo(void);

/*
 * Refuse an output path that could not be used, creating nothing: as
 * the sudo user when under sudo. 0, or -1 with one line in err.
 */
int output_check(const char *path, char *err, size_t errlen);

/*
 * Under sudo: path made (0750) and opened by the sudo user; *fd an O_PATH
 * descriptor on it, fdpath its "/proc/self/fd/N/." name for outdir_open.
 * 0, or -1 with err.
 */
int output_open_as_user(const char *path, int *fd, char *fdpath, size_t fdlen, char *err,
			size_t errlen);

#endif
