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
#define PEER_CONNS	4	/* of them from one address: one host cannot take every slot */
#define BACKLOG		64

#define CT_TEXT	"text/plain; version=0.0.4; charset=utf-8"
#define CT_OM	"application/openmetrics-text; version=1.0.0; charset=utf-8"

/*
 * A published body, shared by every connection sending it: 64 clients
 * that never read hold one copy of the page between them, not 64. Freed
 * by whoever drops the last reference (the publisher or a connection).
 */
struct page {
	unsigned int refs;
	size_t len;
	char data[];
};

struct http_listen {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	pthread_mutex_t lock;
	struct page *text, *om;		/* under lock */
};

static struct page *page_new(const char *data, size_t len)
{
	struct page *pg = malloc(sizeof(*pg) + len);

	if (!pg)
		return NULL;
	pg->refs = 1;
	pg->len = len;
	memcpy(pg->data, data, len);
	return pg;
}

static struct page *page_get(struct page *pg)
{
	if (pg)
		__atomic_add_fetch(&pg->refs, 1, __ATOMIC_RELAXED);
	return pg;
}

static void page_put(struct page *pg)
{
	if (pg && !__atomic_sub_fetch(&pg->refs, 1, __ATOMIC_ACQ_REL))
		free(pg);
}

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
 * MAX_CONNS are read and written at once (PEER_CONNS of them from one
 * address), none waited on: a slow client costs the others nothing, and
 * holds a reference to the page, not a copy.
 */
struct conn {
	int fd;
	bool writing;
	double deadline;
	struct sockaddr_storage peer;	/* its address, port aside: PEER_CONNS */
	size_t n;		/* request bytes read */
	char hdr[256];		/* the answer: these headers, then body */
	size_t hdrlen;
	struct page *page;	/* a reference to the snapshot sent, or NULL */
	const char *body;	/* page->data or a constant text */
	size_t bodylen, sent;	/* sent: of hdr and body together */
	char req[REQ_MAX];
};

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The answer: its headers, and body (which c->page, if any, holds) unless head. */
static void respond(struct conn *c, const char *status, const char *ctype, const char *body,
		    size_t len, int head)
{
	int n = snprintf(c->hdr, sizeof(c->hdr),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, ctype, len);

	c->hdrlen = (size_t)n < sizeof(c->hdr) ? (size_t)n : sizeof(c->hdr) - 1;
	c->body = body;
	c->bodylen = head ? 0 : len;
	c->sent = 0;
}

/* A whole request head in c->req: its answer, ready to send. */
static void answer(struct http_listen *h, struct conn *c)
{
	const char *req = c->req;
	int head, om;

	head = !strncmp(req, "HEAD ", 5);
	if (strncmp(req, "GET ", 4) && !head) {
		respond(c, "405 Method Not Allowed", "text/plain", "GET only\n", 9, 0);
		return;
	}
	if (strncmp(req + (head ? 5 : 4), "/metrics", 8) ||
	    !strchr(" ?", req[(head ? 5 : 4) + 8])) {
		respond(c, "404 Not Found", "text/plain", "see /metrics\n", 13, head);
		return;
	}
	om = http_wants_openmetrics(req);
	/* A reference taken under the lock, sent without it: the loop never waits on a client. */
	pthread_mutex_lock(&h->lock);
	c->page = page_get(om ? h->om : h->text);
	pthread_mutex_unlock(&h->lock);
	if (c->page)
		respond(c, "200 OK", om ? CT_OM : CT_TEXT, c->page->data, c->page->len, head);
	else
		respond(c, "503 Service Unavailable", "text/plain", "no figures yet\n", 15, head);
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
		answer(h, c);
		c->writing = true;
		c->deadline = now + SEND_DEADLINE_MS;
	}
	while (c->sent < c->hdrlen + c->bodylen) {
		bool in_hdr = c->sent < c->hdrlen;
		const char *from = in_hdr ? c->hdr + c->sent : c->body + (c->sent - c->hdrlen);
		size_t left = in_hdr ? c->hdrlen - c->sent : c->hdrlen + c->bodylen - c->sent;

		r = send(c->fd, from, left, MSG_NOSIGNAL | MSG_DONTWAIT | (in_hdr ? MSG_MORE : 0));
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
	page_put(c->page);
	free(c);
}

/* The same host: address compared, port not. */
static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return true;
}

static void *listen_thread(void *arg)
{
	struct http_listen *h = arg;
	struct conn *conns[MAX_CONNS];
	size_t n = 0;

	for (;;) {
		struct pollfd p[2 + MAX_CONNS];
		double now = mono_ms(), first = now + 3600e3;
		struct sockaddr_storage peer;
		socklen_t peerlen;
		int c, timeout, same;

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
		peerlen = sizeof(peer);
		c = accept4(h->fd, (struct sockaddr *)&peer, &peerlen, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			continue;
		/*
		 * A host with PEER_CONNS in flight waits no slot of another's: its
		 * next connection is closed at once (idle connections renewed
		 * every 2 s from one host would otherwise keep every slot).
		 */
		same = 0;
		for (size_t i = 0; i < n; i++)
			same += same_peer(&conns[i]->peer, &peer);
		conns[n] = same < PEER_CONNS ? calloc(1, sizeof(*conns[n])) : NULL;
		if (!conns[n]) {
			close(c);
			continue;
		}
		conns[n]->fd = c;
		conns[n]->peer = peer;
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
	struct page *t = page_new(text, textlen), *o = page_new(om, omlen), *old_t, *old_o;

	if (!t || !o) {
		page_put(t);
		page_put(o);
		return -ENOMEM;
	}
	pthread_mutex_lock(&h->lock);
	old_t = h->text;
	old_o = h->om;
	h->text = t;
	h->om = o;
	pthread_mutex_unlock(&h->lock);
	/* Connections still sending the old page keep it until they are done. */
	page_put(old_t);
	page_put(old_o);
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
	page_put(h->text);
	page_put(h->om);
	free(h);
}
