// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "http_listen.h"
#include "num_arg.h"

#define REQ_MAX		8192
#define REQ_TIMEOUT_MS	2000	/* to send the whole request head */
#define SEND_DEADLINE_MS 10000	/* to take the whole answer */
#define MAX_CONNS	64	/* clients served at once; more wait in the backlog */
#define BACKLOG		64

#define CT_TEXT	"text/plain; version=0.0.4; charset=utf-8"
#define CT_OM	"application/openmetrics-text; version=1.0.0; charset=utf-8"

struct http_listen {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	pthread_mutex_t lock;
	char *text, *om;
	size_t textlen, omlen;
};

int http_split_addr(const char *addr, char *host, size_t hostlen, unsigned int *port)
{
	const char *colon, *h = addr;
	size_t n;
	unsigned long p;

	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			return -1;
		h = addr + 1;
		n = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return -1;
		n = (size_t)(colon - addr);
	}
	if (!n || n >= hostlen || !colon[1])
		return -1;
	if (num_parse_uint(colon + 1, 1, 65535, &p))
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	*port = (unsigned int)p;
	return 0;
}

int http_wants_openmetrics(const char *req)
{
	const char *line = strstr(req, "\n");

	/* Header names are case-insensitive: look for "accept:" at a line start. */
	for (; line; line = strstr(line + 1, "\n")) {
		const char *v = line + 1, *eol;

		if (strncasecmp(v, "accept:", 7))
			continue;
		eol = strpbrk(v, "\r\n");
		if (!eol)
			eol = v + strlen(v);
		return memmem(v, (size_t)(eol - v), "application/openmetrics-text", 28) != NULL;
	}
	return 0;
}

/*
 * One client. Each gets a deadline for its whole request (a byte a second
 * does not keep it alive) and then one for its whole answer; up to
 * MAX_CONNS are read and written at once, none waited on: a slow client
 * costs the others nothing.
 */
struct conn {
	int fd;
	bool writing;
	double deadline;
	size_t n;		/* request bytes read */
	char *out;		/* the whole answer, headers and body */
	size_t outlen, sent;
	char req[REQ_MAX];
};

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The answer into c->out; false when out of memory (the client is dropped). */
static bool respond(struct conn *c, const char *status, const char *ctype, const char *body,
		    size_t len, int head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, ctype, len);

	if (head)
		len = 0;
	c->out = malloc((size_t)n + len);
	if (!c->out)
		return false;
	memcpy(c->out, hdr, (size_t)n);
	memcpy(c->out + n, body, len);
	c->outlen = (size_t)n + len;
	c->sent = 0;
	return true;
}

/* A whole request head in c->req: its answer, ready to send. */
static bool answer(struct http_listen *h, struct conn *c)
{
	const char *req = c->req, *ctype;
	int head, om;
	bool ok;

	head = !strncmp(req, "HEAD ", 5);
	if (strncmp(req, "GET ", 4) && !head)
		return respond(c, "405 Method Not Allowed", "text/plain", "GET only\n", 9, 0);
	if (strncmp(req + (head ? 5 : 4), "/metrics", 8) ||
	    !strchr(" ?", req[(head ? 5 : 4) + 8]))
		return respond(c, "404 Not Found", "text/plain", "see /metrics\n", 13, head);
	om = http_wants_openmetrics(req);
	ctype = om ? CT_OM : CT_TEXT;
	/* Copied out under the lock, sent without it: the loop never waits on a client. */
	pthread_mutex_lock(&h->lock);
	if (om ? h->om : h->text)
		ok = respond(c, "200 OK", ctype, om ? h->om : h->text, om ? h->omlen : h->textlen, head);
	else
		ok = respond(c, "503 Service Unavailable", "text/plain", "no figures yet\n", 15, head);
	pthread_mutex_unlock(&h->lock);
	return ok;
}

