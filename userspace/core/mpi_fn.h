/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How much of the MPI library's memory each MPI function made grow, per
 * process (mpi_calls.csv). A change of the library's resident memory is
 * charged to the MPI call the thread was in (--mpi-calls: its probes), or,
 * outside any probed call, to the MPI function that requested the memory:
 * the outermost MPI frame on the stack at the request, which needs no probe
 * (MPI_Alloc_mem's block is touched after it returns).
 */
#ifndef MEMATTR_MPI_FN_H
#define MEMATTR_MPI_FN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPI_FN_MAX	1024	/* functions a spec may list */

/*
 * The MPI functions the specs name (`function` lines of component mpi),
 * numbered 1..n in spec order: the numbers the probes carry as cookies and
 * the tables below are indexed by. MPI_X and PMPI_X are one function.
 */
struct spec_set;
struct mpi_catalog {
	const char *names[MPI_FN_MAX];	/* the specs' strings */
	uint32_t n;
};

void mpi_catalog_init(struct mpi_catalog *c, const struct spec_set *specs);
/* The number of the function a symbol names (PMPI_X as MPI_X), 0: not an MPI function. */
uint32_t mpi_catalog_id(const struct mpi_catalog *c, const char *symbol);
const char *mpi_catalog_name(const struct mpi_catalog *c, uint32_t id);

struct mpi_fn_stats {
	int64_t gained, released;	/* bytes, both >= 0 */
	int64_t peak;			/* highest gained - released so far */
	double first_growth, last_growth;	/* time_s of growth, when gained > 0 */
	uint64_t calls;			/* outermost calls (from the kernel's counter) */
};

struct mpi_fn_table {
	struct mpi_fn_stats *s;		/* index fn - 1 */
	size_t n;
};

/* Charge delta bytes to function fn (1-based) at time when. -ENOMEM, -EINVAL or 0. */
int mpi_fn_charge(struct mpi_fn_table *t, uint32_t fn, int64_t delta, double when);

/* Stats of fn, NULL when nothing was ever charged or counted for it. */
struct mpi_fn_stats *mpi_fn_get(struct mpi_fn_table *t, uint32_t fn, bool create);

void mpi_fn_free(struct mpi_fn_table *t);

#endif
