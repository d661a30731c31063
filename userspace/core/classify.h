/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who owns a mapping: the attribution rules that do not depend on the
 * event stream. File-backed pages belong to their file's owner (the main
 * executable is `app`, spec files name the MPI and libc pieces, any other
 * shared object is `lib:<name>.so`); anonymous memory belongs to whoever
 * asked for it, which the caller decides.
 */
#ifndef MEMATTR_CLASSIFY_H
#define MEMATTR_CLASSIFY_H

#include <stdbool.h>

#include "components.h"
#include "spec.h"

struct proc;

/*
 * A session's table interns libc and mpi first, so their ids are the same
 * in every session: the opt-in modes' probes, shared by all sessions, use
 * them.
 */
enum {
	CLASSIFY_LIBC = COMP_FIXED_COUNT,
	CLASSIFY_MPI,
};

/*
 * Files already classified, by path: every mapping is classified at every
 * read of a process's maps, and matching each spec rule's glob is most of
 * that. Slots are replaced, so it stays this size whatever the node maps.
 */
#define CLASSIFY_CACHE_SLOTS	512

struct classify_cached {
	char *path;		/* NULL: empty slot */
	comp_id owner;
	bool is_code;
};

struct classifier {
	const struct spec_set *specs;
	struct classify_cached *cache;	/* CLASSIFY_CACHE_SLOTS, NULL: none */
	struct comp_table *comps;	/* the session's component names */
	comp_id libc;		/* id of "libc", the malloc/loader layer */
	comp_id mpi;		/* id of "mpi", whose growth --mpi-calls splits by function */
	/*
	 * The spec MPI function (its catalogue number) whose code is at
	 * offset off of file path (as process p's maps name it), 0 when none;
	 * NULL: functions are not told apart.
	 */
	uint32_t (*mpi_fn_at)(void *ctx, const struct proc *p, const char *path, uint64_t off);
	void *mpi_fn_ctx;
};

/* Names interned in comps (NULL: the default table). */
void classifier_init_table(struct classifier *c, const struct spec_set *specs,
			   struct comp_table *comps);
void classifier_init(struct classifier *c, const struct spec_set *specs);
void classifier_free(struct classifier *c);

/* Name of component id in the classifier's table. */
const char *classify_name(const struct classifier *c, comp_id id);

/*
 * Owner of a mapping as /proc/PID/maps names it. exe is the process's main
 * executable path. Returns COMP_UNATTRIBUTED for anonymous memory and for
 * data files whose mapper is unknown; *is_code tells whether the file is
 * one whose pages belong to it by nature (an executable or a library).
 */
comp_id classify_path(const struct classifier *c, const char *path,
		      const char *exe, bool *is_code);

/*
 * Owner of an anonymous mapping requested by code owned by caller_owner
 * (the first caller outside libc). libc never owns what it maps for others:
 * if libc is all that is known, the memory is unattributed. Thread stacks
 * (MAP_STACK) of the program's own threads are `stack`; a library that
 * starts threads (MPI's progress and PMIx threads) owns their stacks.
 */
comp_id classify_anon_caller(const struct classifier *c, comp_id caller_owner,
			     bool map_stack);

#endif
