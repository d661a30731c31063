/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_held: memory of known owners, all of it allocated BEFORE the tool
 * attaches (issue 31): what the tool must infer from who holds it.
 *
 *   mpi_held --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]
 *
 * Each rank R works in units of (R+1)*U MiB. After MPI_Init, before it
 * logs "ready" (the test attaches after that), it allocates:
 *  - the program's: a large malloc held by a static (an mmap'd chunk);
 *    1 KiB mallocs in the brk heap, their pointers in an mmap'd array a
 *    static holds; a malloc held only by a local of main (a stack root);
 *    a struct a static points at, which points at two arrays (reached
 *    through it); a direct mmap; MPI_Alloc_mem's block (the program holds
 *    it: inferred, MPI's record of it is bookkeeping, not ownership); a
 *    thread's 1 KiB mallocs in its own malloc arena (the thread has ended);
 *  - libtruth.so's: a large malloc, 1 KiB mallocs and an mmap, held in its
 *    statics only.
 * Adjacent anonymous mmaps merge in the kernel: the blocks come out side by
 * side in fewer mappings than there are blocks.
 *
 * Plateaus: "held" (everything), then "released" once the large blocks
 * and mappings (the program's large malloc, its mmap, MPI_Alloc_mem's
 * block; the library's large malloc and mmap) are given back -- those
 * drops are traced exactly, so they show whether the inferred regions had
 * the blocks' bounds. DIR/expect-rank-R.csv holds each component's
 * ABSOLUTE truth (check_truth.py --absolute): what the program and the
 * library hold, without their few file pages.
 */
#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>

#include "common.h"
#include "libtruth.h"

#define SMALL		1008	/* 1 KiB heap chunks with malloc's header */

struct mesh {
	double *x, *y;
	size_t n;
};

static size_t unit;
static void *big, *am;
/* volatile: written once, never read back, the stores would be optimised out. */
static void **volatile smalls, **volatile thread_smalls;
static size_t nsmall, nthread_small;
static unsigned char *map;
static struct mesh *mesh;

static void **small_chunks(size_t bytes, size_t *count)
{
	size_t n = bytes / 1024;
	void **v = mmap(NULL, n * sizeof(*v), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (v == MAP_FAILED)
		die("mpi_held: mmap of the pointer array failed");
	for (size_t i = 0; i < n; i++) {
		v[i] = malloc(SMALL);
		if (!v[i])
			die("mpi_held: malloc failed");
		memset(v[i], (int)i | 1, SMALL);
	}
	*count = n;
	return v;
}

static size_t pointer_array_bytes(size_t n)
{
	return (n * sizeof(void *) + 4095) & ~(size_t)4095;
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_smalls = small_chunks(2 * unit, &nthread_small);
	return NULL;
}

static void *xmalloc_touched(size_t n, int c)
{
	void *p = malloc(n);

	if (!p)
		die("mpi_held: malloc(%zu) failed", n);
	memset(p, c, n);
	return p;
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE");
	long unit_mib = 1, plateau_ms = 1500;
	int64_t app, lib;
	/*
	 * Held by this frame only, in memory: a value kept in a register
	 * across a call is saved by the callee, in the callee's frame.
	 */
	unsigned char *volatile local_block;
	pthread_t th;
	int rank;

	/* Blocks of 128 KiB and more are mmap'd, whatever was freed before. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			die("usage: mpi_held --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]");
		if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--unit-mib"))
			unit_mib = parse_long("mpi_held", a, v);
		else if (!strcmp(a, "--plateau-ms"))
			plateau_ms = parse_long("mpi_held", a, v);
		else
			die("mpi_held: unknown option %s", a);
		i++;
	}
	if (!log_dir || unit_mib < 1)
		die("usage: mpi_held --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]");
	unit = (size_t)(rank + 1) * (size_t)unit_mib * MIB;
	log_open(log_dir, "held", rank);
	if (held_expect_open(log_dir, rank))
		die("mpi_held: cannot write %s/expect-rank-%d.csv: %s", log_dir, rank, strerror(errno));

	/* The program's. */
	big = xmalloc_touched(4 * unit, 1);
	smalls = small_chunks(4 * unit, &nsmall);
	local_block = xmalloc_touched(2 * unit, 0);
	touch_pages(local_block, 2 * unit, 2);
	mesh = xmalloc_touched(sizeof(*mesh), 0);
	mesh->n = unit / sizeof(double);
	mesh->x = xmalloc_touched(unit, 3);
	mesh->y = xmalloc_touched(unit, 4);
	map = mmap(NULL, 2 * unit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mpi_held: mmap failed: %s", strerror(errno));
	touch_pages(map, 2 * unit, 5);
	if (MPI_Alloc_mem((MPI_Aint)(2 * unit), MPI_INFO_NULL, &am) != MPI_SUCCESS)
		die("mpi_held: MPI_Alloc_mem failed");
	touch_pages(am, 2 * unit, 9);
	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL))
		die("mpi_held: thread failed");
	/* The library's. */
	if (truth_lib_hold(3 * unit, 2 * unit, unit))
		die("mpi_held: libtruth allocation failed");

	app = (int64_t)(4 * unit + nsmall * 1024 + pointer_array_bytes(nsmall) + 2 * unit +
			2 * unit + 2 * unit + 2 * unit + nthread_small * 1024 +
			pointer_array_bytes(nthread_small));
	lib = (int64_t)truth_lib_bytes();
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	log_event("start", 0);
	sleep_ms(plateau_ms);
	log_event("release_begin", 0);
	held_expect("held", "start", "release_begin", app, lib);
	free(big);
	munmap(map, 2 * unit);
	MPI_Free_mem(am);
	truth_lib_release_blocks();
	app -= 4 * unit + 2 * unit + 2 * unit;
	lib = (int64_t)truth_lib_bytes();
	log_event("release_done", 0);
	sleep_ms(plateau_ms);
	log_event("end", 0);
	held_expect("released", "release_done", "end", app, lib);
	fclose(held_expect_log);
	/* Still held here, so the program's frame kept it to the end. */
	if (check_pages(local_block, 2 * unit, 2) || mesh->x[0] == 0.0)
		fprintf(stderr, "mpi_held: memory changed\n");
	log_close();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
