/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The opt-in modes' uprobes: which functions (the spec's `function` lines
 * of component mpi for --mpi-calls, of component libc and the `forward
 * allocator` lines for --heap), where in which library file they start,
 * and attaching them in each traced process as its libraries appear (at
 * attach, and later dlopens). Probes are per process, so other people's
 * processes that map the same library never hit them.
 *
 * This file: the set of what the modes probe, made from the specs and
 * freed. The steps, lowest first: symbol_cache.h (symbol tables by file),
 * lib_search.h (where the loader finds a library), probe_links.h (links
 * held, handed over, closed), probe_batch.h (one library's probes attached
 * as two links), probe_warm.h (MPI libraries attached at start),
 * probe_library.h (one library of a process), probe_process.h (a
 * process's libraries at fork, exec and each map update).
 */
#ifndef MEMATTR_PROBES_H
#define MEMATTR_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "mpi_fn.h"
#include "spec.h"
#include "symbol_cache.h"

/* One function a mode probes, from one spec line. */
struct probe_target {
	const struct spec_rule *rule;
	comp_id component;		/* files of this component are searched */
	bool mpi;			/* --mpi-calls (else --heap) */
	uint32_t cookie;		/* mpi: its index + 1; heap: enum heap_kind */
	bool found, warned, entry_fallback_warned;
};

#define PROBES_MAX_WARM		32	/* links held to keep MPI libraries' probes warm */

/*
 * --heap probes a program that is not an MPI program (a shell a rank's
 * system() started, a compressor, /bin/true) only once it has lived this
 * long: placing and removing a process's probes costs the kernel a grace
 * period each, far more than such a process lives, and a job that forks
 * hundreds of them would stall on it. Ranks are probed at once.
 */
#define PROBES_HEAP_DEFER_S	0.2

struct probes {
	struct probe_target *targets;
	size_t ntargets;
	/* --heap: the specs' `forward allocator` rules (operator new), probed as malloc is */
	const struct spec_rule **allocators;
	size_t nallocators;
	struct symbol_cache symbols;	/* the library files' symbol tables */
	bool mpi_calls, heap, verbose;
	int warm_fds[PROBES_MAX_WARM];	/* see probes_prewarm */
	size_t nwarm_fds;
	char *warm_paths[PROBES_MAX_WARM];	/* the MPI libraries found at start */
	size_t nwarm_paths;
	uint64_t attached, failed;	/* probes placed, and attach failures */
};

/* Collect what the enabled modes probe. -1 with err when the specs list nothing for a mode. */
int probes_init(struct probes *pr, const struct spec_set *specs, const struct mpi_catalog *mpi,
		bool mpi_calls, bool heap, bool verbose, char *err, size_t errlen);
/* The warm links closed, the symbol tables and the targets freed. */
void probes_free(struct probes *pr);

#endif
