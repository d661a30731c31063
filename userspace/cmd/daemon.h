/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `memattr-bpf daemon`: the node service (cmd/daemon.c). */
#ifndef MEMATTR_DAEMON_H
#define MEMATTR_DAEMON_H

#include <stddef.h>

#include "options.h"
#include "spec.h"

/* argv[0] is "daemon". Returns the exit status. */
int daemon_main(int argc, char **argv);

/* The built-in specs and --spec files (cmd/main.c). */
int load_specs(const struct options *o, struct spec_set *specs, char *err, size_t errlen);

#endif
