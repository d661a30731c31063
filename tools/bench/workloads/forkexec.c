// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fork/exec-heavy ranks: every rank runs --n shell commands with system()
 * (a fork, an exec of /bin/sh, which forks and execs /bin/true), as codes
 * do that call out to scripts, compressors or post-processors. Each
 * command is a short-lived process the tracer must follow from fork to
 * exit: what it costs per process is what this measures.
 *
 *   mpirun -np 4 forkexec [--n COMMANDS] [--ready-dir D --go-file F]
 * prints: RESULT forkexec_ms <wall ms per command, slowest rank> ms
 */
#include <stdlib.h>
#include "mpibench.h"

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	double t0, mine, slowest;
	int rank, np;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	bench_parse(argc, argv, &o);
	if (!o.n)
		o.n = 200;
	mpi_ready_go(&o, rank);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_s();
	for (long i = 0; i < o.n; i++)
		if (system("/bin/true") != 0)
			bench_fail("system(\"/bin/true\") failed");
	mine = now_s() - t0;
	MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("RESULT forkexec_ms %.4f ms\n", slowest * 1e3 / (double)o.n);
		printf("INFO commands %ld ranks %d seconds %.3f\n", o.n, np, slowest);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
