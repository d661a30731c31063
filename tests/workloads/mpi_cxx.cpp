// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_cxx: ground truth in C++. Memory that reaches malloc through
 * libstdc++'s operator new must belong to the code that said `new` (or
 * made the std::vector), never to libstdc++ or MPI.
 *
 *   mpi_cxx --log-dir DIR [--go-file PATH] [--unit-mib N] [--plateau-ms MS]
 *           [--peak-ms MS]
 *
 * Rank R, U = (R+1)*N MiB. After MPI_Init and 100 MPI_Allreduce each rank
 * logs "ready" and waits for the go file. Then, each step followed by a
 * plateau: in a function of the program, four std::vector<double> of U each,
 * one between each pair of MPI_Barrier with MPI_Allreduce calls in between
 * (they leave deeper frames of other libraries on the stack: the old word
 * scan mistook those for the caller); new double[] of U and an aligned
 * operator new of U; the program's own C++ library (libcxxtruth.so)
 * allocating 2U with new and a std::vector (that plateau, where everything
 * is held, lasts --peak-ms: default the same); then everything freed.
 *
 * Like mpi_truth it writes its event log (DIR/cxx-rank-R.csv) and what each
 * plateau must show (DIR/expect-rank-R.csv), for check_truth.py --prefix cxx.
 */
#include <malloc.h>

#include <new>
#include <vector>

#include "common.h"
#include "libcxxtruth.h"

#define NCOMP	4
static const char *const comp_names[NCOMP] = { "app", "lib:libcxxtruth.so", "mpi",
					       "lib:libstdc++.so" };
static int64_t held[NCOMP];
static FILE *expect_log;

static void expect_plateau(const char *name, const char *first, const char *last)
{
	for (int c = 0; c < NCOMP; c++)
		fprintf(expect_log, "%s,%s,%s,%s,%lld\n", name, first, last, comp_names[c],
			(long long)held[c]);
	fflush(expect_log);
}

static void usage(void)
{
	die("usage: mpi_cxx --log-dir DIR [--go-file PATH] [--unit-mib N] [--plateau-ms MS]"
	    " [--peak-ms MS]");
}

static size_t page_up(size_t v)
{
	return (v + 4095) & ~(size_t)4095;
}

static void chatter(int n)
{
	double in = 1, out;

	for (int i = 0; i < n; i++)
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static std::vector<std::vector<double> > vectors;

/* The application's own containers, made in a function of its own. */
static void __attribute__((noinline)) make_vectors(size_t bytes, int count)
{
	for (int i = 0; i < count; i++) {
		MPI_Barrier(MPI_COMM_WORLD);
		chatter(20);
		vectors.push_back(std::vector<double>(bytes / sizeof(double), 1.0));
		held[0] += (int64_t)page_up(bytes);
		MPI_Barrier(MPI_COMM_WORLD);
	}
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE");
	long unit_mib = 8, plateau_ms = 700, peak_ms = -1;
	char where[4096];
	int rank;

	/* Fixed: every block here is a mapping of its own, and freeing gives it back. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--unit-mib"))
			unit_mib = parse_long("mpi_cxx", a, v);
		else if (!strcmp(a, "--plateau-ms"))
			plateau_ms = parse_long("mpi_cxx", a, v);
		else if (!strcmp(a, "--peak-ms"))
			peak_ms = parse_long("mpi_cxx", a, v);
		else
			usage();
		i++;
	}
	if (!log_dir || unit_mib < 1)
		usage();
	size_t unit = (size_t)(rank + 1) * (size_t)unit_mib * MIB;

	chatter(100);
	vectors.reserve(8);
	log_open(log_dir, "cxx", rank);
	snprintf(where, sizeof(where), "%s/expect-rank-%d.csv", log_dir, rank);
	expect_log = fopen(where, "w");
	if (!expect_log)
		die("mpi_cxx: cannot write %s: %s", where, strerror(errno));
	fprintf(expect_log, "plateau,first_event,last_event,component,bytes\n");
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	log_event("start", 0);

	sleep_ms(plateau_ms);
	log_event("vectors_begin", 0);
	expect_plateau("baseline", "start", "vectors_begin");
	make_vectors(unit, 4);
	log_event("vectors_done", (size_t)held[0]);

	sleep_ms(plateau_ms);
	log_event("new_begin", 0);
	expect_plateau("vectors", "vectors_done", "new_begin");
	chatter(20);
	double *arr = new double[unit / sizeof(double)];
	memset(arr, 1, unit);
	chatter(20);
	void *aligned = ::operator new(unit, std::align_val_t(4096));
	memset(aligned, 2, unit);
	held[0] += 2 * (int64_t)page_up(unit);
	log_event("new_done", (size_t)held[0]);

	sleep_ms(plateau_ms);
	log_event("lib_begin", 0);
	expect_plateau("new", "new_done", "lib_begin");
	chatter(20);
	cxxlib_alloc(unit, (unsigned)rank);
	held[1] = (int64_t)cxxlib_bytes();
	log_event("lib_done", (size_t)held[1]);

	sleep_ms(peak_ms >= 0 ? peak_ms : plateau_ms);
	log_event("free_begin", 0);
	expect_plateau("lib", "lib_done", "free_begin");
	if (cxxlib_free())
		die("mpi_cxx: rank %d: the library's pages were corrupted", rank);
	delete[] arr;
	::operator delete(aligned, std::align_val_t(4096));
	vectors.clear();
	vectors.shrink_to_fit();
	malloc_trim(0);
	held[0] = held[1] = 0;
	log_event("free_done", 0);

	sleep_ms(plateau_ms);
	log_event("end", 0);
	expect_plateau("freed", "free_done", "end");
	fclose(expect_log);
	log_close();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
