/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_threads: the faults of one address space on every CPU at once. Each
 * rank starts --threads threads; after the go they each map their own
 * --mib MiB and touch their pages together, then --rounds times give the
 * first half back (MADV_DONTNEED) and touch it again, so the kernel's RSS
 * counter moves on several CPUs at once, up and down, folding per-CPU
 * slots into its shared count many times. Then the rank holds all of it
 * (threads * mib MiB, known by construction, owned by the program) until
 * --stop-file exists.
 *
 * --handoff: the threads only touch their blocks and wait; the main thread
 * then unmaps the upper half of each block before they end, so one thread
 * gives back what others have just touched. The rank then holds half.
 *
 *   mpi_threads [--log-dir DIR] [--go-file PATH] [--threads T] [--mib M]
 *               [--rounds K] [--handoff] [--stop-file PATH]
 * logs "ready", then "plateau" (bytes: what the rank's blocks hold) when done.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "common.h"

struct toucher {
	unsigned char *p;
	size_t len;
	long rounds;
	pthread_barrier_t *start;
	pthread_barrier_t *touched;	/* --handoff: the blocks are touched ... */
	pthread_barrier_t *handed;	/* ... and the main thread has unmapped their upper halves */
};

static void *touch_run(void *arg)
{
	struct toucher *t = arg;

	pthread_barrier_wait(t->start);
	/* Mapped after the go, by the program's own code: the tracer sees the request. */
	t->p = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->p == MAP_FAILED)
		die("mpi_threads: mmap: %s", strerror(errno));
	/* Page by page: a huge page would make one fault of 512 changes. */
	madvise(t->p, t->len, MADV_NOHUGEPAGE);
	touch_pages(t->p, t->len, 1);
	for (long r = 0; r < t->rounds; r++) {
		if (madvise(t->p, t->len / 2, MADV_DONTNEED))
			die("mpi_threads: madvise: %s", strerror(errno));
		touch_pages(t->p, t->len / 2, 1);
	}
	/* Waiting here is no memory syscall: the last pages touched are still this thread's run. */
	if (t->touched) {
		pthread_barrier_wait(t->touched);
		pthread_barrier_wait(t->handed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = NULL, *stop_file = NULL;
	long nthreads = 8, mib = 8, rounds = 4;
	pthread_barrier_t start, touched, handed;
	bool handoff = false;
	size_t held;
	struct toucher *t;
	pthread_t *tid;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(a, "--handoff")) {
			handoff = true;
			i--;
		} else if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--stop-file"))
			stop_file = v;
		else if (!strcmp(a, "--threads"))
			nthreads = parse_long("mpi_threads", a, v);
		else if (!strcmp(a, "--mib"))
			mib = parse_long("mpi_threads", a, v);
		else if (!strcmp(a, "--rounds"))
			rounds = parse_long("mpi_threads", a, v);
		else
			die("mpi_threads: unknown option %s", a);
	}
	if (nthreads < 1)
		nthreads = 1;
	t = calloc((size_t)nthreads, sizeof(*t));
	tid = calloc((size_t)nthreads, sizeof(*tid));
	if (!t || !tid)
		die("mpi_threads: out of memory");
	/*
	 * Threads and their stacks exist before the go; each maps its memory
	 * after it: what the program holds grows by what the threads touch.
	 */
	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&touched, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&handed, NULL, (unsigned)nthreads + 1);
	for (long i = 0; i < nthreads; i++) {
		t[i].len = (size_t)mib * MIB;
		t[i].rounds = handoff ? 0 : rounds;
		t[i].start = &start;
		t[i].touched = handoff ? &touched : NULL;
		t[i].handed = handoff ? &handed : NULL;
		if (pthread_create(&tid[i], NULL, touch_run, &t[i]))
			die("mpi_threads: pthread_create failed");
	}
	log_open(log_dir, "threads", rank);
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	pthread_barrier_wait(&start);
	if (handoff) {
		pthread_barrier_wait(&touched);
		for (long i = 0; i < nthreads; i++) {
			t[i].len /= 2;
			if (munmap(t[i].p + t[i].len, t[i].len))
				die("mpi_threads: munmap: %s", strerror(errno));
		}
		pthread_barrier_wait(&handed);
	}
	for (long i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	held = (size_t)nthreads * (size_t)mib * MIB / (handoff ? 2 : 1);
	log_event("plateau", held);
	while (stop_file && access(stop_file, F_OK) != 0)
		sleep_ms(20);
	for (long i = 0; i < nthreads; i++)
		if (check_pages(t[i].p, t[i].len, 1))
			die("mpi_threads: thread %ld's pages were corrupted", i);
	log_event("end", 0);
	log_close();
	MPI_Finalize();
	return 0;
}
