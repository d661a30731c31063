// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include "http_listen.h"
#include "num_arg.h"

#define REQ_MAX		8192
#define REQ_TIMEOUT_MS	2000

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

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, const char *status, const char *ctype, const char *body, size_t len,
		    int head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, ctype, len);

	write_all(fd, hdr, (size_t)n);
	if (!head)
		write_all(fd, body, len);
}

/* Read the request head within the time limit; 0 when complete. */
static int read_request(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, REQ_TIMEOUT_MS) <= 0)
			return -1;
		r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return 0;
	}
	return -1;
}

static void serve(struct http_listen *h, int fd)
{
	char req[REQ_MAX], *body = NULL;
	const char *ctype;
	size_t len = 0;
	int head, om;

	if (read_request(fd, req, sizeof(req)))
		return;
	head = !strncmp(req, "HEAD ", 5);
	if (strncmp(req, "GET ", 4) && !head) {
		respond(fd, "405 Method Not Allowed", "text/plain", "GET only\n", 9, 0);
		return;
	}
	if (strncmp(req + (head ? 5 : 4), "/metrics", 8) ||
	    !strchr(" ?", req[(head ? 5 : 4) + 8])) {
		respond(fd, "404 Not Found", "text/plain", "see /metrics\n", 13, head);
		return;
	}
	om = http_wants_openmetrics(req);
	ctype = om ? CT_OM : CT_TEXT;
	/* Copy out under the lock, send without it: the loop never waits on a client. */
	pthread_mutex_lock(&h->lock);
	if (om ? h->om : h->text) {
		len = om ? h->omlen : h->textlen;
		body = malloc(len ? len : 1);
		if (body)
			memcpy(body, om ? h->om : h->text, len);
	}
	pthread_mutex_unlock(&h->lock);
	if (!body) {
		respond(fd, "503 Service Unavailable", "text/plain", "no figures yet\n", 15, head);
		return;
	}
	respond(fd, "200 OK", ctype, body, len, head);
	free(body);
}

static void *listen_thread(void *arg)
{
	struct http_listen *h = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = h->fd, .events = POLLIN },
			{ .fd = h->stop_pipe[0], .events = POLLIN },
		};
		int c;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve(h, c);
		close(c);
	}
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
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
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
