// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon_socket.h"
#include "safe_open.h"
#include "sock_limit.h"
#include "sock_proto.h"

#define BACKLOG		64	/* connections not accepted yet (a loaded node may not run us for a while) */
#define MAX_PENDING	32	/* accepted, their request not complete yet */
#define CLIENT_TIMEOUT_S 2	/* to send the whole request */
#define ANSWER_TIMEOUT_S 5.0	/* to take the whole answer */
#define QUEUE_TIMEOUT_S	10.0	/* a whole request may wait this long for a server */
#define MAX_SERVING	8	/* answers sent at once, each by its own thread */
/*
 * Each user's share (sock_limit.h): of the connections whose request is
 * coming or waiting, and of the answers under way. One user's silent or
 * slow clients cost that user's own share, nobody else's.
 */
#define PER_UID_PENDING	4
#define PER_UID_SERVING	2
#define ENDED_KEEP_S	600.0	/* an ended job's final files stay served this long */
#define ENDED_MAX	256	/* ... and at most this many ended jobs */

struct ds_job {
	char *id, *dir;
	uid_t uid;
	bool ended;
	double ended_at;
};

struct daemon_socket {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	pthread_mutex_t lock;		/* guards jobs: the loop writes, the thread reads */
	struct ds_job *jobs;
	size_t njobs, cap;
	int wake_pipe[2];		/* a server thread is done: the loop may start another */
	pthread_mutex_t srv_lock;	/* guards serving */
	pthread_cond_t srv_done;
	unsigned int serving;		/* answers being sent now */
	struct sl_serving per_uid;	/* ... per user (guarded by srv_lock) */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;			/* the socket file we made: removed only if still it */
	ino_t ino;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void job_free(struct ds_job *j)
{
	free(j->id);
	free(j->dir);
}

/* Under the lock: ended jobs past their time, and the oldest past ENDED_MAX. */
static void prune(struct daemon_socket *ds, double now)
{
	size_t nended = 0, oldest;

	for (size_t i = 0; i < ds->njobs;) {
		if (ds->jobs[i].ended && now - ds->jobs[i].ended_at > ENDED_KEEP_S) {
			job_free(&ds->jobs[i]);
			ds->jobs[i] = ds->jobs[--ds->njobs];
			continue;
		}
		nended += ds->jobs[i++].ended;
	}
	while (nended-- > ENDED_MAX) {
		oldest = SIZE_MAX;
		for (size_t i = 0; i < ds->njobs; i++)
			if (ds->jobs[i].ended && (oldest == SIZE_MAX ||
						  ds->jobs[i].ended_at < ds->jobs[oldest].ended_at))
				oldest = i;
		job_free(&ds->jobs[oldest]);
		ds->jobs[oldest] = ds->jobs[--ds->njobs];
	}
}

void daemon_socket_job_started(struct daemon_socket *ds, const char *id, const char *dir, uid_t uid)
{
	struct ds_job j = { .id = strdup(id), .dir = strdup(dir), .uid = uid };

	if (!ds)
		return;
	pthread_mutex_lock(&ds->lock);
	prune(ds, mono_now());
	if (ds->njobs == ds->cap) {
		size_t cap = ds->cap ? ds->cap * 2 : 16;
		struct ds_job *n = realloc(ds->jobs, cap * sizeof(*n));

		if (n) {
			ds->jobs = n;
			ds->cap = cap;
		}
	}
	if (j.id && j.dir && ds->njobs < ds->cap) {
		ds->jobs[ds->njobs++] = j;
		j.id = j.dir = NULL;
	}
	pthread_mutex_unlock(&ds->lock);
	if (j.id && j.dir)
		fprintf(stderr, "memattr-bpf: job %s: not served on the user socket (out of memory)\n", id);
	job_free(&j);
}

void daemon_socket_job_ended(struct daemon_socket *ds, const char *dir)
{
	double now = mono_now();

	if (!ds)
		return;
	pthread_mutex_lock(&ds->lock);
	for (size_t i = 0; i < ds->njobs; i++)
		if (!ds->jobs[i].ended && !strcmp(ds->jobs[i].dir, dir)) {
			ds->jobs[i].ended = true;
			ds->jobs[i].ended_at = now;
		}
	prune(ds, now);
	pthread_mutex_unlock(&ds->lock);
}

enum lookup_result { LOOK_FOUND, LOOK_NONE, LOOK_DENIED, LOOK_AMBIGUOUS };

/*
 * Job id as the table has it, for a caller of uid asker naming uid want
 * (JSP_ANY_UID: none): the running one, else the one that ended last (a
 * reused ID: the latest run). A user is asking for their own job of the
 * ID (another user's of the same ID is not theirs: denied); root gets the
 * one job of the ID, or the named user's, and must name one when several
 * users' jobs carry it. dir is malloc'ed.
 */
static enum lookup_result lookup(struct daemon_socket *ds, const char *id, uid_t asker, uid_t want,
				 char **dir, bool *ended)
{
	const struct ds_job *best = NULL;
	bool other = false, several = false;

	if (asker != 0)
		want = asker;
	pthread_mutex_lock(&ds->lock);
	for (size_t i = 0; i < ds->njobs; i++) {
		const struct ds_job *j = &ds->jobs[i];

		if (strcmp(j->id, id))
			continue;
		if (want != JSP_ANY_UID && j->uid != want) {
			other = true;
			continue;
		}
		if (best && best->uid != j->uid)
			several = true;
		if (!best || (best->ended && (!j->ended || j->ended_at > best->ended_at)))
			best = j;
	}
	if (best && !several) {
		*dir = strdup(best->dir);
		*ended = best->ended;
	}
	pthread_mutex_unlock(&ds->lock);
	if (several)
		return LOOK_AMBIGUOUS;
	if (best)
		return *dir ? LOOK_FOUND : LOOK_NONE;
	return other ? LOOK_DENIED : LOOK_NONE;
}

/*
 * One reply line, with fd attached when fd >= 0, before the answer's
 * deadline (CLOCK_MONOTONIC seconds). 0, or -1 (the client is given up).
 */
static int send_line(int c, const char *line, int fd, double deadline)
{
	double left = deadline - mono_now();
	struct timeval tv;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)line, .iov_len = strlen(line) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	/* What is left of the whole answer's time bounds this line's wait; a partial line fails too. */
	if (left <= 0)
		return -1;
	tv.tv_sec = (time_t)left;
	tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) * 1e6) + 1;
	if (setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	return sendmsg(c, &msg, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -1;
}

/* Every served file of dir, each with its descriptor. 0, or -1 when the client is gone. */
static int send_files(int c, int dirfd, double deadline)
{
	char line[JSP_LINE_MAX];
	struct dirent *de;
	int dfd = dup(dirfd), ret = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		int fd;

		if (!jsp_file_served(de->d_name))
			continue;
		/* The spool is root's: still, a regular file only, never through a link. */
		fd = safe_openat(dirfd, de->d_name, 0, UINT64_MAX, NULL);
		if (fd < 0)
			continue;	/* summary.csv between renames, say: the next poll has it */
		snprintf(line, sizeof(line), "FILE %s\n", de->d_name);
		ret = send_line(c, line, fd, deadline);
		close(fd);
	}
	closedir(d);
	return ret;
}

