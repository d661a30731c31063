/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A --spec file the user wrote for this job that names a library no traced
 * process mapped is probably a typo: each process's libraries are checked
 * before it is freed, the warning comes at the end.
 */
#ifndef MEMATTR_USER_SPECS_H
#define MEMATTR_USER_SPECS_H

struct tracker;
struct proc;

/* The user's library rules p's mappings match, noted. */
void user_specs_note(struct tracker *t, const struct proc *p);

/* A warning on stderr for each of the user's library rules no process matched. */
void user_specs_warn(const struct tracker *t);

#endif
