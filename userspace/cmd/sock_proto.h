/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user socket's protocol (cmd/daemon_socket.c serves it, cmd/job_client.c
 * asks): one request line, reply lines, each reply line one message.
 *
 *   client: "MEMATTR/1 JOB <id>\n" | "MEMATTR/1 JOB <id> UID <uid>\n"
 *   daemon: "ERR <code> <text>\n"                      then closes; or
 *           "JOB running\n" | "JOB ended\n"
 *           "FILE <name>\n" (one read-only descriptor attached, SCM_RIGHTS)
 *           ...
 *           "END\n"
 *
 * <code> is denied (another user's job), nojob (none of that ID traced),
 * ambiguous (root asked for an ID several users' jobs carry, without
 * naming whose: UID), bad (a malformed request, another version), or busy
 * (the asking user's share of the socket is taken, or no server was free
 * within 10 s: try again).
 * A job is its owner's: an ID the batch system does not vouch for is
 * each claiming user's own job (see discovery.h). An ordinary user's
 * request is for their own job of the ID whatever UID says. A job ID is 1 to
 * JSP_JOB_MAX bytes of printable ASCII without spaces. The version is in
 * the request: a later daemon can answer version 1 clients as they expect.
 * Pure: unit-tested.
 */
#ifndef MEMATTR_SOCK_PROTO_H
#define MEMATTR_SOCK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define JSP_VERSION	"MEMATTR/1"
#define JSP_ANY_UID	((uid_t)-1)	/* the request names no uid */
#define JSP_JOB_MAX	255
#define JSP_LINE_MAX	512	/* longest line either side sends, '\n' included */
#define JSP_NAME_MAX	64	/* longest file name served */

enum jsp_kind { JSP_ERR, JSP_JOB, JSP_FILE, JSP_END };

struct jsp_reply {
	enum jsp_kind kind;
	bool ended;				/* JSP_JOB */
	char code[16];				/* JSP_ERR */
	char text[JSP_LINE_MAX];		/* JSP_ERR: the message; JSP_FILE: the name */
};

/* The request line for job (of uid, JSP_ANY_UID: not named) into buf. Its length, or -1 when job is not a valid ID. */
int jsp_format_request(char *buf, size_t len, const char *job, uid_t uid);

/*
 * A request line (without or with its '\n'): the job ID into job, the uid
 * named into *uid (JSP_ANY_UID: none). 0, or -1 with the reply to send (an
 * "ERR bad ..." line) in err.
 */
int jsp_parse_request(const char *line, char *job, size_t joblen, uid_t *uid, char *err,
		      size_t errlen);

/* A reply line (without or with its '\n'). 0, or -1 when malformed. */
int jsp_parse_reply(const char *line, struct jsp_reply *r);

/* The refusals, worded once for the daemon to send and the client to print. */
int jsp_format_denied(char *buf, size_t len, const char *job);
int jsp_format_nojob(char *buf, size_t len, const char *job);
int jsp_format_ambiguous(char *buf, size_t len, const char *job);
/* "ERR busy <why>": the user's share of the socket is taken (sock_limit.h), or no server was free. */
int jsp_format_busy(char *buf, size_t len, const char *why);

/*
 * A file of a job's spool the daemon serves and the client accepts:
 * summary.csv, run_info.csv, mpi_calls.csv, alloc_stacks.csv,
 * rank-<R>.csv.gz, pid-<P>.csv.gz. Anything else (temporary files, a name
 * with '/') is neither sent nor written.
 */
bool jsp_file_served(const char *name);

/*
 * The files the daemon rewrites whole (by rename): their index among them,
 * 0..JSP_NWHOLE-1, or -1 for a timeline (appended to) or a file not served.
 */
#define JSP_NWHOLE	4
int jsp_whole_file(const char *name);

/*
 * The name the client writes a served file as: the timelines inflated
 * (rank-0.csv.gz -> rank-0.csv) unless compress. -1 when not served.
 */
int jsp_local_name(const char *name, bool compress, char *out, size_t outlen);

#endif
