// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Grows until the OOM killer ends it (test_oom_postmortem): each step maps
 * and touches --app-mib MiB from the program and --lib-mib MiB from
 * liboomgrow.so, so the split between app and lib:liboomgrow.so at any
 * moment, and its growth, are known by construction. Not an MPI program:
 * the test gives it a rank through the environment, as a launcher would.
 * It waits --start-ms first, so that the tool has read it before it grows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "liboomgrow.h"

#define MIB	(1024UL * 1024UL)

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static long arg(int argc, char **argv, const char *name, long def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtol(argv[i + 1], NULL, 10);
	return def;
}

int main(int argc, char **argv)
{
	long app = arg(argc, argv, "--app-mib", 2), lib = arg(argc, argv, "--lib-mib", 1);
	long step = arg(argc, argv, "--step-ms", 150), start = arg(argc, argv, "--start-ms", 800);
	long max_steps = arg(argc, argv, "--max-steps", 1000);

	if (app < 0 || lib < 0 || step < 0 || start < 0) {
		fprintf(stderr, "oom_grow: bad arguments\n");
		return 2;
	}
	sleep_ms(start);
	for (long i = 1; i <= max_steps; i++) {
		void *p = mmap(NULL, (size_t)app * MIB, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (app && p == MAP_FAILED)
			return 3;
		if (app)
			memset(p, 0xa5, (size_t)app * MIB);
		if (lib && oomgrow_lib_take((size_t)lib * MIB))
			return 3;
		printf("step %ld app_mib %ld lib_mib %ld\n", i, i * app, i * lib);
		fflush(stdout);
		sleep_ms(step);
	}
	/* Never killed: the limit was not where the test thought. */
	return 4;
}
