// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mini-app: allocation phases and compute, timed by wall clock.
 *
 * Each of --n steps (default 6):
 *  - allocation phase: two grids of 8, 16 or 24 MiB (by step), and 20,000
 *    small particle records (64-320 B) on a linked list;
 *  - compute phase: 40 Jacobi sweeps of a 5-point stencil over the grid,
 *    each with a halo exchange with both ring neighbours (MPI_Sendrecv) and
 *    an MPI_Allreduce of the residual; the particles are walked each sweep;
 *  - the particles and grids are freed.
 * glibc's malloc keeps its defaults (what an application gets).
 *
 *   mpirun -np 2 miniapp [--n STEPS] [--ready-dir D --go-file F]
 * prints: RESULT miniapp_s <wall seconds from go to the end barrier> s
 */
#include "mpibench.h"

#define COLS	1024
#define SWEEPS	40
#define NPART	20000

struct particle {
	struct particle *next;
	double x, y, z, w;
	char payload[];
};

static double sweep(double *restrict a, double *restrict b, size_t rows)
{
	double res = 0;

	for (size_t i = 1; i + 1 < rows; i++)
		for (size_t j = 1; j + 1 < COLS; j++) {
			double v = 0.25 * (a[(i - 1) * COLS + j] + a[(i + 1) * COLS + j] +
					   a[i * COLS + j - 1] + a[i * COLS + j + 1]);
			res += (v - a[i * COLS + j]) * (v - a[i * COLS + j]);
			b[i * COLS + j] = v;
		}
	return res;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	int rank, np, up, down;
	double t0, t1;
	unsigned seed = 12345;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	bench_parse(argc, argv, &o);
	if (!o.n)
		o.n = 6;
	up = (rank + np - 1) % np;
	down = (rank + 1) % np;
	mpi_ready_go(&o, rank);

	t0 = now_s();
	for (long step = 0; step < o.n; step++) {
		size_t mib = 8 * (size_t)(1 + step % 3);
		size_t rows = mib * MIB / (COLS * sizeof(double));
		double *a = malloc(rows * COLS * sizeof(double));
		double *b = malloc(rows * COLS * sizeof(double));
		struct particle *head = NULL;

		if (!a || !b)
			bench_fail("grid allocation failed");
		for (size_t k = 0; k < rows * COLS; k++)
			a[k] = b[k] = (double)((k * 2654435761u + (size_t)rank) % 1000) / 1000.0;
		for (int k = 0; k < NPART; k++) {
			size_t sz = 64 + (size_t)(rand_r(&seed) % 257);
			struct particle *p = malloc(sizeof(*p) + sz);

			if (!p)
				bench_fail("particle allocation failed");
			p->x = k;
			p->y = p->z = p->w = 0;
			memset(p->payload, k & 0xff, sz);
			p->next = head;
			head = p;
		}
		for (int s = 0; s < SWEEPS; s++) {
			double res, all;
			double *tmp;

			/* Halo: my first interior row up, my last interior row down. */
			MPI_Sendrecv(&a[1 * COLS], COLS, MPI_DOUBLE, up, 7,
				     &a[(rows - 1) * COLS], COLS, MPI_DOUBLE, down, 7,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Sendrecv(&a[(rows - 2) * COLS], COLS, MPI_DOUBLE, down, 8,
				     &a[0], COLS, MPI_DOUBLE, up, 8,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			res = sweep(a, b, rows);
			for (struct particle *p = head; p; p = p->next)
				p->w += p->x * 1e-9;
			MPI_Allreduce(&res, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			bench_sink += (unsigned long)all;
			tmp = a;
			a = b;
			b = tmp;
		}
		while (head) {
			struct particle *n = head->next;

			free(head);
			head = n;
		}
		free(a);
		free(b);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t1 = now_s();
	if (rank == 0) {
		printf("RESULT miniapp_s %.4f s\n", t1 - t0);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
