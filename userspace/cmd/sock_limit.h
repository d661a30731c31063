/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-user shares of the user socket (cmd/daemon_socket.c; issue 32, after
 * finding 7): one user must not hold every connection slot or every answer
 * thread, so that another user is refused or kept waiting. The server keeps its table of connections whose request is
 * still coming or waiting for a thread; these rules decide, from a view of
 * that table (uid, whether the request is whole, since when):
 *
 *  - a new connection of a user who already has per_uid of them in the
 *    table takes the place of that user's oldest one still saying nothing
 *    (an idle connection costs its owner, nobody else); when all of them
 *    are whole requests waiting for a thread, the new one is refused
 *    ("ERR busy");
 *  - a free thread goes to the request waiting longest among users with
 *    fewer than per_uid answers being sent: one user's slow readers hold
 *    at most per_uid threads.
 *
 * Pure: no I/O, no locks (the caller holds its own); unit-tested
 * (tests/unit/test_sock_limit.c).
 */
#ifndef MEMATTR_SOCK_LIMIT_H
#define MEMATTR_SOCK_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One connection of the table, as the rules see it. */
struct sl_conn {
	uid_t uid;
	bool ready;		/* its whole request is in: it waits for a thread */
	double since;		/* accepted (idle), or complete (ready): monotonic seconds */
};

enum sl_admit {
	SL_ADMIT,		/* room for it */
	SL_EVICT,		/* in place of *victim, its user's oldest idle connection */
	SL_REFUSE,		/* its user has per_uid whole requests waiting already */
};

enum sl_admit sl_admit(const struct sl_conn *c, size_t n, uid_t uid, size_t per_uid, size_t *victim);

/* Answers being sent, per user: at most SL_MAX_USERS users at once. */
#define SL_MAX_USERS	64
struct sl_serving {
	size_t n;
	struct {
		uid_t uid;
		unsigned int count;
	} e[SL_MAX_USERS];
};

unsigned int sl_serving_of(const struct sl_serving *s, uid_t uid);
/* One more answer of uid under way; -1 when SL_MAX_USERS users have one already. */
int sl_serving_add(struct sl_serving *s, uid_t uid);
/* One answer of uid done. */
void sl_serving_done(struct sl_serving *s, uid_t uid);

/*
 * The ready request a free thread takes: the one waiting longest whose user
 * has fewer than per_uid answers under way. -1: none may go now.
 */
long sl_pick(const struct sl_conn *c, size_t n, const struct sl_serving *s, unsigned int per_uid);

#endif
