/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_hold: allocate, touch and hold a known amount of memory for a while,
 * exercising MPI all along, for attach / --duration / signal tests.
 *
 *   mpi_hold [--log-dir DIR] [--go-file PATH] [--hold-mib N] [--hold-s S]
 *            [--tick-ms MS] [--per-rank] [--stop-file PATH]
 *
 * Each rank mmaps N MiB ((R+1)*N with --per-rank), touches every page, then
 * for S seconds does an MPI_Allreduce of a checksum every tick, so MPI keeps
 * running while a tracer attaches and detaches; it stops early once the stop
 * file exists (so a test need not guess how long to hold). At the end every page is
 * checked; corruption or a diverging checksum exits non-zero (via
 * MPI_Abort), so "the job ran unharmed" is observable as mpirun's exit code.
 */
#include <sys/mman.h>

#include "common.h"

static void usage(void)
{
	fprintf(stderr, "usage: mpi_hold [--log-dir DIR] [--go-file PATH] [--hold-mib N]"
		" [--hold-s S] [--tick-ms MS] [--per-rank] [--stop-file PATH]\n");
	exit(2);
}

static unsigned long checksum(const volatile unsigned char *p, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned long sum = 0;

	for (size_t off = 0; off < len; off += (size_t)pg)
		sum += p[off];
	return sum;
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE"), *stop_file = NULL;
	long hold_mib = 16, hold_s = 10, tick_ms = 100;
	int rank, size, per_rank = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--per-rank")) {
			per_rank = 1;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--hold-mib"))
			hold_mib = parse_long("mpi_hold", a, v);
		else if (!strcmp(a, "--hold-s"))
			hold_s = parse_long("mpi_hold", a, v);
		else if (!strcmp(a, "--stop-file"))
			stop_file = v;
		else if (!strcmp(a, "--tick-ms"))
			tick_ms = parse_long("mpi_hold", a, v);
		else
			usage();
		i++;
	}
	if (tick_ms < 1)
		tick_ms = 1;

	size_t len = (size_t)(per_rank ? rank + 1 : 1) * (size_t)hold_mib * MIB;

	log_open(log_dir, "hold", rank);
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	log_event("start", 0);

	unsigned char *p = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
	if (p == MAP_FAILED)
		die("mpi_hold: mmap(%zu) failed: %s", len, strerror(errno));
	if (p)
		touch_pages(p, len, (unsigned)rank);
	log_event("hold_begin", len);

	/* Everyone agrees on the sum of all ranks' checksums at every tick. */
	unsigned long mine = p ? checksum(p, len) : 0, expect, got;
	MPI_Allreduce(&mine, &expect, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
	double until = mono_now() + (double)hold_s;
	long ticks = 0;
	int more = 1;

	while (more) {
		sleep_ms(tick_ms);
		mine = p ? checksum(p, len) : 0;
		MPI_Allreduce(&mine, &got, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
		if (got != expect)
			die("mpi_hold: rank %d: checksum %lu != %lu at tick %ld", rank, got,
			    expect, ticks);
		ticks++;
		/* Rank 0's clock decides, so all ranks leave the loop together. */
		more = mono_now() < until && !(stop_file && access(stop_file, F_OK) == 0);
		MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}

	if (p && check_pages(p, len, (unsigned)rank))
		die("mpi_hold: rank %d: held memory corrupted", rank);
	log_event("hold_end", len);
	if (p)
		munmap(p, len);
	MPI_Barrier(MPI_COMM_WORLD);
	log_event("end", 0);
	log_close();
	MPI_Finalize();
	return 0;
}
