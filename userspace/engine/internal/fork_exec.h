/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Processes joining a session and changing image: a fork record makes the
 * child (with what it inherits of its parent), an exec record makes a new
 * image of the same process, tracker_add_pid (engine.h) takes one found
 * running in /proc. Their exit is retire.h's.
 */
#ifndef MEMATTR_FORK_EXEC_H
#define MEMATTR_FORK_EXEC_H

struct tracker;
struct session;
struct ev_task;

void tracker_on_fork(struct tracker *t, struct session *s, const struct ev_task *e);
void tracker_on_exec(struct tracker *t, struct session *s, const struct ev_task *e);

#endif
