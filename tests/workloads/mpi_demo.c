/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_demo: a small workload for tools/demo.sh whose memory has a visible
 * application part and a visible MPI part.
 *
 *   mpi_demo [--go-file PATH] [--app-mib N] [--steps K] [--step-ms MS]
 *
 * After the go file appears (if any), each rank R grows an application
 * array step by step to (R+1)*N MiB, and each step runs an MPI_Alltoall
 * over buffers from MPI_Alloc_mem (memory the MPI library allocates, so it
 * is MPI's) growing with the step. Then everything is released.
 */
#include "common.h"

int main(int argc, char **argv)
{
	const char *go_file = getenv("MEMATTR_GO_FILE");
	long app_mib = 8, steps = 5, step_ms = 400;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--go-file"))
			go_file = argv[i + 1];
		else if (!strcmp(argv[i], "--app-mib"))
			app_mib = parse_long("mpi_demo", argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--steps"))
			steps = parse_long("mpi_demo", argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--step-ms"))
			step_ms = parse_long("mpi_demo", argv[i], argv[i + 1]);
		else
			die("usage: mpi_demo [--go-file PATH] [--app-mib N] [--steps K] [--step-ms MS]");
	}
	if (steps < 1)
		steps = 1;
	wait_for_go(rank, go_file, 120);

	size_t app_len = (size_t)(rank + 1) * (size_t)app_mib * MIB;
	unsigned char *app = malloc(app_len);
	if (!app)
		die("mpi_demo: malloc failed");
	void *sbuf = NULL, *rbuf = NULL;

	for (long s = 1; s <= steps; s++) {
		/* The application's share: one more slice of its array. */
		touch_pages(app + (size_t)(s - 1) * (app_len / (size_t)steps),
			    app_len / (size_t)steps, (unsigned)rank);
		/* MPI's share: alltoall buffers of s * 256 KiB per peer. */
		int count = (int)(s * 256 * 1024);
		if (sbuf)
			MPI_Free_mem(sbuf);
		if (rbuf)
			MPI_Free_mem(rbuf);
		MPI_Alloc_mem((MPI_Aint)count * size, MPI_INFO_NULL, &sbuf);
		MPI_Alloc_mem((MPI_Aint)count * size, MPI_INFO_NULL, &rbuf);
		memset(sbuf, rank + 1, (size_t)count * (size_t)size);
		MPI_Alltoall(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, MPI_COMM_WORLD);
		for (int p = 0; p < size; p++)
			if (((unsigned char *)rbuf)[(size_t)p * (size_t)count] != (unsigned char)(p + 1))
				die("mpi_demo: alltoall delivered wrong data");
		sleep_ms(step_ms);
	}
	MPI_Free_mem(sbuf);
	MPI_Free_mem(rbuf);
	free(app);
	sleep_ms(step_ms);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
