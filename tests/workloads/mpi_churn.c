// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Many short-lived processes: after the go, each rank starts --count
 * children over --seconds (fork, exec of /bin/sleep, exit after
 * --child-ms), at most --max-live at a time, and logs each child's pid
 * ("child" event, bytes = pid). Then it logs "done" and waits for the stop
 * file, so a test can look at the tracer before the job ends.
 */
#include <getopt.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/wait.h>

#include "common.h"

static int live;

static void reap(bool block)
{
	while (live > 0 && waitpid(-1, NULL, block ? 0 : WNOHANG) > 0) {
		live--;
		block = false;
	}
}

static pid_t spawn(const char *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sleep", "sleep", arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	const char *log_dir = NULL, *go_file = NULL, *stop_file = NULL;
	int count = 100, child_ms = 300, max_live = 64, rank;
	double seconds = 10, t0;
	char arg[32];
	static const struct option opts[] = {
		{ "log-dir", required_argument, NULL, 'l' },
		{ "go-file", required_argument, NULL, 'g' },
		{ "stop-file", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "child-ms", required_argument, NULL, 'c' },
		{ "max-live", required_argument, NULL, 'm' },
		{ 0 },
	};
	int c;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': log_dir = optarg; break;
		case 'g': go_file = optarg; break;
		case 's': stop_file = optarg; break;
		case 'n': count = atoi(optarg); break;
		case 't': seconds = atof(optarg); break;
		case 'c': child_ms = atoi(optarg); break;
		case 'm': max_live = atoi(optarg); break;
		default: die("usage: mpi_churn [--count N] [--seconds S] [--child-ms MS] ...");
		}
	}
	log_open(log_dir, "churn", rank);
	snprintf(arg, sizeof(arg), "%d.%03d", child_ms / 1000, child_ms % 1000);
	log_event("ready", 0);
	wait_for_go(rank, go_file, 120);

	t0 = mono_now();
	for (int i = 0; i < count; i++) {
		double due = t0 + seconds * i / count;
		pid_t pid;

		while (mono_now() < due) {
			reap(false);
			sleep_ms(2);
		}
		if (live >= max_live)
			reap(true);
		pid = spawn(arg);
		if (pid < 0)
			die("fork: %s", strerror(errno));
		live++;
		log_event("child", (size_t)pid);
	}
	while (live > 0)
		reap(true);
	log_event("done", 0);
	while (stop_file && access(stop_file, F_OK) != 0)
		sleep_ms(20);
	MPI_Barrier(MPI_COMM_WORLD);
	log_close();
	MPI_Finalize();
	return 0;
}