/* A whole request line arrived: the answer, sent blocking within ANSWER_TIMEOUT_S in all. */
static void serve(struct daemon_socket *ds, int c, const char *req)
{
	double deadline = mono_now() + ANSWER_TIMEOUT_S;
	char job[JSP_JOB_MAX + 1], line[JSP_LINE_MAX + 64];
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char *dir = NULL;
	bool ended = false;
	uid_t want;
	int dirfd;

	if (fcntl(c, F_SETFL, 0) || getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen))
		return;
	if (jsp_parse_request(req, job, sizeof(job), &want, line, sizeof(line))) {
		send_line(c, line, -1, deadline);
		return;
	}
	switch (lookup(ds, job, cred.uid, want, &dir, &ended)) {
	case LOOK_FOUND:
		break;
	case LOOK_NONE:
		jsp_format_nojob(line, sizeof(line), job);
		send_line(c, line, -1, deadline);
		return;
	case LOOK_DENIED:
		/* Another user's job: nobody learns more than that it is not theirs. */
		jsp_format_denied(line, sizeof(line), job);
		send_line(c, line, -1, deadline);
		return;
	case LOOK_AMBIGUOUS:
		jsp_format_ambiguous(line, sizeof(line), job);
		send_line(c, line, -1, deadline);
		return;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(dir);
	if (dirfd < 0) {
		/* Removed (--retain) since: as good as untraced. */
		jsp_format_nojob(line, sizeof(line), job);
		send_line(c, line, -1, deadline);
		return;
	}
	/* The state first: "ended" means every file listed after it is final. */
	if (!send_line(c, ended ? "JOB ended\n" : "JOB running\n", -1, deadline) &&
	    !send_files(c, dirfd, deadline))
		send_line(c, "END\n", -1, deadline);
	close(dirfd);
}

