/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uprobe_specs/NAME.spec: which files belong to which component, and which
 * functions a mode may probe. Format (one statement per line, '#' starts a
 * comment, blank lines ignored):
 *
 *   component NAME        following statements belong to component NAME
 *   library GLOB          a mapped file whose base name matches GLOB
 *                         ("libmpi.so" also matches libmpi.so.40.30.4)
 *   path GLOB             a mapped file whose full path matches GLOB
 *   function NAME [+OFF HEX]  an entry point the opt-in probe modes may attach
 *                         to; with +OFF, probe OFF bytes in instead, but
 *                         only if the function starts with the bytes HEX
 *                         (so a different build falls back to the entry):
 *                         an instruction the kernel emulates costs far less
 *                         than one it must single-step
 *   thread GLOB           threads whose name (comm) matches GLOB
 *   forward library GLOB  frames in a library matching GLOB only pass memory
 *                         requests on (libucm.so): never the requester
 *   forward function GLOB frames in a function whose ELF symbol matches GLOB
 *                         only pass requests on (_Znwm, _Znw*)
 *   forward allocator LIBGLOB FUNCGLOB
 *                         functions matching FUNCGLOB in a library matching
 *                         LIBGLOB are malloc-like front ends (the size their
 *                         first argument, the block their return value):
 *                         they forward as `forward function FUNCGLOB` does,
 *                         and --heap probes them, so their blocks are
 *                         counted at their callers (C++ operator new)
 *
 *
 * Who a process is, from outside it (what the engine's discovery reads):
 *
 *   rank variable NAME    an environment variable one MPI's own launcher
 *                         sets to the process's rank in MPI_COMM_WORLD
 *                         (OMPI_COMM_WORLD_RANK, MV2_COMM_WORLD_RANK)
 *   pmi variable NAME     a process-management interface's rank (PMIX_RANK,
 *                         PMI_RANK): set by whichever launcher speaks it, an
 *                         MPI's (Hydra) or the batch system's (srun
 *                         --mpi=pmix), so a rank may also inherit an outer
 *                         launcher's: it counts after every rank variable
 *   task variable NAME    a batch system's task number (SLURM_PROCID): the
 *                         rank when the batch system started the ranks
 *                         itself, but inherited unchanged by every rank of
 *                         an mpirun run inside one task, so it counts only
 *                         when no rank or pmi variable holds a rank
 *   launcher COMM         a process whose name (comm, at most 15
 *                         characters, matched exactly) launches or relays
 *                         (mpirun, orted, hydra_pmi_proxy, srun): followed to
 *                         its children, never accounted
 *
 * A process's rank is the first of these variables holding a non-negative
 * decimal integer: every rank variable in the order the specs were loaded
 * (file name order, then --spec files), then every pmi variable, then
 * every task variable, each in that order; a name given twice keeps its
 * first place.
 *
 * What interposers do to libc (what the requester's walk follows):
 *
 *   patched FUNCTION      an entry point of libc that an interposer may
 *                         rewrite into a jump to its own code (Open MPI's
 *                         patcher, UCX's bistro, libfabric's monitor: mmap,
 *                         munmap, brk, ...): a request made through it is
 *                         followed past the hook to the code that asked
 *
 * forward, variable, launcher and patched lines name no component: they
 * may stand anywhere in a file.
 *
 * Component names: [a-z0-9_:.-]+, at most SPEC_NAME_MAX-1 characters.
 */
#ifndef MEMATTR_SPEC_H
#define MEMATTR_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#define SPEC_NAME_MAX	64
#define SPEC_EXPECT_MAX	16	/* bytes a function must start with for +OFF */

enum spec_kind {
	SPEC_LIBRARY,
	SPEC_PATH,
	SPEC_FUNCTION,
	SPEC_THREAD,
	SPEC_FORWARD_LIBRARY,	/* component "" */
	SPEC_FORWARD_FUNCTION,	/* component "" */
	SPEC_FORWARD_ALLOCATOR,	/* component ""; pattern: the functions, library: their file */
	SPEC_RANK_VARIABLE,	/* component ""; pattern: the variable's name */
	SPEC_PMI_VARIABLE,	/* component ""; pattern: the variable's name */
	SPEC_TASK_VARIABLE,	/* component ""; pattern: the variable's name */
	SPEC_LAUNCHER,		/* component ""; pattern: the process name */
	SPEC_PATCHED,		/* component ""; pattern: libc's function */
};

#define SPEC_COMM_MAX	15	/* a process name's length (TASK_COMM_LEN - 1) */
#define SPEC_RANK_VARS_MAX 32	/* rank and task variables a run reads, at most */
#define SPEC_PATCHED_MAX	32	/* patched functions a run follows, at most */

struct spec_rule {
	enum spec_kind kind;
	char *pattern;
	char *library;	/* SPEC_FORWARD_ALLOCATOR: the library glob, else NULL */
	char component[SPEC_NAME_MAX];
	char *file;	/* where it was declared, for messages */
	int line;
	/* SPEC_FUNCTION with +OFF: probe there if the function starts with expect[] */
	unsigned long offset;
	unsigned char expect[SPEC_EXPECT_MAX];
	size_t nexpect;
};

struct spec_set {
	struct spec_rule *rules;
	size_t n, cap;
};

void spec_init(struct spec_set *set);
void spec_free(struct spec_set *set);

/*
 * Parse one spec file and append its rules. On error returns -1 and writes
 * "FILE:LINE: problem" (or "FILE: problem") into err.
 */
int spec_load_file(struct spec_set *set, const char *path, char *err, size_t errlen);

/* Load every *.spec in dir, in name order. */
int spec_load_dir(struct spec_set *set, const char *dir, char *err, size_t errlen);

/* Whether a library or path rule matches the mapped file at path. */
bool spec_rule_matches(const struct spec_rule *r, const char *path);

/* Component owning the mapped file at path, or NULL when no rule matches. */
const char *spec_component_for_path(const struct spec_set *set, const char *path);

/* Component owning a thread named comm, or NULL. */
const char *spec_component_for_thread(const struct spec_set *set, const char *comm);

/* Whether the file at path is a forwarding library (a forward library rule). */
bool spec_forwards_library(const struct spec_set *set, const char *path);

/* Whether the allocator rule r's library glob matches the mapped file at path. */
bool spec_allocator_in(const struct spec_rule *r, const char *path);

/* Whether function name (an ELF symbol) only forwards (a forward function or allocator rule). */
bool spec_forwards_function(const struct spec_set *set, const char *name);
bool spec_has_forward_functions(const struct spec_set *set);

/*
 * The environment variables that name a process's rank, best first (the
 * order above): up to max names into names[], pointers into the set;
 * the task variables only when tasks. Returns how many.
 */
size_t spec_rank_variables(const struct spec_set *set, bool tasks, const char **names, size_t max);

/* Whether a process named comm is a launcher (a launcher rule). NULL set: none is. */
bool spec_is_launcher(const struct spec_set *set, const char *comm);

/*
 * libc's functions an interposer may patch (patched lines), in the order
 * loaded, none twice: up to max names into names[], pointers into the set.
 * Returns how many (0 for a NULL set).
 */
size_t spec_patched_functions(const struct spec_set *set, const char **names, size_t max);

#endif
