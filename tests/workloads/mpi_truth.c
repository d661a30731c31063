/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_truth: memory of known owners and sizes, phase by phase, to prove
 * attribution (issue: "charge memory to the library that asked for it").
 *
 *   mpi_truth --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]
 *             [--setup-ms MS] [--go-timeout-s S]
 *
 * --go-timeout-s: how long a rank waits for the go file (60 s; a VM under
 * software emulation, tools/vmtest, needs more).
 *
 * Each rank R works in units of (R+1)*U MiB and goes through the phases in
 * the table below, each followed by a plateau: the program's own large and
 * small mallocs, calloc, realloc growth, posix_memalign, a direct mmap; a
 * shared library (libtruth.so) that mallocs, mmaps and attaches a SysV
 * segment for itself; a thread of the program that mallocs (its own malloc
 * arena); strdup (a libc routine
 * that mallocs for its caller: charged to the caller); MPI_Alloc_mem (the
 * MPI library's); then everything is freed and trimmed.
 *
 * --setup-ms: time spent before MPI_Init (reading input, as real codes do);
 * a probe on MPI_Init needs the tool to have placed it by then.
 *
 * Alongside the usual event log (DIR/truth-rank-R.csv, events <phase>_begin
 * and <phase>_done), the program writes what each plateau should show:
 * DIR/expect-rank-R.csv with plateau,first_event,last_event,component,bytes:
 * the growth of that component over the baseline plateau, by construction.
 */
#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>

#include "common.h"
#include "libtruth.h"

#define SMALL		1008	/* 1 KiB heap chunks with malloc's header */
#define NCOMP		3
#define LIB		"lib:libtruth.so"

static const char *const comp_names[NCOMP] = { "app", LIB, "mpi" };
enum { C_APP, C_LIB, C_MPI };

static size_t unit;			/* (rank + 1) * U MiB */
static int64_t held[NCOMP];		/* what each component holds over the baseline */
static FILE *expect_log;

static void *big, *cal, *grown, *aligned, *copy, *source;
static void **smalls, **thread_smalls;
static size_t nsmall, nthread_small;
static unsigned char *map;
static void *am;

/* Inlined: --heap's call site is the phase function that asked. */
static inline __attribute__((always_inline)) void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		die("mpi_truth: malloc(%zu) failed", n);
	return p;
}

/* n bytes as 1 KiB heap chunks: brk growth in the main arena. One call site for --heap. */
static __attribute__((noinline)) void **small_chunks(size_t bytes, size_t *count)
{
	size_t n = bytes / 1024;
	void **v = mmap(NULL, n * sizeof(*v), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	/* The pointer array is mmapped, touched and counted with the chunks. */
	if (v == MAP_FAILED)
		die("mpi_truth: mmap of the pointer array failed");
	for (size_t i = 0; i < n; i++) {
		v[i] = xmalloc(SMALL);
		memset(v[i], (int)i, SMALL);
	}
	*count = n;
	return v;
}

static size_t pointer_array_bytes(size_t n)
{
	return (n * sizeof(void *) + 4095) & ~(size_t)4095;
}

static void free_chunks(void **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	munmap(v, n * sizeof(*v));
}

static void phase_app_large(void)
{
	big = xmalloc(4 * unit);
	memset(big, 1, 4 * unit);
	held[C_APP] += 4 * unit;
}

static void phase_app_small(void)
{
	smalls = small_chunks(4 * unit, &nsmall);
	held[C_APP] += nsmall * 1024 + pointer_array_bytes(nsmall);
}

static void phase_app_calloc(void)
{
	cal = calloc(2 * unit / 8, 8);
	if (!cal)
		die("mpi_truth: calloc failed");
	touch_pages(cal, 2 * unit, 3);
	held[C_APP] += 2 * unit;
}

/* Grown in place or moved by mremap: the block stays the program's. */
static void phase_app_realloc(void)
{
	grown = xmalloc(unit);
	memset(grown, 2, unit);
	grown = realloc(grown, 3 * unit);
	if (!grown)
		die("mpi_truth: realloc failed");
	memset(grown, 2, 3 * unit);
	held[C_APP] += 3 * unit;
}

static void phase_app_memalign(void)
{
	if (posix_memalign(&aligned, 65536, 2 * unit))
		die("mpi_truth: posix_memalign failed");
	memset(aligned, 4, 2 * unit);
	held[C_APP] += 2 * unit;
}

static void phase_app_mmap(void)
{
	map = mmap(NULL, 2 * unit, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mpi_truth: mmap failed: %s", strerror(errno));
	touch_pages(map, 2 * unit, 5);
	held[C_APP] += 2 * unit;
}

static void phase_lib(void)
{
	if (truth_lib_alloc(3 * unit, 2 * unit, unit))
		die("mpi_truth: libtruth allocation failed");
	held[C_LIB] += (int64_t)truth_lib_bytes();
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_smalls = small_chunks(2 * unit, &nthread_small);
	return NULL;
}

/* A thread of the program mallocs in its own arena (mmap + mprotect growth). */
static void phase_thread(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL))
		die("mpi_truth: thread failed");
	held[C_APP] += nthread_small * 1024 + pointer_array_bytes(nthread_small);
}

