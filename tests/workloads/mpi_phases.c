/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_phases: memory phases of known size, separated by plateaus.
 *
 *   mpi_phases --log-dir DIR [--go-file PATH] [--malloc-mib M] [--mmap-mib M]
 *              [--plateau-ms MS] [--go-timeout-s S] [--alloc-mem-mib A]
 *
 * After MPI_Init, rank 0 waits for the go file (default: $MEMATTR_GO_FILE,
 * none: no wait), then all ranks meet at a barrier. Each rank R then runs:
 *   plateau, (1) malloc (R+1)*M MiB and touch every page, plateau,
 *   (2) anonymous mmap (R+1)*M' MiB and touch every page, plateau,
 *   (3) free the malloc block, plateau, (4) munmap the mmap block, plateau,
 * and with --alloc-mem-mib A > 0: (5) MPI_Alloc_mem (R+1)*A MiB, touched,
 * plateau, (6) MPI_Free_mem, plateau (memory the MPI library allocates:
 * "mpi", not "app", although the application touches it);
 * then MPI_Finalize. Every phase logs <event>_begin / <event>_done with a
 * CLOCK_MONOTONIC timestamp to DIR/phases-rank-R.csv, so a test can relate
 * the tool's samples to what the rank held at that moment. The malloc'ed
 * block is far above glibc's mmap threshold, so both blocks are private
 * anonymous mappings the application asked for: attributable to "app".
 */
#include <malloc.h>
#include <sys/mman.h>

#include "common.h"

static void usage(void)
{
	fprintf(stderr, "usage: mpi_phases --log-dir DIR [--go-file PATH] [--malloc-mib M]"
		" [--mmap-mib M] [--plateau-ms MS] [--go-timeout-s S] [--alloc-mem-mib A]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE");
	long malloc_mib = 16, mmap_mib = 8, plateau_ms = 600, go_timeout_s = 60;
	long alloc_mem_mib = 0;
	int rank, size;

	/*
	 * A fixed mmap threshold turns off glibc's dynamic one: otherwise the
	 * free of the big malloc block raises the threshold, a later
	 * MPI_Alloc_mem block comes from the heap, and its free stays resident
	 * (not trimmed), so what a rank holds would depend on malloc history.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--malloc-mib"))
			malloc_mib = parse_long("mpi_phases", a, v);
		else if (!strcmp(a, "--mmap-mib"))
			mmap_mib = parse_long("mpi_phases", a, v);
		else if (!strcmp(a, "--plateau-ms"))
			plateau_ms = parse_long("mpi_phases", a, v);
		else if (!strcmp(a, "--alloc-mem-mib"))
			alloc_mem_mib = parse_long("mpi_phases", a, v);
		else if (!strcmp(a, "--go-timeout-s"))
			go_timeout_s = parse_long("mpi_phases", a, v);
		else
			usage();
		i++;
	}
	if (!log_dir)
		usage();

	size_t malloc_len = (size_t)(rank + 1) * (size_t)malloc_mib * MIB;
	size_t mmap_len = (size_t)(rank + 1) * (size_t)mmap_mib * MIB;

	log_open(log_dir, "phases", rank);
	log_event("ready", 0);
	wait_for_go(rank, go_file, (int)go_timeout_s);
	log_event("start", 0);
	sleep_ms(plateau_ms);

	log_event("malloc_begin", malloc_len);
	/* volatile: the compiler must not elide an unused malloc/free pair. */
	unsigned char *volatile heap = malloc(malloc_len);
	if (!heap)
		die("mpi_phases: malloc(%zu) failed", malloc_len);
	touch_pages(heap, malloc_len, (unsigned)rank);
	log_event("malloc_done", malloc_len);
	sleep_ms(plateau_ms);

	log_event("mmap_begin", mmap_len);
	unsigned char *map = mmap(NULL, mmap_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mpi_phases: mmap(%zu) failed: %s", mmap_len, strerror(errno));
	touch_pages(map, mmap_len, (unsigned)rank + 7u);
	log_event("mmap_done", mmap_len);
	sleep_ms(plateau_ms);

	log_event("free_begin", malloc_len);
	if (check_pages(heap, malloc_len, (unsigned)rank))
		die("mpi_phases: malloc block corrupted");
	free(heap);
	log_event("free_done", malloc_len);
	sleep_ms(plateau_ms);

	log_event("munmap_begin", mmap_len);
	if (check_pages(map, mmap_len, (unsigned)rank + 7u))
		die("mpi_phases: mmap block corrupted");
	if (munmap(map, mmap_len))
		die("mpi_phases: munmap failed: %s", strerror(errno));
	log_event("munmap_done", mmap_len);
	sleep_ms(plateau_ms);

	if (alloc_mem_mib > 0) {
		size_t am_len = (size_t)(rank + 1) * (size_t)alloc_mem_mib * MIB;
		unsigned char *am = NULL;

		log_event("alloc_mem_begin", am_len);
		if (MPI_Alloc_mem((MPI_Aint)am_len, MPI_INFO_NULL, &am) != MPI_SUCCESS)
			die("mpi_phases: MPI_Alloc_mem(%zu) failed", am_len);
		touch_pages(am, am_len, (unsigned)rank + 13u);
		log_event("alloc_mem_done", am_len);
		sleep_ms(plateau_ms);

		log_event("free_mem_begin", am_len);
		if (check_pages(am, am_len, (unsigned)rank + 13u))
			die("mpi_phases: MPI_Alloc_mem block corrupted");
		MPI_Free_mem(am);
		log_event("free_mem_done", am_len);
		sleep_ms(plateau_ms);
	}

	MPI_Barrier(MPI_COMM_WORLD);
	log_event("end", 0);
	log_close();
	MPI_Finalize();
	return 0;
}
