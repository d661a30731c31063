// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A rank that holds memory and works in short fixed chunks, printing for
 * every 100 ms window "time_s longest_chunk_ms mean_chunk_ms": what a tool
 * attaching to it (and reading its memory) costs it, as the longest chunk
 * around the attach against the windows before (attach_stall.sh).
 *   attach_stall MIB SECONDS
 * The memory is a linked list of malloc'd blocks (two of 64 KiB for one of
 * 1 KiB): pointers the inference must follow, in the brk heap.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct blk {
	struct blk *next;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct blk *head = NULL;
	volatile double x = 0;
	double t0, w0, worst = 0, sum = 0, secs;
	long mib, n = 0;

	MPI_Init(&argc, &argv);
	mib = argc > 1 ? atol(argv[1]) : 1024;
	secs = argc > 2 ? atof(argv[2]) : 8;
	for (long i = 0; i < mib * 16; i++) {
		size_t sz = i % 3 ? 65536 : 1024;
		struct blk *b = malloc(sz);

		if (!b)
			return 1;
		memset(b, 1, sz);
		b->next = head;
		head = b;
	}
	fprintf(stderr, "ready\n");
	t0 = w0 = now();
	while (now() - t0 < secs) {
		double a = now(), d;

		for (int k = 0; k < 20000; k++)
			x += k * 0.5;
		d = now() - a;
		worst = d > worst ? d : worst;
		sum += d;
		n++;
		if (a - w0 >= 0.1) {
			printf("%.3f %.3f %.3f\n", a - t0, worst * 1e3, sum / (double)n * 1e3);
			fflush(stdout);
			worst = sum = 0;
			n = 0;
			w0 = a;
		}
	}
	MPI_Finalize();
	return x < 0;
}