/* More of c's request, or of its answer. false: done with it (answered, gone, or broken). */
static bool step(struct http_listen *h, struct conn *c, double now)
{
	ssize_t r;

	if (!c->writing) {
		r = recv(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (r <= 0)
			return false;
		c->n += (size_t)r;
		c->req[c->n] = '\0';
		if (!strstr(c->req, "\r\n\r\n") && !strstr(c->req, "\n\n"))
			return c->n + 1 < sizeof(c->req);	/* longer than a request head: dropped */
		if (!answer(h, c))
			return false;
		c->writing = true;
		c->deadline = now + SEND_DEADLINE_MS;
	}
	while (c->sent < c->outlen) {
		r = send(c->fd, c->out + c->sent, c->outlen - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return true;
		if (r <= 0)
			return false;
		c->sent += (size_t)r;
	}
	return false;	/* all sent: Connection: close */
}

static void drop(struct conn *c)
{
	close(c->fd);
	free(c->out);
	free(c);
}

static void *listen_thread(void *arg)
{
	struct http_listen *h = arg;
	struct conn *conns[MAX_CONNS];
	size_t n = 0;

	for (;;) {
		struct pollfd p[2 + MAX_CONNS];
		double now = mono_ms(), first = now + 3600e3;
		int c, timeout;

		/* Full: new connections wait in the backlog until one is done. */
		p[0] = (struct pollfd){ .fd = n < MAX_CONNS ? h->fd : -1, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = h->stop_pipe[0], .events = POLLIN };
		for (size_t i = 0; i < n; i++) {
			p[2 + i] = (struct pollfd){ .fd = conns[i]->fd,
						    .events = conns[i]->writing ? POLLOUT : POLLIN };
			if (conns[i]->deadline < first)
				first = conns[i]->deadline;
		}
		timeout = n ? (int)(first - now) + 1 : -1;
		if (poll(p, (nfds_t)(2 + n), n && timeout < 0 ? 0 : timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		now = mono_ms();
		/* Backwards: a finished one is replaced by the last. */
		for (size_t i = n; i-- > 0;) {
			bool more = p[2 + i].revents ? step(h, conns[i], now) : true;

			if (more && now < conns[i]->deadline)
				continue;
			drop(conns[i]);
			conns[i] = conns[--n];
		}
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			continue;
		conns[n] = calloc(1, sizeof(*conns[n]));
		if (!conns[n]) {
			close(c);
			continue;
		}
		conns[n]->fd = c;
		conns[n]->deadline = now + REQ_TIMEOUT_MS;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		drop(conns[i]);
	return NULL;
}

static int bind_addr(const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	char host[256], port[16];
	unsigned int p;
	int fd, one = 1, ret;

	if (http_split_addr(addr, host, sizeof(host), &p)) {
		snprintf(err, errlen, "--listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:9466, [::1]:9466, or none)", addr);
		return -1;
	}
	snprintf(port, sizeof(port), "%u", p);
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "--listen: '%s': %s (give a numeric address)", addr, gai_strerror(ret));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, BACKLOG)) {
		snprintf(err, errlen, "--listen %s: %s", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
}

struct http_listen *http_listen_start(const char *addr, char *err, size_t errlen)
{
	struct http_listen *h = calloc(1, sizeof(*h));

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->fd = bind_addr(addr, err, errlen);
	if (h->fd < 0) {
		free(h);
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	if (pipe2(h->stop_pipe, O_CLOEXEC) ||
	    pthread_create(&h->thread, NULL, listen_thread, h)) {
		snprintf(err, errlen, "metrics listener: %s", strerror(errno));
		close(h->fd);
		free(h);
		return NULL;
	}
	return h;
}

int http_listen_publish(struct http_listen *h, const char *text, size_t textlen,
			const char *om, size_t omlen)
{
	char *t = malloc(textlen + 1), *o = malloc(omlen + 1);

	if (!t || !o) {
		free(t);
		free(o);
		return -ENOMEM;
	}
	memcpy(t, text, textlen);
	memcpy(o, om, omlen);
	pthread_mutex_lock(&h->lock);
	free(h->text);
	free(h->om);
	h->text = t;
	h->textlen = textlen;
	h->om = o;
	h->omlen = omlen;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void http_listen_stop(struct http_listen *h)
{
	if (!h)
		return;
	if (write(h->stop_pipe[1], "x", 1) == 1)
		pthread_join(h->thread, NULL);
	close(h->stop_pipe[0]);
	close(h->stop_pipe[1]);
	close(h->fd);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h->om);
	free(h);
}
