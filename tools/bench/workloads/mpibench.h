/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* MPI side of the benchmark helpers: failure aborts the job, start protocol. */
#ifndef MPIBENCH_H
#define MPIBENCH_H

#include <mpi.h>
#include "bench.h"

static void bench_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	MPI_Abort(MPI_COMM_WORLD, 3);
	exit(3);
}

/* Every rank says it is ready; rank 0 waits for the go file; barrier. */
static inline void mpi_ready_go(const struct bench_opts *o, int rank)
{
	MPI_Barrier(MPI_COMM_WORLD);
	bench_ready(o, rank);
	if (rank == 0)
		bench_wait_file(o->go_file, 600);
	MPI_Barrier(MPI_COMM_WORLD);
}

/*
 * Rank 0 books the batch that took el seconds and decides the next batch
 * size (0: done); everyone follows. Outside the timed part.
 */
static inline unsigned long mpi_box_next(struct box *b, int rank, double el)
{
	unsigned long next = rank == 0 ? box_next(b, el) : 0;

	MPI_Bcast(&next, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
	b->batch = next;
	return next;
}

#endif
