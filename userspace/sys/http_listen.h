/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small HTTP/1.x listener for the metrics endpoint. It runs in its own
 * thread and only ever reads the last published snapshot (under a mutex):
 * a slow or hostile client can never stall the event loop, which publishes
 * a new snapshot after each render. One request per connection, GET or
 * HEAD, answers with Connection: close. Up to 64 clients are served at
 * once without blocking on any, at most 4 from one address (more from it
 * are closed at once); each gets 2 s to send its whole request and 10 s
 * to take the whole answer, then it is dropped: a client that sends a
 * byte a second, or never reads, delays no other scrape. Clients share
 * one reference-counted copy of the page, however many never read it.
 * Not libmicrohttpd: its only timeout is one of inactivity, which a
 * client trickling a byte a second never reaches (docs/operations.md,
 * "Metrics").
 */
#ifndef MEMATTR_HTTP_LISTEN_H
#define MEMATTR_HTTP_LISTEN_H

#include <stddef.h>

struct http_listen;

/* Bind addr ("127.0.0.1:9466", "[::1]:9466") and start serving. NULL: err says why. */
struct http_listen *http_listen_start(const char *addr, char *err, size_t errlen);

/*
 * The bodies to serve from now on: text (Prometheus 0.0.4) and om
 * (OpenMetrics 1.0, for a scraper whose Accept header asks for it).
 */
int http_listen_publish(struct http_listen *h, const char *text, size_t textlen,
			const char *om, size_t omlen);

void http_listen_stop(struct http_listen *h);

/* "ADDR:PORT" -> host and port; 0, or -1 when malformed. Pure, unit-tested. */
int http_split_addr(const char *addr, char *host, size_t hostlen, unsigned int *port);

/* Whether an HTTP request (its headers) asks for OpenMetrics. Pure, unit-tested. */
int http_wants_openmetrics(const char *request);

#endif
