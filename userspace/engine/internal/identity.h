/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who a traced process is: its name, rank and step (discovery.h), whether
 * it is a launcher, and the flags the kernel side keeps for it.
 */
#ifndef MEMATTR_IDENTITY_H
#define MEMATTR_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracker;
struct session;
struct proc;

/*
 * Who p is: its rank (unless another live process of the job already
 * holds that rank: a rank's own children inherit its environment) and
 * whether it is a launcher. Read from /proc.
 */
void identity_read(struct session *s, struct proc *p);

/* An exec'd process that outlived the drain of its exec: who it is now, told to the kernel. */
void identity_late(struct tracker *t, struct session *s, struct proc *p);

/* The kernel side's flags for p (TRACED_*). */
uint32_t identity_flags(const struct proc *p);

/* The kernel's flags for p, where its identity changed them. */
void identity_update_kernel(struct tracker *t, struct session *s, struct proc *p);

/*
 * Still our own image: the command we launch, waiting at its gate to exec.
 * Its identity (a launcher such as mpirun.mpich, or a rank) comes with its
 * exec; named before that, a launcher got a pid-P.csv of one sample.
 */
bool identity_own_image(pid_t pid);

#endif
