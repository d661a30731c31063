// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mostly idle ranks that hold memory: each rank mallocs and touches --mib MiB
 * (default 16), says it is ready, and then until --stop-file exists wakes
 * every 100 ms; every 10th wake-up it allocates, touches and frees 256 KiB
 * (a little activity, as a real job between phases has). Then a barrier and
 * MPI_Finalize. Used to measure the tracer's own cost at 1, 8 and 64 ranks.
 *
 *   mpirun -np N hold [--mib M] --ready-dir D --stop-file F
 */
#include "mpibench.h"

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	int rank;
	char *held;
	long wake = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench_parse(argc, argv, &o);
	if (!o.mib)
		o.mib = 16;
	held = malloc((size_t)o.mib * MIB);
	if (!held)
		bench_fail("malloc failed");
	memset(held, 1, (size_t)o.mib * MIB);
	MPI_Barrier(MPI_COMM_WORLD);
	bench_ready(&o, rank);
	while (!o.stop_file || access(o.stop_file, F_OK) != 0) {
		sleep_ms(100);
		if (++wake % 10 == 0) {
			char *p = malloc(256 * KIB);

			if (p) {
				memset(p, 2, 256 * KIB);
				bench_sink += (unsigned char)p[4096];
				free(p);
			}
		}
		if (!o.stop_file && wake > 10)
			break;
	}
	bench_sink += (unsigned char)held[0];
	MPI_Barrier(MPI_COMM_WORLD);
	free(held);
	MPI_Finalize();
	return 0;
}
