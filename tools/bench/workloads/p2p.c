// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Small-message point-to-point benchmarks, one job:
 *  1. 8-byte ping-pong between ranks 0 and 1 (MPI_Send/MPI_Recv): half round
 *     trip latency in microseconds (the other ranks wait);
 *  2. multi-pair message rate: rank i < np/2 sends to rank i + np/2 windows of
 *     64 8-byte MPI_Isend, the receiver pre-posts 64 MPI_Irecv and answers
 *     each window with an 8-byte ack (the OSU mbw_mr pattern): aggregate
 *     messages per second over all pairs.
 * Each is time-boxed (--seconds; see struct box in bench.h: the batch size
 * is broadcast by rank 0 outside the timed part).
 *
 *   mpirun -np 2 p2p [--seconds S] [--ready-dir D --go-file F]
 * prints: RESULT pingpong_us <us> us / RESULT msgrate <msg/s> msg/s
 */
#include "mpibench.h"

#define WINDOW 64

static double t0;	/* start of the current batch (rank 0's clock) */

static double pingpong(int rank, double box)
{
	char buf[8] = {0};
	struct box b;

	box_init(&b, box);
	for (unsigned long batch = b.batch; batch; batch = mpi_box_next(&b, rank, now_s() - t0)) {

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now_s();
		for (unsigned long k = 0; k < batch; k++) {
			if (rank == 0) {
				MPI_Send(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == 1) {
				MPI_Recv(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
			}
		}
	}
	return b.counted ? b.spent * 1e6 / (2.0 * (double)b.counted) : 0;
}

static double msgrate(int rank, int np, double box)
{
	int pairs = np / 2, peer;
	char sbuf[WINDOW][8], rbuf[WINDOW][8], ack[8] = {0};
	MPI_Request req[WINDOW];
	struct box b;

	memset(sbuf, 1, sizeof(sbuf));
	peer = rank < pairs ? rank + pairs : rank - pairs;
	box_init(&b, box);
	for (unsigned long batch = b.batch; batch; batch = mpi_box_next(&b, rank, now_s() - t0)) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now_s();
		if (rank < pairs) {
			for (unsigned long w = 0; w < batch; w++) {
				for (int i = 0; i < WINDOW; i++)
					MPI_Isend(sbuf[i], 8, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[i]);
				MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
				MPI_Recv(ack, 8, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		} else if (rank < 2 * pairs) {
			for (unsigned long w = 0; w < batch; w++) {
				for (int i = 0; i < WINDOW; i++)
					MPI_Irecv(rbuf[i], 8, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[i]);
				MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
				MPI_Send(ack, 8, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return b.spent > 0 ? (double)pairs * WINDOW * (double)b.counted / b.spent : 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	int rank, np;
	double lat, rate;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	bench_parse(argc, argv, &o);
	if (np < 2)
		bench_fail("needs at least 2 ranks");
	mpi_ready_go(&o, rank);
	lat = pingpong(rank, o.seconds);
	rate = msgrate(rank, np, o.seconds);
	if (rank == 0) {
		printf("RESULT pingpong_us %.4f us\n", lat);
		printf("RESULT msgrate %.0f msg/s\n", rate);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
