// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Page-touching storm: raises the rate of RSS changes a tracer must absorb.
 * Maps --mib MiB (default 64, no transparent huge pages), touches its pages
 * one by one at --rate pages per second (0: as fast as it can) and gives
 * them back with madvise(MADV_DONTNEED) after each pass, for --seconds.
 * Every touched page is one page fault and one kmem:rss_stat change.
 * --n P runs P such processes (the first forks the others at start; each
 * writes its own ready.<i>). Not an MPI program.
 *
 *   storm [--rate PAGES_PER_S] [--seconds S] [--mib M] [--n PROCS] [--ready-dir D --go-file F]
 * prints per process: INFO pages <n> seconds <s>; the first process, after
 * the others ended: RESULT storm_pages_per_s <its own rate> pages/s
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include "bench.h"

static void bench_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "storm: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(3);
}

#define CHUNK 64	/* pages between clock checks */

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	size_t len, npages, pg = (size_t)sysconf(_SC_PAGESIZE), next = 0;
	unsigned long touched = 0;
	volatile char *m;
	double t0, t, end;
	int id = 0;

	bench_parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 1; i < o.n; i++) {
		pid_t c = fork();

		if (c < 0)
			bench_fail("fork: %s", strerror(errno));
		if (c == 0) {
			id = (int)i;
			break;
		}
	}
	if (!o.mib)
		o.mib = 64;
	len = (size_t)o.mib * MIB;
	npages = len / pg;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		bench_fail("mmap: %s", strerror(errno));
	madvise((void *)m, len, MADV_NOHUGEPAGE);
	bench_ready(&o, id);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	end = t0 + o.seconds;
	for (t = t0; t < end; t = now_s()) {
		for (int k = 0; k < CHUNK; k++) {
			m[next * pg] = 1;
			touched++;
			if (++next == npages) {
				madvise((void *)m, len, MADV_DONTNEED);
				next = 0;
			}
		}
		if (o.rate) {
			/* Ahead of schedule: sleep until the next chunk is due. */
			double due = t0 + (double)touched / (double)o.rate;

			while (now_s() < due)
				sleep_ms(1);
		}
	}
	t = now_s() - t0;
	munmap((void *)m, len);
	printf("INFO pages %lu seconds %.3f\n", touched, t);
	if (id == 0) {
		while (wait(NULL) > 0)
			;
		printf("RESULT storm_pages_per_s %.0f pages/s\n", (double)touched / t);
	}
	return 0;
}
