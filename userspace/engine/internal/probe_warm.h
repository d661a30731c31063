/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --mpi-calls: a rank calls MPI_Init milliseconds after exec, and the first
 * attach to a library costs the kernel more than that (creating its
 * uprobes). So the MPI libraries found in LD_LIBRARY_PATH and the default
 * directories are attached once at start, filtered to the tool's own pid,
 * which never maps them: no breakpoint is placed in any process (valgrind'd
 * or other people's programs are untouched), and each rank's own attach at
 * exec is then fast enough to precede its MPI_Init.
 */
#ifndef MEMATTR_PROBE_WARM_H
#define MEMATTR_PROBE_WARM_H

#include "bpf_loader.h"
#include "probes.h"
#include "spec.h"

/* The warm links in pr->warm_fds, the libraries' paths in pr->warm_paths (probe_links.h closes them). */
void probes_prewarm(struct probes *pr, struct bpf_tracer *bpf, const struct spec_set *specs);

#endif
