/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which node this is, as a job's datasets name it: Slurm's name for the
 * node when the tool runs inside a Slurm step (SLURMD_NODENAME: a site's
 * node names need not be its hostnames), the hostname otherwise. Only
 * [A-Za-z0-9._-] are kept, the rest become '_': the name goes into file
 * names, CSV fields and paths (--output out/%n).
 */
#ifndef MEMATTR_NODE_NAME_H
#define MEMATTR_NODE_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define NODE_NAME_MAX	64

/* This node's name into buf (NODE_NAME_MAX bytes suffice); never empty. */
void node_name(char *buf, size_t len);

/* True when s is a non-empty name of [A-Za-z0-9._-], not "." or "..", shorter than NODE_NAME_MAX. */
bool node_name_valid(const char *s);

/*
 * path with "%n" replaced by node, "%j" by job (empty when NULL) and "%%"
 * by '%' into out. -1 when it does not fit or holds another '%' sequence.
 */
int node_expand_path(const char *path, const char *node, const char *job, char *out, size_t outlen);

#endif
