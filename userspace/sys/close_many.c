// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "close_many.h"

#define PARALLEL_THREADS	16

struct slice {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t from, n;
};

static void *run_slice(void *arg)
{
	const struct slice *s = arg;

	for (size_t i = s->from; i < s->from + s->n; i++)
		s->fn(s->ctx, i);
	return NULL;
}

void parallel_for(size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct slice slice[PARALLEL_THREADS];
	pthread_t tid[PARALLEL_THREADS];
	bool started[PARALLEL_THREADS] = { 0 };
	size_t nthreads = n < PARALLEL_THREADS ? n : PARALLEL_THREADS, done = 0;

	for (size_t i = 0; i < nthreads; i++) {
		size_t take = (n - done) / (nthreads - i);

		slice[i] = (struct slice){ fn, ctx, done, take };
		done += take;
		/* A thread that cannot start: its slice runs here, in turn. */
		started[i] = !pthread_create(&tid[i], NULL, run_slice, &slice[i]);
		if (!started[i])
			run_slice(&slice[i]);
	}
	for (size_t i = 0; i < nthreads; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}

static void close_one(void *ctx, size_t i)
{
	close(((const int *)ctx)[i]);
}

void close_many(const int *fds, size_t n)
{
	parallel_for(n, close_one, (void *)fds);
}

