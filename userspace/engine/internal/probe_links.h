/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The probes' links once placed: a process's (struct proc's link_fds) and
 * the warm set's (probe_warm.h), closed or handed over to be closed all
 * at once.
 */
#ifndef MEMATTR_PROBE_LINKS_H
#define MEMATTR_PROBE_LINKS_H

#include <stddef.h>

#include "probes.h"
#include "process.h"

/*
 * Hand the links of p (of the warm set) over to a growing list the caller
 * closes, all at once with close_many: detaching one after the other costs
 * a grace period each. -ENOMEM: nothing moved, close them the usual way.
 */
int probes_move_links(struct proc *p, int **fds, size_t *n);
int probes_move_warm(struct probes *pr, int **fds, size_t *n);

/* Remove p's probes (it exited, or tracing ends). */
void probes_detach(struct proc *p);
/* Close the warm set's links. */
void probes_close_warm(struct probes *pr);

#endif