/*
 * A connection whose request is still coming: read without blocking, many
 * at once, so a client that connects and says nothing delays nobody else.
 */
struct pending {
	int fd;
	uid_t uid;		/* the peer's (SO_PEERCRED at accept) */
	double since;		/* accepted; once ready, when the request was complete */
	bool ready;		/* the whole request is in: waiting for a server thread */
	size_t n;
	double deadline;
	char buf[JSP_LINE_MAX + 1];
};

/* More of p's request. 1: complete (p->ready), 0: more to come, -1: drop it. */
static int pending_read(struct pending *p)
{
	ssize_t r = recv(p->fd, p->buf + p->n, sizeof(p->buf) - 1 - p->n, MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (r <= 0)
		return -1;
	p->n += (size_t)r;
	p->buf[p->n] = '\0';
	if (memchr(p->buf, '\0', p->n))
		return -1;
	if (!strchr(p->buf, '\n'))
		return p->n + 1 < sizeof(p->buf) ? 0 : -1;	/* longer than a request: dropped */
	p->ready = true;
	p->since = mono_now();
	p->deadline = p->since + QUEUE_TIMEOUT_S;
	return 1;
}

struct job_to_serve {
	struct daemon_socket *ds;
	int fd;
	uid_t uid;
	char req[JSP_LINE_MAX + 1];
};

/* One answer, in its own thread: a client that takes its time delays only itself. */
static void *answer_thread(void *arg)
{
	struct job_to_serve *w = arg;
	struct daemon_socket *ds = w->ds;

	uid_t uid = w->uid;

	serve(ds, w->fd, w->req);
	close(w->fd);
	free(w);
	/*
	 * The wakeup after serving drops, or the loop may wake, find every
	 * thread still busy and sleep on a waiting request; under the lock,
	 * as daemon_socket_stop closes the pipe only once serving is 0.
	 */
	pthread_mutex_lock(&ds->srv_lock);
	ds->serving--;
	sl_serving_done(&ds->per_uid, uid);
	if (write(ds->wake_pipe[1], "w", 1) < 0) {
		/* Full: the loop is awake already. */
	}
	pthread_cond_broadcast(&ds->srv_done);
	pthread_mutex_unlock(&ds->srv_lock);
	return NULL;
}

/*
 * A one-line refusal to a connection about to be closed, without waiting:
 * the client says why instead of "broke off its answer".
 */
static void say_busy(int fd, const char *why)
{
	char line[JSP_LINE_MAX];
	int n = jsp_format_busy(line, sizeof(line), why);

	if (n > 0 && send(fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* Gone or not reading: it is closed all the same. */
	}
}

/* The answer to p's request in its own thread; the slot (serving, per_uid) is taken. */
static void start_answer(struct daemon_socket *ds, struct pending *p)
{
	struct job_to_serve *w = malloc(sizeof(*w));
	pthread_attr_t attr;
	pthread_t t;

	if (w) {
		w->ds = ds;
		w->fd = p->fd;
		w->uid = p->uid;
		memcpy(w->req, p->buf, sizeof(w->req));
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (!pthread_create(&t, &attr, answer_thread, w)) {
			pthread_attr_destroy(&attr);
			return;
		}
		pthread_attr_destroy(&attr);
		free(w);
	}
	close(p->fd);
	pthread_mutex_lock(&ds->srv_lock);
	ds->serving--;
	sl_serving_done(&ds->per_uid, p->uid);
	pthread_mutex_unlock(&ds->srv_lock);
}

static size_t view_of(const struct pending *pend, size_t n, struct sl_conn *view)
{
	for (size_t i = 0; i < n; i++)
		view[i] = (struct sl_conn){ .uid = pend[i].uid, .ready = pend[i].ready, .since = pend[i].since };
	return n;
}

/*
 * Whole requests to free server threads: the one waiting longest first,
 * among users with fewer than PER_UID_SERVING answers under way.
 */
static void dispatch_ready(struct daemon_socket *ds, struct pending *pend, size_t *npend)
{
	struct sl_conn view[MAX_PENDING];

	for (;;) {
		long i = -1;

		view_of(pend, *npend, view);
		pthread_mutex_lock(&ds->srv_lock);
		if (ds->serving < MAX_SERVING)
			i = sl_pick(view, *npend, &ds->per_uid, PER_UID_SERVING);
		if (i >= 0 && !sl_serving_add(&ds->per_uid, pend[i].uid))
			ds->serving++;
		else
			i = -1;
		pthread_mutex_unlock(&ds->srv_lock);
		if (i < 0)
			return;
		start_answer(ds, &pend[i]);
		pend[i] = pend[--*npend];
	}
}

/*
 * A new connection into the table, within its user's share: in place of
 * that user's oldest silent one when the share is full, refused ("ERR
 * busy") when the share is all whole requests waiting for a server.
 */
static void admit(struct pending *pend, size_t *npend, int c, double now)
{
	struct sl_conn view[MAX_PENDING];
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	size_t victim;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		close(c);
		return;
	}
	/*
	 * What the user's connections have sent meanwhile: a burst is accepted
	 * before its requests are read, and a request already sent is not a
	 * silent connection to make room from.
	 */
	for (size_t i = *npend; i-- > 0;) {
		if (pend[i].uid != cred.uid || pend[i].ready || pending_read(&pend[i]) >= 0)
			continue;
		close(pend[i].fd);
		pend[i] = pend[--*npend];
	}
	switch (sl_admit(view, view_of(pend, *npend, view), cred.uid, PER_UID_PENDING, &victim)) {
	case SL_ADMIT:
		pend[(*npend)++] = (struct pending){ .fd = c, .uid = cred.uid, .since = now,
						     .deadline = now + CLIENT_TIMEOUT_S };
		return;
	case SL_EVICT:
		say_busy(pend[victim].fd, "a newer connection of yours took this one's place (it had sent "
			 "no request yet)");
		close(pend[victim].fd);
		pend[victim] = (struct pending){ .fd = c, .uid = cred.uid, .since = now,
						 .deadline = now + CLIENT_TIMEOUT_S };
		return;
	case SL_REFUSE: {
		char why[160];

		snprintf(why, sizeof(why), "%d requests of yours are waiting for the node service already "
			 "(at most that many at once): try again when they are answered", PER_UID_PENDING);
		say_busy(c, why);
		close(c);
		return;
	}
	}
}

static void *serve_thread(void *arg)
{
	struct daemon_socket *ds = arg;
	struct pending pend[MAX_PENDING];
	size_t npend = 0;

	for (;;) {
		struct pollfd p[3 + MAX_PENDING];
		double now = mono_now(), first = now + 3600;
		int c, nfds = 3, timeout;
		char drain[64];

		/* Full: new connections wait in the backlog until one is done. */
		p[0] = (struct pollfd){ .fd = npend < MAX_PENDING ? ds->fd : -1, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = ds->stop_pipe[0], .events = POLLIN };
		p[2] = (struct pollfd){ .fd = ds->wake_pipe[0], .events = POLLIN };
		for (size_t i = 0; i < npend; i++) {
			/* A whole request waits for a server, not for more input. */
			p[nfds++] = (struct pollfd){ .fd = pend[i].ready ? -1 : pend[i].fd, .events = POLLIN };
			if (pend[i].deadline < first)
				first = pend[i].deadline;
		}
		timeout = npend ? (int)((first - now) * 1000) + 1 : -1;
		if (poll(p, (nfds_t)nfds, timeout < 0 && npend ? 0 : timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[2].revents && read(ds->wake_pipe[0], drain, sizeof(drain)) < 0) {
			/* Nothing to drain after all. */
		}
		now = mono_now();
		/* Walk backwards: a finished one is replaced by the last. */
		for (size_t i = npend; i-- > 0;) {
			int ret = p[3 + i].revents ? pending_read(&pend[i]) : 0;

			if (ret >= 0 && now < pend[i].deadline)
				continue;
			if (ret >= 0 && pend[i].ready)
				say_busy(pend[i].fd, "the node service had no free server for 10 s: try again");
			close(pend[i].fd);
			pend[i] = pend[--npend];
		}
		dispatch_ready(ds, pend, &npend);
		if (!(p[0].revents & POLLIN))
			continue;
		/* Every connection waiting, not one a wakeup: a burst never fills the backlog. */
		while (npend < MAX_PENDING &&
		       (c = accept4(ds->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
			admit(pend, &npend, c, now);
		/* Requests admit() found whole: served now, not at the next wakeup. */
		dispatch_ready(ds, pend, &npend);
	}
	for (size_t i = 0; i < npend; i++)
		close(pend[i].fd);
	return NULL;
}

/* The socket's directory: made if missing; root's, not writable by others, not a link. */
static int prepare_dir(const char *path, char *err, size_t errlen)
{
	char copy[PATH_MAX], *dir;
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "--socket %s: cannot create %s: %s", path, dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--socket %s: %s is not a directory (a symlink?)", path, dir);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, errlen, "--socket %s: %s must be root's and writable by root only (it is %o, uid %u)",
			 path, dir, st.st_mode & 07777, (unsigned int)st.st_uid);
		return -1;
	}
	return 0;
}

/* Nothing at path, or a socket nobody answers on (a daemon that was killed): removed. */
static int clear_stale(const char *path, const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	int fd, live;

	if (lstat(path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--socket %s: exists and is not a socket", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	live = fd >= 0 && !connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	if (fd >= 0)
		close(fd);
	if (live) {
		snprintf(err, errlen, "--socket %s: another memattr-bpf daemon serves it (give another path, or none)", path);
		return -1;
	}
	unlink(path);
	return 0;
}

static int bind_socket(struct daemon_socket *ds, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;

	memcpy(sa.sun_path, ds->path, sizeof(ds->path));
	if (prepare_dir(ds->path, err, errlen) || clear_stale(ds->path, &sa, err, errlen))
		return -1;
	/* Non-blocking: the serving thread accepts until none is left. */
	ds->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ds->fd < 0 || bind(ds->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "--socket %s: %s", ds->path, strerror(errno));
		return -1;
	}
	/* Every user may ask; the daemon decides who gets what. */
	if (chmod(ds->path, 0666) || lstat(ds->path, &st) || listen(ds->fd, BACKLOG)) {
		snprintf(err, errlen, "--socket %s: %s", ds->path, strerror(errno));
		unlink(ds->path);
		return -1;
	}
	ds->dev = st.st_dev;
	ds->ino = st.st_ino;
	return 0;
}

struct daemon_socket *daemon_socket_start(const char *path, char *err, size_t errlen)
{
	struct daemon_socket *ds = calloc(1, sizeof(*ds));

	if (!ds) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ds->fd = ds->stop_pipe[0] = ds->stop_pipe[1] = ds->wake_pipe[0] = ds->wake_pipe[1] = -1;
	if (path[0] != '/' || strlen(path) >= sizeof(ds->path)) {
		snprintf(err, errlen, "--socket %s: must be an absolute path shorter than %zu bytes",
			 path, sizeof(ds->path));
		goto fail;
	}
	snprintf(ds->path, sizeof(ds->path), "%s", path);
	if (bind_socket(ds, err, errlen))
		goto fail;
	pthread_mutex_init(&ds->lock, NULL);
	pthread_mutex_init(&ds->srv_lock, NULL);
	pthread_cond_init(&ds->srv_done, NULL);
	if (pipe2(ds->stop_pipe, O_CLOEXEC) || pipe2(ds->wake_pipe, O_CLOEXEC | O_NONBLOCK) ||
	    pthread_create(&ds->thread, NULL, serve_thread, ds)) {
		snprintf(err, errlen, "user socket: %s", strerror(errno));
		pthread_mutex_destroy(&ds->lock);
		unlink(ds->path);
		goto fail;
	}
	return ds;
fail:
	if (ds->fd >= 0)
		close(ds->fd);
	for (int i = 0; i < 2; i++) {
		if (ds->stop_pipe[i] >= 0)
			close(ds->stop_pipe[i]);
		if (ds->wake_pipe[i] >= 0)
			close(ds->wake_pipe[i]);
	}
	free(ds);
	return NULL;
}

void daemon_socket_stop(struct daemon_socket *ds)
{
	struct stat st;

	if (!ds)
		return;
	if (write(ds->stop_pipe[1], "x", 1) == 1)
		pthread_join(ds->thread, NULL);
	/* Answers under way end by their deadline at the latest: they use the table. */
	pthread_mutex_lock(&ds->srv_lock);
	while (ds->serving)
		pthread_cond_wait(&ds->srv_done, &ds->srv_lock);
	pthread_mutex_unlock(&ds->srv_lock);
	close(ds->stop_pipe[0]);
	close(ds->stop_pipe[1]);
	close(ds->wake_pipe[0]);
	close(ds->wake_pipe[1]);
	close(ds->fd);
	/* Not one a later daemon put there. */
	if (!lstat(ds->path, &st) && st.st_dev == ds->dev && st.st_ino == ds->ino)
		unlink(ds->path);
	pthread_mutex_destroy(&ds->lock);
	pthread_mutex_destroy(&ds->srv_lock);
	pthread_cond_destroy(&ds->srv_done);
	for (size_t i = 0; i < ds->njobs; i++)
		job_free(&ds->jobs[i]);
	free(ds->jobs);
	free(ds);
}
