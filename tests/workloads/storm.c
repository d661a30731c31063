// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An event storm (issue 32, finding 8), not MPI: --mappings separate
 * mappings (one region, every other page made read-only, so that smaps is
 * long to read), then --threads threads that map, touch and unmap a small
 * region in a tight loop for --seconds: each turn is a memory request (with
 * its stack), a page fault and an unmap, faster than a tracer can read
 * them. Prints "ready" once the mappings are made, "done" at the end.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LOOP_BYTES	(64 * 1024)

static double seconds = 10;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *churn(void *arg)
{
	double end = now() + seconds;
	unsigned long turns = 0;

	(void)arg;
	while ((turns & 255) || now() < end) {
		char *p = mmap(NULL, LOOP_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			continue;
		p[0] = 1;
		munmap(p, LOOP_BYTES);
		turns++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mappings", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	long page = sysconf(_SC_PAGESIZE), mappings = 60000, nthreads = 2;
	pthread_t tid[64];
	char *region;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mappings = atol(optarg); break;
		case 't': nthreads = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		default:
			fprintf(stderr, "usage: storm [--mappings N] [--threads N] [--seconds S]\n");
			return 2;
		}
	}
	if (mappings < 1 || nthreads < 1 || nthreads > 64 || seconds <= 0) {
		fprintf(stderr, "storm: bad arguments\n");
		return 2;
	}
	region = mmap(NULL, mappings * page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("storm: mmap");
		return 1;
	}
	/* Neighbours with other rights are never merged: one mapping per page. */
	for (long i = 1; i < mappings; i += 2)
		if (mprotect(region + i * page, page, PROT_READ)) {
			perror("storm: mprotect");
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, churn, NULL)) {
			fprintf(stderr, "storm: cannot start a thread\n");
			return 1;
		}
	for (long i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	printf("done\n");
	return 0;
}