/* strdup mallocs inside libc: the copy is charged to strdup's caller. */
static void phase_strdup(void)
{
	source = xmalloc(unit);
	memset(source, 'x', unit - 1);
	((char *)source)[unit - 1] = '\0';
	copy = strdup(source);
	if (!copy)
		die("mpi_truth: strdup failed");
	held[C_APP] += 2 * unit;
}

static void phase_alloc_mem(void)
{
	if (MPI_Alloc_mem((MPI_Aint)(2 * unit), MPI_INFO_NULL, &am) != MPI_SUCCESS)
		die("mpi_truth: MPI_Alloc_mem failed");
	touch_pages(am, 2 * unit, 9);
	held[C_MPI] += 2 * unit;
}

static void phase_free_mem(void)
{
	MPI_Free_mem(am);
	held[C_MPI] -= 2 * unit;
}

/* Everything back; malloc_trim returns the freed heap pages to the kernel. */
static void phase_free_all(void)
{
	free(big);
	free_chunks(smalls, nsmall);
	free(cal);
	free(grown);
	free(aligned);
	munmap(map, 2 * unit);
	truth_lib_free();
	free_chunks(thread_smalls, nthread_small);
	free(source);
	free(copy);
	malloc_trim(0);
	held[C_APP] = 0;
	held[C_LIB] = 0;
}

struct phase {
	const char *name;
	void (*run)(void);
};

static const struct phase phases[] = {
	{ "app_large", phase_app_large },
	{ "app_small", phase_app_small },
	{ "app_calloc", phase_app_calloc },
	{ "app_realloc", phase_app_realloc },
	{ "app_memalign", phase_app_memalign },
	{ "app_mmap", phase_app_mmap },
	{ "lib", phase_lib },
	{ "thread", phase_thread },
	{ "strdup", phase_strdup },
	{ "alloc_mem", phase_alloc_mem },
	{ "free_mem", phase_free_mem },
	{ "free_all", phase_free_all },
};
#define NPHASES	(sizeof(phases) / sizeof(phases[0]))

static void expect_open(const char *dir, int rank)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/expect-rank-%d.csv", dir, rank);
	expect_log = fopen(path, "w");
	if (!expect_log)
		die("mpi_truth: cannot write %s: %s", path, strerror(errno));
	fprintf(expect_log, "plateau,first_event,last_event,component,bytes\n");
}

static void expect_plateau(const char *name, const char *first, const char *last)
{
	for (int c = 0; c < NCOMP; c++)
		fprintf(expect_log, "%s,%s,%s,%s,%lld\n", name, first, last, comp_names[c],
			(long long)held[c]);
	fflush(expect_log);
}

/* The kernel's resident set of this process (VmRSS), bytes. */
static long long rss_now(void)
{
	long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%*s %lld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE");
	long unit_mib = 1, plateau_ms = 600, go_timeout_s = 60;
	char first[64], last[64];
	long long rss_before_init, init_growth;
	int rank;

	/* Fixed: blocks of 128 KiB and more are mmapped whatever was freed before. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--setup-ms"))
			sleep_ms(strtol(argv[i + 1], NULL, 10));
	/* What MPI_Init added to the process, as the kernel counts it: an upper
	 * bound for the growth the tool charges to MPI_Init. */
	rss_before_init = rss_now();
	MPI_Init(&argc, &argv);
	init_growth = rss_now() - rss_before_init;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			die("usage: mpi_truth --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]");
		if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--unit-mib"))
			unit_mib = parse_long("mpi_truth", a, v);
		else if (!strcmp(a, "--plateau-ms"))
			plateau_ms = parse_long("mpi_truth", a, v);
		else if (!strcmp(a, "--setup-ms"))
			parse_long("mpi_truth", a, v);	/* done before MPI_Init */
		else if (!strcmp(a, "--go-timeout-s"))
			go_timeout_s = parse_long("mpi_truth", a, v);
		else
			die("mpi_truth: unknown option %s", a);
		i++;
	}
	if (!log_dir || unit_mib < 1)
		die("usage: mpi_truth --log-dir DIR [--go-file PATH] [--unit-mib U] [--plateau-ms MS]");
	unit = (size_t)(rank + 1) * (size_t)unit_mib * MIB;

	log_open(log_dir, "truth", rank);
	expect_open(log_dir, rank);
	log_event("mpi_init_rss_growth", init_growth > 0 ? (size_t)init_growth : 0);
	log_event("ready", 0);
	wait_for_go(rank, go_file, (int)go_timeout_s);
	log_event("start", 0);
	snprintf(last, sizeof(last), "start");
	for (size_t i = 0; i < NPHASES; i++) {
		sleep_ms(plateau_ms);
		snprintf(first, sizeof(first), "%s_begin", phases[i].name);
		log_event(first, 0);
		expect_plateau(i ? phases[i - 1].name : "baseline", last, first);
		phases[i].run();
		snprintf(last, sizeof(last), "%s_done", phases[i].name);
		log_event(last, 0);
	}
	sleep_ms(plateau_ms);
	log_event("end", 0);
	expect_plateau(phases[NPHASES - 1].name, last, "end");
	fclose(expect_log);
	log_close();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
