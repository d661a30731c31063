/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_dlopen: a plugin library loaded with dlopen() after a tracer attached,
 * whose memory must show up as the plugin's own component.
 *
 *   mpi_dlopen --log-dir DIR [--go-file PATH] [--plugin PATH] [--malloc-mib N]
 *              [--mmap-mib M] [--plateau-ms MS] [--at-once 1] [--default-malloc 1]
 *
 * After MPI_Init each rank R logs "ready" and waits for the go file (rank 0
 * polls, then a barrier), so a test can attach before the plugin exists in
 * the process. Then, each step followed by a plateau: dlopen() the plugin
 * (default: libplugin.so next to the program; it is not linked in), call
 * into it to malloc (R+1)*N MiB (one block above the mmap threshold) and
 * mmap (R+1)*M MiB, every page touched; then check the pages, free them and
 * dlclose() the plugin. A corrupted page exits non-zero. With --at-once 1
 * the plugin allocates right after the dlopen, with no plateau (and so no
 * maps read by the tool) in between: its first request must already be
 * its own.
 *
 * Like mpi_truth it writes its event log (DIR/dlopen-rank-R.csv) and what
 * each plateau must show (DIR/expect-rank-R.csv: plateau,first_event,
 * last_event,component,bytes, growth over the baseline plateau), so
 * check_truth.py --prefix dlopen checks it.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>

#include "common.h"
#include "libplugin.h"

#define NCOMP	2
static const char *const comp_names[NCOMP] = { "app", "lib:libplugin.so" };
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
	die("usage: mpi_dlopen --log-dir DIR [--go-file PATH] [--plugin PATH] [--malloc-mib N]"
	    " [--mmap-mib M] [--plateau-ms MS] [--at-once 1] [--default-malloc 1]");
}

static void *sym(void *h, const char *name)
{
	void *f = dlsym(h, name);

	if (!f)
		die("mpi_dlopen: no %s in the plugin: %s", name, dlerror());
	return f;
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE"), *plugin = NULL;
	long malloc_mib = 8, mmap_mib = 4, plateau_ms = 700, at_once = 0;
	int default_malloc = 0;
	char path[PATH_MAX], exe[PATH_MAX], where[PATH_MAX];
	int rank;

	/*
	 * Fixed: the plugin's large block is a mapping of its own. With
	 * --default-malloc 1, glibc's dynamic threshold as a program has it.
	 */
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--default-malloc"))
			default_malloc = atoi(argv[i + 1]);
	if (!default_malloc)
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
		else if (!strcmp(a, "--plugin"))
			plugin = v;
		else if (!strcmp(a, "--malloc-mib"))
			malloc_mib = parse_long("mpi_dlopen", a, v);
		else if (!strcmp(a, "--mmap-mib"))
			mmap_mib = parse_long("mpi_dlopen", a, v);
		else if (!strcmp(a, "--plateau-ms"))
			plateau_ms = parse_long("mpi_dlopen", a, v);
		else if (!strcmp(a, "--at-once"))
			at_once = parse_long("mpi_dlopen", a, v);
		else if (!strcmp(a, "--default-malloc"))
			;	/* read above */
		else
			usage();
		i++;
	}
	if (!log_dir || malloc_mib < 1 || mmap_mib < 1)
		usage();
	if (!plugin) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n < 0)
			die("mpi_dlopen: readlink /proc/self/exe: %s", strerror(errno));
		exe[n] = '\0';
		snprintf(path, sizeof(path), "%s/libplugin.so", dirname(exe));
		plugin = path;
	}
	size_t large = (size_t)(rank + 1) * (size_t)malloc_mib * MIB;
	size_t map = (size_t)(rank + 1) * (size_t)mmap_mib * MIB;

	log_open(log_dir, "dlopen", rank);
	snprintf(where, sizeof(where), "%s/expect-rank-%d.csv", log_dir, rank);
	expect_log = fopen(where, "w");
	if (!expect_log)
		die("mpi_dlopen: cannot write %s: %s", where, strerror(errno));
	fprintf(expect_log, "plateau,first_event,last_event,component,bytes\n");
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	log_event("start", 0);

	sleep_ms(plateau_ms);
	log_event("dlopen_begin", 0);
	expect_plateau("baseline", "start", "dlopen_begin");
	void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("mpi_dlopen: dlopen %s: %s", plugin, dlerror());
	plugin_alloc_fn alloc = (plugin_alloc_fn)sym(h, "plugin_alloc");
	plugin_bytes_fn bytes = (plugin_bytes_fn)sym(h, "plugin_bytes");
	plugin_free_fn release = (plugin_free_fn)sym(h, "plugin_free");
	log_event("dlopen_done", 0);

	/* Loaded, nothing asked for yet: only the plugin's own file pages. */
	if (!at_once) {
		sleep_ms(plateau_ms);
		log_event("alloc_begin", large + map);
		expect_plateau("loaded", "dlopen_done", "alloc_begin");
	}
	if (alloc(large, map, (unsigned)rank))
		die("mpi_dlopen: rank %d: the plugin's allocation failed", rank);
	held[1] = (int64_t)bytes();
	log_event("alloc_done", (size_t)held[1]);

	sleep_ms(plateau_ms);
	log_event("free_begin", (size_t)held[1]);
	expect_plateau("allocated", "alloc_done", "free_begin");
	size_t bad = release();
	if (bad)
		die("mpi_dlopen: rank %d: %zu of the plugin's pages corrupted", rank, bad);
	if (dlclose(h))
		die("mpi_dlopen: dlclose: %s", dlerror());
	held[1] = 0;
	log_event("free_done", 0);

	sleep_ms(plateau_ms);
	log_event("end", 0);
	expect_plateau("unloaded", "free_done", "end");
	fclose(expect_log);
	log_close();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
