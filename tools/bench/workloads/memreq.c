// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory requests in a loop: malloc(256 KiB), touch one page, free, with
 * glibc told to grow and trim its heap every time (no mmap threshold, no
 * trim threshold, no top pad). Every iteration is a brk that grows (a
 * memory request, whose stack the tracer copies), a page fault and a brk
 * that shrinks: the worst case of a code that allocates per iteration.
 *
 *   memreq [--seconds S] [--ready-dir D --go-file F]
 * prints: RESULT memreq_us <us per iteration> us
 */
#include <malloc.h>
#include "procbench.h"


int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	unsigned long iters = 0;
	double t0, t;

	bench_parse(argc, argv, &o);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 0);
	mallopt(M_TOP_PAD, 0);
	bench_ready(&o, 0);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	do {
		for (int k = 0; k < 100; k++) {
			char *volatile p = malloc(256 * KIB);

			if (!p)
				bench_fail("malloc failed");
			p[0] = 1;
			free(p);
		}
		iters += 100;
		t = now_s() - t0;
	} while (t < o.seconds);
	printf("INFO units %lu\n", iters);
	printf("RESULT memreq_us %.3f us\n", t * 1e6 / (double)iters);
	return 0;
}
