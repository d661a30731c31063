// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "close_many.h"

#define PARALLEL_THREADS	16

struct slice {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t from, n;
};

static void *run_slice(void *arg)
{
	const struct slice *s = arg;

	for (size_t i = s->from; i < s->from + s->n; i++)
		s->fn(s->ctx, i);
	return NULL;
}

void parallel_for(size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
	struct slice slice[PARALLEL_THREADS];
	pthread_t tid[PARALLEL_THREADS];
	bool started[PARALLEL_THREADS] = { 0 };
	size_t nthreads = n < PARALLEL_THREADS ? n : PARALLEL_THREADS, done = 0;

	for (size_t i = 0; i < nthreads; i++) {
		size_t take = (n - done) / (nthreads - i);

		slice[i] = (struct slice){ fn, ctx, done, take };
		done += take;
		/* A thread that cannot start: its slice runs here, in turn. */
		started[i] = !pthread_create(&tid[i], NULL, run_slice, &slice[i]);
		if (!started[i])
			run_slice(&slice[i]);
	}
	for (size_t i = 0; i < nthreads; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}

static void close_one(void *ctx, size_t i)
{
	close(((const int *)ctx)[i]);
}

void close_many(const int *fds, size_t n)
{
	parallel_for(n, close_one, (void *)fds);
}

/* A descriptor of the BPF object's: a link, a perf event, a map, a program. */
static bool bpf_fd(int dirfd, const char *name)
{
	char target[64];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n <= 0)
		return false;
	target[n] = '\0';
	return !strncmp(target, "anon_inode:bpf", 14) || !strcmp(target, "anon_inode:[perf_event]");
}

/*
 * In the child: every descriptor but the BPF object's and keep is closed,
 * and the standard ones point to /dev/null. A pipe the tool's output went
 * to (`memattr-bpf ... | tee log`, ssh) must end when the tool ends, not
 * when the kernel has finished detaching, grace periods later.
 */
static void keep_only_bpf(int keep)
{
	char buf[4096];
	int dirfd, null = open("/dev/null", O_RDWR | O_CLOEXEC);
	long n;

	for (int fd = 0; fd <= 2; fd++) {
		if (fd == keep)
			continue;	/* the tool ran with that standard descriptor closed */
		if (null < 0 || dup2(null, fd) < 0)
			close(fd);
	}
	if (null > 2)
		close(null);
	dirfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return;
	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			int fd = 0;

			for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
				fd = fd * 10 + (*c - '0');
			if (d->name[0] >= '0' && d->name[0] <= '9' && fd > 2 && fd != keep &&
			    fd != dirfd && !bpf_fd(dirfd, d->name))
				close(fd);
			off += d->reclen;
		}
	}
	close(dirfd);
}

void detach_after_exit(void)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p))
		return;
	pid = fork();
	if (pid != 0) {
		/* Ours stays open to our exit: the child's read ends then. */
		close(p[0]);
		return;
	}
	close(p[1]);
	keep_only_bpf(p[0]);
	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}
