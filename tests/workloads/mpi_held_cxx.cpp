// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_held_cxx: mpi_held in C++ -- memory of known owners allocated with
 * new and std::vector BEFORE the tool attaches (issue 31).
 *
 *   mpi_held_cxx --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]
 *
 * Rank R, U = (R+1)*N MiB, all allocated after MPI_Init and before "ready":
 *  - the program's: a global std::vector<double> of 4U; a global
 *    std::vector<std::vector<double>> of 2U in rows of 1008 bytes (1 KiB
 *    heap chunks, reached through the outer vector's array); new double[]
 *    of 2U held by a global pointer; a std::vector<double> of 2U that is a
 *    local of main (its three pointers in main's frame);
 *  - libcxxtruth.so's: new char[] and a std::vector<int> of U each, held
 *    in its statics.
 * Plateaus "held" and "released" (the global vector, the new[] block and
 * the library's memory given back), absolute truths in
 * DIR/expect-rank-R.csv for check_truth.py --absolute --prefix heldcxx.
 */
#include <malloc.h>

#include <vector>

#include "common.h"
#include "libcxxtruth.h"

static std::vector<double> field;
static std::vector<std::vector<double>> rows;
static double *volatile block;
static FILE *expect_log;

static void expect(const char *plateau, const char *first, const char *last, int64_t app,
		   int64_t lib)
{
	fprintf(expect_log, "%s,%s,%s,app,%lld\n", plateau, first, last, (long long)app);
	fprintf(expect_log, "%s,%s,%s,lib:libcxxtruth.so,%lld\n", plateau, first, last,
		(long long)lib);
	fflush(expect_log);
}

/* The object escapes: it lives in main's frame, not in registers a callee saves. */
static void __attribute__((noinline)) keep(void *p)
{
	asm volatile("" : : "r"(p) : "memory");
}

static void usage(void)
{
	die("usage: mpi_held_cxx --log-dir DIR [--go-file PATH] [--unit-mib N] [--plateau-ms MS]");
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE");
	long unit_mib = 1, plateau_ms = 1500;
	size_t unit, nrows;
	int64_t app, lib;
	char path[4096];
	int rank;

	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--log-dir"))
			log_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--go-file"))
			go_file = argv[i + 1];
		else if (!strcmp(argv[i], "--unit-mib"))
			unit_mib = parse_long("mpi_held_cxx", argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--plateau-ms"))
			plateau_ms = parse_long("mpi_held_cxx", argv[i], argv[i + 1]);
		else
			usage();
	}
	if (!log_dir || unit_mib < 1)
		usage();
	unit = (size_t)(rank + 1) * (size_t)unit_mib * MIB;
	log_open(log_dir, "heldcxx", rank);
	snprintf(path, sizeof(path), "%s/expect-rank-%d.csv", log_dir, rank);
	expect_log = fopen(path, "w");
	if (!expect_log)
		die("mpi_held_cxx: cannot write %s", path);
	fprintf(expect_log, "plateau,first_event,last_event,component,bytes\n");

	field.assign(4 * unit / sizeof(double), 1.5);
	nrows = 2 * unit / 1024;
	rows.reserve(nrows);
	for (size_t i = 0; i < nrows; i++)
		rows.emplace_back(1008 / sizeof(double), (double)i);
	block = new double[2 * unit / sizeof(double)];
	for (size_t i = 0; i < 2 * unit / sizeof(double); i++)
		block[i] = (double)i;
	std::vector<double> local(2 * unit / sizeof(double), 2.5);
	keep(&local);
	cxxlib_alloc(unit, 7);

	app = (int64_t)(4 * unit + nrows * 1024 + nrows * sizeof(rows[0]) + 2 * unit + 2 * unit);
	lib = (int64_t)cxxlib_bytes();
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	log_event("start", 0);
	sleep_ms(plateau_ms);
	log_event("release_begin", 0);
	expect("held", "start", "release_begin", app, lib);
	std::vector<double>().swap(field);
	delete[] block;
	block = nullptr;
	if (cxxlib_free())
		fprintf(stderr, "mpi_held_cxx: the library's memory changed\n");
	app -= (int64_t)(4 * unit + 2 * unit);
	log_event("release_done", 0);
	sleep_ms(plateau_ms);
	log_event("end", 0);
	expect("released", "release_done", "end", app, 0);
	fclose(expect_log);
	if (local[local.size() - 1] != 2.5 || rows[nrows - 1][0] != (double)(nrows - 1))
		fprintf(stderr, "mpi_held_cxx: memory changed\n");
	log_close();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
