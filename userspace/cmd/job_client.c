// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "columns.h"
#include "csv_out.h"
#include "gz_read.h"
#include "job_client.h"
#include "sock_proto.h"

#define POLL_S		1.0	/* ask again: new ranks, the latest summary, the end */
#define STEP_US		100000	/* between looks at the stop flag */
#define REPLY_TIMEOUT_S	30	/* the daemon serves one client at a time, 2 s at most each */

enum ask_result { ASK_OK, ASK_REFUSED, ASK_NOJOB, ASK_FAILED };

struct follower {
	char name[JSP_NAME_MAX];	/* the spool's name */
	FILE *in;			/* inflating (or raw with --compress) */
	FILE *out;
};

struct client {
	const struct options *o;
	const char *sock, *outdir;
	struct output_dir od;
	bool od_open, ended, failed;
	struct follower *f;
	size_t nf;
	ino_t copied[JSP_NWHOLE];	/* per whole file (jsp_whole_file): the spool's file last copied */
	char err[1024];
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the daemon cannot do for a user: only root's own attach can. */
static int refuse_options(const struct options *o)
{
	const char *opt = o->heap ? "--heap" : o->mpi_calls ? "--mpi-calls" :
			  o->nspecs ? "--spec" : o->spec_dir ? "--spec-dir" : NULL;

	if (!opt)
		return 0;
	fprintf(stderr, "memattr-bpf: %s needs root: without it, --job is served by the daemon, which traces with its own settings (run as root for %s)\n",
		opt, opt);
	return -1;
}

/*
 * One reply line, and the descriptor that came with it (-1: none). Each
 * line is one message of the daemon's: peek for its end, then take exactly
 * it, so a descriptor is never taken with the wrong line.
 */
static int recv_line(int s, char *buf, size_t cap, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n = recv(s, buf, cap - 1, MSG_PEEK);
	char *nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;

	*fd = -1;
	if (!nl)
		return -1;
	iov.iov_len = (size_t)(nl - buf) + 1;
	if (recvmsg(s, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)iov.iov_len)
		return -1;
	buf[iov.iov_len] = '\0';
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < nfds; i++) {
			int x;

			memcpy(&x, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = x;
			else
				close(x);
		}
	}
	return msg.msg_flags & MSG_CTRUNC ? -1 : 0;
}

/* Connected to the daemon, and it is root's (not a socket someone else planted). */
static int dial(struct client *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int s;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->sock);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		goto fail;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != 0) {
		close(s);
		snprintf(c->err, sizeof(c->err), "%s: not the memattr-bpf daemon's socket (not root's)", c->sock);
		return -1;
	}
	return s;
fail:
	snprintf(c->err, sizeof(c->err), "cannot reach the memattr-bpf daemon at %s: %s", c->sock, strerror(errno));
	if (s >= 0)
		close(s);
	return -1;
}

/* summary.csv, run_info.csv, mpi_calls.csv, alloc_stacks.csv as the daemon last rewrote it, replacing ours at once. */
static int copy_whole(struct client *c, const char *name, int fd)
{
	int which = jsp_whole_file(name);
	char tmp[256], buf[65536];
	struct stat st;
	bool bad;
	size_t n;
	FILE *in, *out;

	/* The daemon renames a new one in every few seconds: copy only a new one. */
	if (fstat(fd, &st) || st.st_ino == c->copied[which]) {
		close(fd);
		return 0;
	}
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return -1;
	}
	out = outdir_begin_replace(&c->od, name, tmp, sizeof(tmp));
	if (!out) {
		fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	bad = ferror(in);
	fclose(in);
	if (bad) {
		fclose(out);
		unlinkat(c->od.dirfd, tmp, 0);
		return -1;
	}
	if (outdir_commit(&c->od, out, tmp, name))
		return -1;
	c->copied[which] = st.st_ino;
	return 0;
}

/* A timeline not followed yet: its file here, and a reader from where it starts. */
static int follow(struct client *c, const char *name, int fd)
{
	char local[JSP_NAME_MAX];
	struct follower *nf, *f;
	FILE *raw;

	for (size_t i = 0; i < c->nf; i++)
		if (!strcmp(c->f[i].name, name)) {
			close(fd);	/* followed already: the first descriptor reads on */
			return 0;
		}
	if (jsp_local_name(name, c->o->compress, local, sizeof(local))) {
		close(fd);
		return -1;
	}
	nf = realloc(c->f, (c->nf + 1) * sizeof(*nf));
	if (!nf) {
		close(fd);
		return -1;
	}
	c->f = nf;
	f = &c->f[c->nf];
	memcpy(f->name, name, strlen(name) + 1);	/* served: shorter than JSP_NAME_MAX */
	raw = fdopen(fd, "r");
	if (!raw) {
		close(fd);
		return -1;
	}
	f->in = c->o->compress ? raw : gz_open_read(raw, UINT64_MAX);
	if (!f->in)
		return -1;
	f->out = outdir_create(&c->od, local);
	if (!f->out) {
		fclose(f->in);
		return -1;
	}
	c->nf++;
	return 0;
}

static int take_file(struct client *c, const char *name, int fd)
{
	int ret;

	if (fd < 0) {
		snprintf(c->err, sizeof(c->err), "the daemon sent %s without its descriptor", name);
		return -1;
	}
	if (jsp_whole_file(name) >= 0)
		ret = copy_whole(c, name, fd);
	else
		ret = follow(c, name, fd);
	if (ret)
		snprintf(c->err, sizeof(c->err), "%s/%s: %s", c->outdir, name, strerror(errno));
	return ret;
}

