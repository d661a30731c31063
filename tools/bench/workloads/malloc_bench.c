// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * malloc microbenchmark: ns per malloc/free pair, mixed sizes.
 *
 * A pool of 4096 live blocks; each step frees one block (chosen by a
 * precomputed pseudo-random sequence) and mallocs a new one in its place and
 * writes its first byte. Sizes: 7/8 of them 16-512 B, 1/8 512 B-4 KiB,
 * 1/64 4-64 KiB (all below glibc's mmap threshold, so the cost is malloc's
 * own, plus whatever a tracer adds per call). Not an MPI program.
 *
 *   malloc_bench [--seconds S] [--ready-dir D --go-file F]
 * prints: RESULT malloc_pair_ns <ns per pair> ns
 */
#include "procbench.h"


#define POOL	4096
#define SEQ	(1 << 16)

static uint32_t seq_slot[SEQ];
static uint32_t seq_size[SEQ];

static uint64_t xs = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

static uint32_t pick_size(void)
{
	uint64_t r = rnd();

	if (r % 64 == 0)
		return 4096 + (uint32_t)((r >> 8) % (60 * 1024));
	if (r % 8 == 1)
		return 512 + (uint32_t)((r >> 8) % 3584);
	return 16 + (uint32_t)((r >> 8) % 496);
}

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	static char *pool[POOL];
	unsigned long idx = 0;
	struct box b;
	double t0;

	bench_parse(argc, argv, &o);
	for (int i = 0; i < SEQ; i++) {
		seq_slot[i] = (uint32_t)(rnd() % POOL);
		seq_size[i] = pick_size();
	}
	for (int i = 0; i < POOL; i++) {
		pool[i] = malloc(pick_size());
		pool[i][0] = 1;
	}
	bench_ready(&o, 0);
	bench_wait_file(o.go_file, 600);

	box_init(&b, o.seconds);
	for (unsigned long batch = b.batch; batch; batch = box_next(&b, now_s() - t0)) {
		t0 = now_s();
		for (unsigned long k = 0; k < batch; k++, idx++) {
			uint32_t s = seq_slot[idx & (SEQ - 1)];

			free(pool[s]);
			pool[s] = malloc(seq_size[idx & (SEQ - 1)]);
			pool[s][0] = (char)k;
		}
	}
	for (int i = 0; i < POOL; i++) {
		bench_sink += (unsigned char)pool[i][0];
		free(pool[i]);
	}
	printf("RESULT malloc_pair_ns %.2f ns\n", b.spent * 1e9 / (double)b.counted);
	printf("INFO pairs %lu seconds %.3f\n", b.counted, b.spent);
	return 0;
}
