// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One process that forks and execs /bin/true, --n times, waiting for each:
 * forkexec's shape without MPI, so that a node service sees a process of
 * no job (a process it watches at fork, exec and exit, and traces not).
 *
 *   spawnloop [--n COMMANDS] [--ready-dir D --go-file F]
 * prints: RESULT spawn_us <wall us per command> us
 */
#include <sys/wait.h>
#include <unistd.h>
#include "procbench.h"

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	double t0, t;
	int status;
	pid_t pid;

	bench_parse(argc, argv, &o);
	if (!o.n)
		o.n = 500;
	bench_ready(&o, 0);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	for (long i = 0; i < o.n; i++) {
		pid = fork();
		if (pid < 0)
			bench_fail("fork: %s", strerror(errno));
		if (!pid) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			bench_fail("/bin/true did not exit 0");
	}
	t = now_s() - t0;
	printf("INFO units %ld\n", o.n);
	printf("RESULT spawn_us %.1f us\n", t * 1e6 / (double)o.n);
	return 0;
}
