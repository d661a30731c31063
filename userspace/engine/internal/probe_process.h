/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * When a traced process's libraries are probed: at its fork, at its exec
 * (the libraries its program names, before the loader maps them) and as
 * it maps new ones (dlopen); and whether it still lacks a mode's probes.
 */
#ifndef MEMATTR_PROBE_PROCESS_H
#define MEMATTR_PROBE_PROCESS_H

#include <stdbool.h>

#include "bpf_loader.h"
#include "classify.h"
#include "probes.h"
#include "process.h"

/*
 * p was just forked by a traced process (it may exec into a rank): probe
 * the MPI libraries found at start in it now. Its probes follow it through
 * exec and arm when the loader maps the library, so even an MPI_Init in
 * the first milliseconds of the new program is seen. Not when the parent
 * is a rank itself (a rank's children are its system() and popen()
 * commands, never ranks): those children are probed, if they exec an MPI
 * program, at exec, and their --heap probes wait (PROBES_HEAP_DEFER_S).
 */
void probes_at_fork(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
		    const struct proc *parent);

/*
 * p has just exec'd: probe the libraries its program names (DT_NEEDED),
 * found as the loader will find them, before the loader maps them -- the
 * program may call MPI_Init a few milliseconds later.
 */
void probes_at_exec(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
		    const struct classifier *cls);

/* Probe the libraries p maps now that it had not mapped before. */
void probes_update(struct probes *pr, struct bpf_tracer *bpf, struct proc *p, double now);

/* True while p lacks the probes of an enabled mode (its libraries are still loading). */
bool probes_waiting(const struct probes *pr, const struct proc *p);

#endif
