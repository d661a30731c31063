// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A peak between two samples (issue 32): after --settle-ms, the program
 * maps --mib MiB, touches every page, unmaps all but --keep-mib MiB at
 * once and exits --after-ms later. The top lasts microseconds, so a
 * 100 ms sample almost never sees it: only the events do. Not MPI. Its
 * own code asks for the block, so the block is `app`'s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	long mib = 64, keep = 4, settle = 400, after = 50;
	size_t len, page = (size_t)sysconf(_SC_PAGESIZE);
	char *p;

	for (int i = 1; i + 1 < argc; i += 2) {
		long v = atol(argv[i + 1]);

		if (!strcmp(argv[i], "--mib"))
			mib = v;
		else if (!strcmp(argv[i], "--keep-mib"))
			keep = v;
		else if (!strcmp(argv[i], "--settle-ms"))
			settle = v;
		else if (!strcmp(argv[i], "--after-ms"))
			after = v;
		else
			return fprintf(stderr, "peak_burst: unknown option %s\n", argv[i]), 2;
	}
	if (keep > mib)
		return fprintf(stderr, "peak_burst: --keep-mib above --mib\n"), 2;
	sleep_ms(settle);
	len = (size_t)mib << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return perror("peak_burst: mmap"), 1;
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
	if (munmap(p + ((size_t)keep << 20), len - ((size_t)keep << 20)))
		return perror("peak_burst: munmap"), 1;
	sleep_ms(after);
	return p[0] == 1 ? 0 : 1;
}
