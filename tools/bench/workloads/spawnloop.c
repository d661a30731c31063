// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One process that forks and execs /bin/true, --n times, waiting for each:
 * forkexec's shape without MPI, so that a node service sees a process of
 * no job (a process it watches at fork, exec and exit, and traces not).
 *
 *   spawnloop [--n COMMANDS] [--ready-dir D --go-file F]
 * prints: RESULT spawn_us <wall us per command> us
 *         CPU ns_per_unit <CPU time per command: the loop and its children>
 * The CPU figure counts what the kernel charged to these processes (fork,
 * exec, the programs the kernel runs at their tracepoints, exit), not the
 * time they waited: a load on the machine moves it less than the wall time.
 */
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "procbench.h"

/* User and system time of this process and of the children it has waited for. */
static double self_and_children_cpu_s(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
	       (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	double t0, t, cpu0, cpu;
	int status;
	pid_t pid;

	bench_parse(argc, argv, &o);
	if (!o.n)
		o.n = 500;
	bench_ready(&o, 0);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	cpu0 = self_and_children_cpu_s();
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
	cpu = self_and_children_cpu_s() - cpu0;
	printf("INFO units %ld\n", o.n);
	printf("RESULT spawn_us %.1f us\n", t * 1e6 / (double)o.n);
	printf("CPU ns_per_unit %.1f\n", cpu * 1e9 / (double)o.n);
	return 0;
}
