// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A read(2) of 64 bytes from /dev/zero, in a loop, for --seconds: a
 * syscall that moves data but requests no memory. Beside sysloop's
 * getppid, the other syscall-heavy shape of a process a tracer should not
 * slow down when it does not trace it.
 *
 *   readloop [--seconds S] [--ready-dir D --go-file F]
 * prints: RESULT read_ns <ns per call> ns
 */
#include <fcntl.h>
#include <unistd.h>
#include "procbench.h"

int main(int argc, char **argv)
{
	struct bench_opts o = {0};
	unsigned long calls = 0;
	char buf[64];
	double t0, t;
	int fd;

	bench_parse(argc, argv, &o);
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		bench_fail("/dev/zero: %s", strerror(errno));
	bench_ready(&o, 0);
	bench_wait_file(o.go_file, 600);
	t0 = now_s();
	do {
		for (int k = 0; k < 1000; k++)
			if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				bench_fail("read /dev/zero: %s", strerror(errno));
		calls += 1000;
		t = now_s() - t0;
	} while (t < o.seconds);
	bench_sink += (unsigned long)buf[0];
	printf("INFO units %lu\n", calls);
	printf("RESULT read_ns %.1f ns\n", t * 1e9 / (double)calls);
	return 0;
}
