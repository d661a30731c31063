/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The specs a run loads: the built-in directory and its --spec files (cmd/run_specs.c). */
#ifndef MEMATTR_RUN_SPECS_H
#define MEMATTR_RUN_SPECS_H

#include <stddef.h>

#include "options.h"
#include "spec.h"

/*
 * --spec-dir's specs, else the built-in ones (next to the binary in a source
 * tree, else the installed ones), then every --spec file. 0, or -1 with the
 * reason in err.
 */
int load_specs(const struct options *o, struct spec_set *specs, char *err, size_t errlen);

#endif
