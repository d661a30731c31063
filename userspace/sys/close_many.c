// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "close_many.h"

#define CLOSE_THREADS	16

struct close_slice {
	const int *fds;
	size_t n;
};

static void *close_slice(void *arg)
{
	const struct close_slice *s = arg;

	for (size_t i = 0; i < s->n; i++)
		close(s->fds[i]);
	return NULL;
}

void close_many(const int *fds, size_t n)
{
	struct close_slice slice[CLOSE_THREADS];
	pthread_t tid[CLOSE_THREADS];
	bool started[CLOSE_THREADS] = { 0 };
	size_t nthreads = n < CLOSE_THREADS ? n : CLOSE_THREADS, done = 0;

	for (size_t i = 0; i < nthreads; i++) {
		size_t take = (n - done) / (nthreads - i);

		slice[i] = (struct close_slice){ fds + done, take };
		done += take;
		/* A thread that cannot start: its slice is closed here, in turn. */
		started[i] = !pthread_create(&tid[i], NULL, close_slice, &slice[i]);
		if (!started[i])
			close_slice(&slice[i]);
	}
	for (size_t i = 0; i < nthreads; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}