/* The output directory, made on the daemon's first yes: a refusal leaves nothing. */
static int open_outdir(struct client *c)
{
	if (c->od_open)
		return 0;
	if (outdir_open(&c->od, c->outdir, (uid_t)-1, (gid_t)-1, c->err, sizeof(c->err)))
		return -1;
	c->od_open = true;
	return 0;
}

/* One round with the daemon: the job's state and its files. */
static enum ask_result ask(struct client *c)
{
	char line[JSP_LINE_MAX + 1];
	struct jsp_reply r;
	int s, fd, n = jsp_format_request(line, sizeof(line), c->o->job, c->o->job_uid);
	enum ask_result ret = ASK_FAILED;

	if (n < 0) {
		snprintf(c->err, sizeof(c->err), "--job '%s': not a job ID the daemon can be asked for (printable, no spaces, at most %d bytes)",
			 c->o->job, JSP_JOB_MAX);
		return ASK_REFUSED;
	}
	s = dial(c);
	if (s < 0)
		return ASK_FAILED;
	if (send(s, line, (size_t)n, MSG_NOSIGNAL) != n) {
		snprintf(c->err, sizeof(c->err), "the daemon at %s: %s", c->sock, strerror(errno));
		close(s);
		return ASK_FAILED;
	}
	for (;;) {
		if (recv_line(s, line, sizeof(line), &fd) || jsp_parse_reply(line, &r)) {
			if (fd >= 0)
				close(fd);
			snprintf(c->err, sizeof(c->err), "the daemon at %s broke off its answer", c->sock);
			break;
		}
		if (r.kind == JSP_ERR) {
			snprintf(c->err, sizeof(c->err), "%s", r.text);
			ret = !strcmp(r.code, "nojob") ? ASK_NOJOB : ASK_REFUSED;
			break;
		}
		if (r.kind == JSP_END) {
			ret = ASK_OK;
			break;
		}
		if (r.kind == JSP_JOB) {
			c->ended = r.ended;
			if (open_outdir(c))
				break;
			continue;
		}
		if (!c->od_open) {	/* a file before the job's state */
			if (fd >= 0)
				close(fd);
			snprintf(c->err, sizeof(c->err), "the daemon at %s sent a file before the job's state", c->sock);
			break;
		}
		if (take_file(c, r.text, fd))
			break;
	}
	close(s);
	return ret;
}

/* Everything the spool has now; a timeline's reader is cleared to read on later. */
static int drain(struct client *c)
{
	char buf[65536];
	int ret = 0;

	for (size_t i = 0; i < c->nf; i++) {
		struct follower *f = &c->f[i];
		size_t n;

		while ((n = fread(buf, 1, sizeof(buf), f->in)) > 0)
			if (fwrite(buf, 1, n, f->out) != n)
				break;
		if (ferror(f->in) && !ret) {
			snprintf(c->err, sizeof(c->err), "reading the daemon's %s: %s", f->name, strerror(errno));
			ret = -1;
		}
		clearerr(f->in);
		if (fflush(f->out) && !ret) {
			snprintf(c->err, sizeof(c->err), "writing %s/%s: %s", c->outdir, f->name, strerror(errno));
			ret = -1;
		}
	}
	return ret;
}

static void close_all(struct client *c)
{
	for (size_t i = 0; i < c->nf; i++) {
		fclose(c->f[i].in);
		fclose(c->f[i].out);
	}
	free(c->f);
	if (c->od_open)
		outdir_close(&c->od);
}

/* The first answer: the job is ours (with --wait, once it appears), or why not. */
static int first_ask(struct client *c, volatile sig_atomic_t *stop)
{
	for (;;) {
		enum ask_result r = ask(c);

		if (r == ASK_OK)
			return 0;
		if (r != ASK_NOJOB || !c->o->wait || *stop)
			return -1;
		for (int i = 0; i < POLL_S * 1e6 / STEP_US && !*stop; i++)
			usleep(STEP_US);
	}
}

int job_client_run(const struct options *o, const char *sock, const char *outdir, volatile sig_atomic_t *stop)
{
	struct client c = { .o = o, .sock = sock, .outdir = outdir };
	double t0 = mono_now(), next;
	const char *how = "job ended";

	if (refuse_options(o))
		return EXIT_FAILURE;
	if (first_ask(&c, stop)) {
		fprintf(stderr, "memattr-bpf: %s\n", c.err);
		close_all(&c);
		return EXIT_FAILURE;
	}
	/* The daemon's attribution is sampled unless its admin chose exact: unlike this tool's default. */
	fprintf(stderr, "memattr-bpf: job %s is traced by the node's daemon: copying its files from %s (its settings apply, its attribution too: run_info.csv's modes; exact needs root or an exact daemon); writing %s\n",
		o->job, sock, outdir);
	next = mono_now() + POLL_S;
	while (!c.failed) {
		c.failed = drain(&c) != 0;
		if (c.ended || c.failed)
			break;
		if (*stop) {
			how = "stopped";
			break;
		}
		if (o->duration_s && mono_now() - t0 >= o->duration_s) {
			how = "--duration reached";
			break;
		}
		if (mono_now() < next) {
			usleep(STEP_US);
			continue;
		}
		next += POLL_S;
		/* The daemon gone or the job's files gone: keep what was copied. */
		if (ask(&c) != ASK_OK)
			c.failed = true;
	}
	if (c.failed)
		fprintf(stderr, "memattr-bpf: %s; %s holds what was copied until then\n", c.err, outdir);
	else
		fprintf(stderr, "memattr-bpf: %s; %zu timeline%s in %s\n", how, c.nf, c.nf == 1 ? "" : "s", outdir);
	close_all(&c);
	return c.failed ? EXIT_FAILURE : 0;
}
