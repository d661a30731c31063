// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Page-touching storm: raises the rate of RSS changes a tracer must absorb.
 * Maps --mib MiB (default 64, no transparent huge pages), touches its pages
 * one by one at --rate pages per second (0: as fast as it can) and gives
 * them back with madvise(MADV_DONTNEED) after each pass, for --seconds.
 * Every touched page is one page fault and one kmem:rss_stat change.
 * --n P runs P such processes (the first forks the others at start; each
 * writes its own ready.<i>). --threads T runs T threads in each process,
 * each on its own --mib MiB: the faults of one address space on several
 * CPUs at once, where a shared lock or cache line in the fault path shows.
 * Not an MPI program.
 *
 *   storm [--rate PAGES_PER_S] [--seconds S] [--mib M] [--n PROCS] [--threads T]
 *         [--ready-dir D --go-file F]
 * prints per process: INFO pages <n> seconds <s>; the first process, after
 * the others ended: RESULT storm_pages_per_s <its own rate> pages/s, and
 * CPU ns_per_unit <its own CPU time per page touched>
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "procbench.h"


#define CHUNK 64	/* pages between clock checks */

struct storm {
	volatile char *m;
	size_t len, npages, pg;
	long rate;		/* pages per second of this thread, 0: unpaced */
	double t0, end;		/* shared start and end of the run */
	unsigned long touched;
};

static void *storm_run(void *arg)
{
	struct storm *s = arg;
	size_t next = 0;

	for (double t = s->t0; t < s->end; t = now_s()) {
		for (int k = 0; k < CHUNK; k++) {
			s->m[next * s->pg] = 1;
			s->touched++;
			if (++next == s->npages) {
				madvise((void *)s->m, s->len, MADV_DONTNEED);
				next = 0;
			}
		}
		if (s->rate) {
			/* Ahead of schedule: sleep until the next chunk is due. */
			double due = s->t0 + (double)s->touched / (double)s->rate;

			while (now_s() < due)
				sleep_ms(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long touched = 0;
	struct storm *s;
	pthread_t *tid;
	double t0, t, cpu_t0, cpu;
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
	if (!o.threads)
		o.threads = 1;
	s = calloc((size_t)o.threads, sizeof(*s));
	tid = calloc((size_t)o.threads, sizeof(*tid));
	if (!s || !tid)
		bench_fail("out of memory");
	for (long i = 0; i < o.threads; i++) {
		s[i].len = (size_t)o.mib * MIB;
		s[i].pg = pg;
		s[i].npages = s[i].len / pg;
		s[i].rate = o.rate;
		s[i].m = mmap(NULL, s[i].len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s[i].m == MAP_FAILED)
			bench_fail("mmap: %s", strerror(errno));
		madvise((void *)s[i].m, s[i].len, MADV_NOHUGEPAGE);
	}
	bench_ready(&o, id);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	cpu_t0 = process_cpu_s();
	for (long i = 0; i < o.threads; i++) {
		s[i].t0 = t0;
		s[i].end = t0 + o.seconds;
		if (i && pthread_create(&tid[i], NULL, storm_run, &s[i]))
			bench_fail("pthread_create failed");
	}
	storm_run(&s[0]);
	for (long i = 1; i < o.threads; i++)
		pthread_join(tid[i], NULL);
	t = now_s() - t0;
	cpu = process_cpu_s() - cpu_t0;
	for (long i = 0; i < o.threads; i++) {
		touched += s[i].touched;
		munmap((void *)s[i].m, s[i].len);
	}
	printf("INFO pages %lu seconds %.3f\n", touched, t);
	if (id == 0) {
		while (wait(NULL) > 0)
			;
		printf("INFO units %lu\n", touched);
		printf("RESULT storm_pages_per_s %.0f pages/s\n", (double)touched / t);
		printf("CPU ns_per_unit %.1f\n", cpu * 1e9 / (double)touched);
	}
	return 0;
}
