// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * All-to-all with per-iteration buffers: every iteration mallocs a send and a
 * receive buffer, fills the send buffer, runs MPI_Alltoall and frees both.
 * The block per peer alternates 2 KiB and 4 MiB (the most stressful pattern
 * of the seed papers: the big iterations map, fault in and unmap
 * 2 x 4 MiB x np every time). glibc's mmap threshold is pinned at 128 KiB
 * (mallopt), as without it glibc would raise it after the first free and keep
 * the big buffers on the heap, hiding the pattern.
 *
 *   mpirun -np 2 alltoall_alloc [--seconds S] [--ready-dir D --go-file F]
 * prints: RESULT alltoall_ms <ms per iteration, mean of both sizes> ms
 */
#include <malloc.h>
#include "mpibench.h"

static unsigned long one_iteration(int np, size_t per_peer, unsigned long it)
{
	char *s = malloc(per_peer * (size_t)np), *r = malloc(per_peer * (size_t)np);
	unsigned long sum = 0;

	if (!s || !r)
		bench_fail("malloc of %zu bytes failed", per_peer * (size_t)np);
	memset(s, (int)(it & 0x7f), per_peer * (size_t)np);
	MPI_Alltoall(s, (int)per_peer, MPI_BYTE, r, (int)per_peer, MPI_BYTE, MPI_COMM_WORLD);
	for (int p = 0; p < np; p++)
		sum += (unsigned char)r[(size_t)p * per_peer + per_peer - 1];
	free(s);
	free(r);
	return sum;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	int rank, np;
	unsigned long it = 0;
	struct box b;
	double t0 = 0;

	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	bench_parse(argc, argv, &o);
	mpi_ready_go(&o, rank);
	/* A batch is a number of (2 KiB, 4 MiB) iteration pairs. */
	box_init(&b, o.seconds);
	for (unsigned long batch = b.batch; batch; batch = mpi_box_next(&b, rank, now_s() - t0)) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now_s();
		for (unsigned long k = 0; k < batch; k++) {
			bench_sink += one_iteration(np, 2 * KIB, it++);
			bench_sink += one_iteration(np, 4 * MIB, it++);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0) {
		printf("RESULT alltoall_ms %.4f ms\n", b.spent * 1e3 / (2.0 * (double)b.counted));
		printf("INFO iterations %lu seconds %.3f\n", 2 * b.counted, b.spent);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
