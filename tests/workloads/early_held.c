/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * early_held: memory of known owners asked for in the first instructions
 * of main, before a node service that sees the exec could have admitted
 * the process (test_daemon_on_demand.sh: the job's first process is this
 * program itself, and the node-wide programs are attached for it only
 * then). Not MPI: run directly, its rank from SLURM_PROCID.
 *
 *   early_held --log-dir DIR --go-file PATH [--unit-mib U] [--plateau-ms MS]
 *
 * At start, in units of U MiB: the program's large malloc (4U) and direct
 * mmap (2U); libtruth.so's large malloc (3U), 1 KiB mallocs (U) and mmap
 * (U), held in its statics. Then it waits for the go file, and:
 *   "held"      everything above;
 *   "released"  once the large blocks and both mappings are given back
 *               (what was asked for before tracing, freed while traced);
 *   "grown"     once the program mallocs 3U and mmaps U more (asked for
 *               while traced).
 * DIR/early-rank-R.csv is its event log, DIR/expect-rank-R.csv each
 * plateau's ABSOLUTE truth per component (check_truth.py --absolute).
 * It calls no MPI function: common.h's die() is not used.
 */
#include <malloc.h>
#include <sys/mman.h>

#include "common.h"
#include "libtruth.h"

static void fatal(const char *what)
{
	fprintf(stderr, "early_held: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *malloc_touched(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n);

	if (!p)
		fatal("malloc");
	touch_pages(p, n, seed);
	return p;
}

static void *map_touched(size_t n, unsigned seed)
{
	unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fatal("mmap");
	touch_pages(p, n, seed);
	return p;
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = NULL, *procid = getenv("SLURM_PROCID");
	long unit_mib = 4, plateau_ms = 1500;
	void *big, *map, *more, *more_map;
	int rank = procid ? atoi(procid) : 0;
	int64_t app, lib;
	size_t unit;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--log-dir"))
			log_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--go-file"))
			go_file = argv[i + 1];
		else if (!strcmp(argv[i], "--unit-mib"))
			unit_mib = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--plateau-ms"))
			plateau_ms = atol(argv[i + 1]);
	}
	if (!log_dir || !go_file || unit_mib < 1) {
		fprintf(stderr, "usage: early_held --log-dir DIR --go-file PATH [--unit-mib U] [--plateau-ms MS]\n");
		return 2;
	}
	unit = (size_t)unit_mib * MIB;
	/* First, before anything that takes time: the race this program is for. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	big = malloc_touched(4 * unit, 1);
	map = map_touched(2 * unit, 2);
	if (truth_lib_hold(3 * unit, unit, unit))
		fatal("libtruth");
	app = (int64_t)(6 * unit);
	lib = (int64_t)truth_lib_bytes();

	log_open(log_dir, "early", rank);
	if (held_expect_open(log_dir, rank))
		fatal("expect-rank-R.csv");
	log_event("ready", 0);
	while (access(go_file, F_OK))
		sleep_ms(10);
	log_event("start", 0);
	sleep_ms(plateau_ms);
	log_event("release_begin", 0);
	held_expect("held", "start", "release_begin", app, lib);
	free(big);
	munmap(map, 2 * unit);
	truth_lib_release_blocks();
	app -= (int64_t)(6 * unit);
	lib = (int64_t)truth_lib_bytes();
	log_event("release_done", 0);
	sleep_ms(plateau_ms);
	log_event("grow_begin", 0);
	held_expect("released", "release_done", "grow_begin", app, lib);
	more = malloc_touched(3 * unit, 3);
	more_map = map_touched(unit, 4);
	app += (int64_t)(4 * unit);
	log_event("grow_done", 0);
	sleep_ms(plateau_ms);
	log_event("end", 0);
	held_expect("grown", "grow_done", "end", app, lib);
	fclose(held_expect_log);
	log_close();
	free(more);
	munmap(more_map, unit);
	return 0;
}
