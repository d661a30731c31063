/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node service's user socket: an ordinary user's `memattr-bpf --job ID`
 * asks it for the files of its own job (protocol: sock_proto.h). Threads
 * serve clients from a table of jobs the event loop keeps up
 * to date (job ID, spool directory, owner): the loop never waits on a
 * client. The caller's uid (SO_PEERCRED) must be the job's owner's or
 * root's; the answer is read-only descriptors of the job's spool files,
 * which the client copies into its own directory as itself.
 *
 * Bounded: requests are read from up to 32 connections at once without
 * blocking (one that connects and says nothing delays no one); up to 8
 * answers are sent at once, each by its own thread, so a client that reads
 * its answer slowly delays only itself; 64 more connections wait in the
 * backlog. A request is at most JSP_LINE_MAX bytes, sent within 2 s; a
 * whole request waits at most 10 s for a free server; the whole answer
 * must be taken within 5 s. Per user (sock_limit.h): at most 4 of those
 * connections (a fifth replaces the user's oldest silent one; with 4
 * whole requests waiting it is refused, "ERR busy") and 2 of the answers;
 * a free server takes the request waiting longest among users under that.
 */
#ifndef MEMATTR_DAEMON_SOCKET_H
#define MEMATTR_DAEMON_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

struct daemon_socket;

/*
 * Listen on path (mode 0666: every user may ask, the daemon decides). Its
 * directory is created 0755 if missing and must be root's, not writable by
 * others and not a symlink; a stale socket there is replaced, one another
 * daemon serves is not. NULL: err says why.
 */
struct daemon_socket *daemon_socket_start(const char *path, char *err, size_t errlen);

/* Job id, of user uid, is written in dir (its spool directory) from now on. */
void daemon_socket_job_started(struct daemon_socket *ds, const char *id, const char *dir, uid_t uid);

/* The job writing dir ended: its files are final (served for a while yet). */
void daemon_socket_job_ended(struct daemon_socket *ds, const char *dir);

/* Stop serving, remove the socket (if still ours). NULL is fine. */
void daemon_socket_stop(struct daemon_socket *ds);

#endif
