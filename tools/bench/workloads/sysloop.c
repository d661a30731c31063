// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A syscall that is not a memory request, in a loop: getppid() for
 * --seconds. What a tracer adds to every syscall of a process: with any
 * syscall tracepoint in use, every syscall takes the kernel's slow path,
 * where the tracepoints test the syscall's bit before running a program.
 *
 *   sysloop [--seconds S] [--ready-dir D --go-file F]
 * prints: RESULT syscall_ns <ns per call> ns
 */
#include <sys/syscall.h>
#include "procbench.h"


int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	unsigned long calls = 0;
	double t0, t;

	bench_parse(argc, argv, &o);
	bench_ready(&o, 0);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	do {
		for (int k = 0; k < 1000; k++)
			bench_sink += (unsigned long)syscall(SYS_getppid);
		calls += 1000;
		t = now_s() - t0;
	} while (t < o.seconds);
	printf("INFO units %lu\n", calls);
	printf("RESULT syscall_ns %.1f ns\n", t * 1e9 / (double)calls);
	return 0;
}
