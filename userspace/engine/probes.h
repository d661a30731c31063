/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The opt-in modes' uprobes: which functions (the spec's `function` lines
 * of component mpi for --mpi-calls, of component libc and the `forward
 * allocator` lines for --heap), where in
 * which library file they start, and attaching them in each traced process
 * as its libraries appear (at attach, and later dlopens). Probes are per
 * process, so other people's processes that map the same library never hit
 * them.
 */
#ifndef MEMATTR_PROBES_H
#define MEMATTR_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf_loader.h"
#include "classify.h"
#include "elfsym.h"
#include "process.h"
#include "spec.h"

#define PROBES_MAX_FILES	64	/* library files whose symbols are kept */
#define PROBES_MAX_PER_FILE	MPI_FN_MAX	/* functions probed in one library */

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
	struct elfsym_table files[PROBES_MAX_FILES];	/* most recently used last */
	size_t nfiles;
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
void probes_free(struct probes *pr);

/*
 * --mpi-calls: a rank calls MPI_Init milliseconds after exec, and the first
 * attach to a library costs the kernel more than that (creating its
 * uprobes). So the MPI libraries found in LD_LIBRARY_PATH and the default
 * directories are attached once at start, filtered to the tool's own pid,
 * which never maps them: no breakpoint is placed in any process (valgrind'd
 * or other people's programs are untouched), and each rank's own attach at
 * exec is then fast enough to precede its MPI_Init.
 */
void probes_prewarm(struct probes *pr, struct bpf_tracer *bpf, const struct spec_set *specs);
void probes_close_warm(struct probes *pr);

/*
 * Hand the links of p (of the warm set) over to a growing list the caller
 * closes, all at once with close_many: detaching one after the other costs
 * a grace period each. -ENOMEM: nothing moved, close them the usual way.
 */
int probes_move_links(struct proc *p, int **fds, size_t *n);
int probes_move_warm(struct probes *pr, int **fds, size_t *n);

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

/* Remove p's probes (it exited, or tracing ends). */
void probes_detach(struct proc *p);

/* The symbol table of path, loaded on first use; NULL when unreadable. */
const struct elfsym_table *probes_symbols(struct probes *pr, const char *path);

#endif
