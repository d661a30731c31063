/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mpi_child: each rank forks a child process that holds memory of its own
 * for a while and exits before the job does, so a tracer must keep the
 * data of a process that is gone.
 *
 *   mpi_child --log-dir DIR [--go-file PATH] [--child-mib N] [--child-ms MS]
 *             [--plateau-ms MS] [--child-delay-ms MS] [--child-steps K] [--commands C]
 *
 * After the go (and C short commands, system("/bin/true"), logged as
 * commands_done), rank R forks; the child (no MPI calls: it only inherits the
 * rank's environment) waits --child-delay-ms (default 0), mallocs (R+1)*N MiB in one block, touches every page,
 * (with K > 1: a K-th of them at a time, over the first half of its MS ms),
 * logs child_hold, holds it for MS ms, checks it and leaves with _exit(0)
 * (non-zero when a page was corrupted). The rank waits for it, logs
 * child_exit with the child's pid, holds a plateau and ends; a child that
 * failed makes the rank exit non-zero. Events go to DIR/child-rank-R.csv
 * (the child's own line carries its pid).
 */
#include <sys/wait.h>

#include "common.h"

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = getenv("MEMATTR_GO_FILE");
	long child_mib = 8, child_ms = 1500, plateau_ms = 700, delay_ms = 0, steps = 1, commands = 0;
	int rank, status;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			die("usage: mpi_child --log-dir DIR [--go-file PATH] [--child-mib N] [--child-ms MS]"
			    " [--plateau-ms MS] [--child-delay-ms MS] [--child-steps K] [--commands C]");
		if (!strcmp(a, "--log-dir"))
			log_dir = v;
		else if (!strcmp(a, "--go-file"))
			go_file = v;
		else if (!strcmp(a, "--child-mib"))
			child_mib = parse_long("mpi_child", a, v);
		else if (!strcmp(a, "--child-ms"))
			child_ms = parse_long("mpi_child", a, v);
		else if (!strcmp(a, "--plateau-ms"))
			plateau_ms = parse_long("mpi_child", a, v);
		else if (!strcmp(a, "--child-delay-ms"))
			delay_ms = parse_long("mpi_child", a, v);
		else if (!strcmp(a, "--child-steps"))
			steps = parse_long("mpi_child", a, v);
		else if (!strcmp(a, "--commands"))
			commands = parse_long("mpi_child", a, v);
		else
			die("mpi_child: unknown option %s", a);
		i++;
	}
	if (!log_dir || child_mib < 1 || steps < 1)
		die("mpi_child: --log-dir, --child-mib >= 1 and --child-steps >= 1 are needed");
	size_t len = (size_t)(rank + 1) * (size_t)child_mib * MIB;

	log_open(log_dir, "child", rank);
	log_event("ready", 0);
	wait_for_go(rank, go_file, 60);
	log_event("start", 0);
	for (long k = 0; k < commands; k++)
		if (system("/bin/true") != 0)
			die("mpi_child: rank %d: system(\"/bin/true\") failed", rank);
	if (commands)
		log_event("commands_done", (size_t)commands);
	sleep_ms(plateau_ms);

	fflush(NULL);
	pid_t child = fork();
	if (child < 0)
		die("mpi_child: fork: %s", strerror(errno));
	if (child == 0) {
		sleep_ms(delay_ms);
		unsigned char *p = malloc(len);

		if (!p)
			_exit(4);
		for (long k = 0; k < steps; k++) {
			touch_range(p, len / (size_t)steps * (size_t)k,
				    k + 1 < steps ? len / (size_t)steps * (size_t)(k + 1) : len,
				    (unsigned)rank + 21u);
			if (steps > 1)
				sleep_ms(child_ms / 2 / steps);
		}
		log_event("child_hold", len);
		sleep_ms(steps > 1 ? child_ms / 2 : child_ms);
		int bad = check_pages(p, len, (unsigned)rank + 21u) != 0;
		log_event("child_done", len);
		fflush(NULL);
		_exit(bad ? 5 : 0);
	}
	if (waitpid(child, &status, 0) != child)
		die("mpi_child: waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("mpi_child: rank %d: child %d failed (status 0x%x)", rank, (int)child, status);
	log_event("child_exit", (size_t)child);

	sleep_ms(plateau_ms);
	log_event("end", 0);
	log_close();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
