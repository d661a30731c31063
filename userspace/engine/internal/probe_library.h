/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One library file of a traced process: whether a mode probes it now, and
 * probing it once (every target it defines, and with --heap the `forward
 * allocator` functions of its file).
 */
#ifndef MEMATTR_PROBE_LIBRARY_H
#define MEMATTR_PROBE_LIBRARY_H

#include <stdbool.h>

#include "bpf_loader.h"
#include "probes.h"
#include "process.h"

/* Does a mode probe the file m of p now (--heap waits on a deferred process)? */
bool probe_library_wanted(const struct probes *pr, const struct proc *p, const struct code_map *m);

/* Probe the file m of p unless it already was. True when it is probed now. */
bool probe_library_once(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
			const struct code_map *m);

#endif
