/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fork_pace: a launcher that keeps starting children at a steady pace, so
 * that a tracer attaching to it by PID meets forks while it attaches
 * (issue 31: the children forked between the tracer's scan of /proc and
 * the moment its fork tracing covers the launcher were never traced).
 *
 *   fork_pace --log FILE --stop-file PATH --exit-file PATH
 *             [--every-ms MS] [--child-mib N] [--max K]
 *
 * Every MS ms (default 20) it forks child k (k = 0, 1, ...), until
 * --stop-file exists or K children (default 400) were started. Child k
 * mallocs (N + k % 4) MiB (N default 2) in one block, touches every page,
 * appends "k,pid,bytes" to --log (one write, O_APPEND: lines never mix),
 * then holds the block until --exit-file exists, checks it and leaves with
 * _exit(0), or 1 when a page was corrupted. No MPI and no exec: the child
 * is the launcher's copy, so nothing but the fork can make it known. The
 * launcher waits for every child and exits non-zero if one failed.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

static void die(const char *msg)
{
	fprintf(stderr, "fork_pace: %s\n", msg);
	exit(2);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int child(long k, long mib, const char *log, const char *exit_file)
{
	size_t len = (size_t)(mib + k % 4) * MIB, bad = 0;
	unsigned char *p = malloc(len);
	char line[96];
	int fd, n;

	if (!p)
		return 1;
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (unsigned char)(i / 4096 + k);
	n = snprintf(line, sizeof(line), "%ld,%d,%zu\n", k, (int)getpid(), len);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		return 1;
	close(fd);
	while (access(exit_file, F_OK))
		sleep_ms(20);
	for (size_t i = 0; i < len; i += 4096)
		bad += p[i] != (unsigned char)(i / 4096 + k);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *log = NULL, *stop_file = NULL, *exit_file = NULL;
	long every_ms = 20, mib = 2, max = 400, k;
	pid_t launcher = getpid();
	int status, failed = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!strcmp(a, "--log"))
			log = v;
		else if (!strcmp(a, "--stop-file"))
			stop_file = v;
		else if (!strcmp(a, "--exit-file"))
			exit_file = v;
		else if (!strcmp(a, "--every-ms"))
			every_ms = strtol(v, NULL, 10);
		else if (!strcmp(a, "--child-mib"))
			mib = strtol(v, NULL, 10);
		else if (!strcmp(a, "--max"))
			max = strtol(v, NULL, 10);
		else
			die("unknown option (--log, --stop-file, --exit-file, --every-ms, --child-mib, --max)");
	}
	if (!log || !stop_file || !exit_file || every_ms < 1 || mib < 1 || max < 1)
		die("--log, --stop-file and --exit-file are needed; --every-ms, --child-mib, --max >= 1");
	for (k = 0; k < max && access(stop_file, F_OK); k++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork failed");
		if (pid == 0) {
			/* A test that fails and ends the launcher leaves no child polling for ever. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != launcher)
				_exit(1);
			_exit(child(k, mib, log, exit_file));
		}
		sleep_ms(every_ms);
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	return failed;
}
