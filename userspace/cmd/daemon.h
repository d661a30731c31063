/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `memattr-bpf daemon`: the node service (cmd/daemon.c). */
#ifndef MEMATTR_DAEMON_H
#define MEMATTR_DAEMON_H

/* argv[0] is "daemon". Returns the exit status. */
int daemon_main(int argc, char **argv);

#endif
