/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `memattr-bpf -- CMD`: start CMD held at a gate, so it is traced from its
 * first instruction, then let it run as the user who ran sudo.
 */
#ifndef MEMATTR_LAUNCH_H
#define MEMATTR_LAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int gate_fd;	/* write end: one byte opens the gate, closing it aborts */
};

/*
 * Fork CMD held at the gate. It gets SIGPIPE's disposition as the tool's
 * caller left it (CALLER_SIGPIPE), not the tool's own: a command run under
 * the tool behaves as it does without it (`... | head` still ends it).
 */
int launch_prepare(struct launch *l, char **cmd, const struct sigaction *caller_sigpipe,
		   char *err, size_t errlen);
void launch_go(struct launch *l);
void launch_abort(struct launch *l);

/* Reap the child if it exited; its status through *status. 1 when reaped. */
int launch_reap(struct launch *l, int *status);

/*
 * The tool's exit status once its command ended and every file is written:
 * the command's own (128 + N for signal N), as time(1) and strace give it,
 * so a batch script still sees its job fail. One line says so when not 0.
 */
int launch_exit_code(const char *cmd, int status);

/*
 * This process becomes the user who ran sudo (SUDO_UID, SUDO_GID: their
 * groups, gid, uid, for good); nothing when not under sudo. 0, or -1.
 */
int launch_drop_to_sudo_user(void);

#endif
