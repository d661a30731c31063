// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "identity.h"
#include "procfs.h"
#include "tracker.h"

static bool rank_taken(const struct session *s, const struct proc *self, int rank)
{
	for (const struct proc *p = s->procs.first; p; p = p->next)
		if (p != self && p->rank == rank)
			return true;
	return false;
}

void identity_read(struct session *s, struct proc *p)
{
	struct proc_stat st;
	int rank;

	p->unidentified = false;
	if (procfs_read_stat(p->pid, &st) == 0)
		memcpy(p->comm, st.comm, sizeof(p->comm));
	p->account = !job_is_launcher(s->cls.specs, p->comm);
	/*
	 * Once its figures went out, the identity stays. A rank's command is
	 * never a rank (its step is its rank's, from the fork).
	 */
	if (p->named || p->under_rank)
		return;
	job_step_of(p->pid, p->step, sizeof(p->step));
	/*
	 * A batch script is its step's one task (SLURM_PROCID 0), no MPI rank:
	 * taken for rank 0 it would hold that rank from the ranks its mpirun
	 * starts, once sampled before it exec'd mpirun, as every script that
	 * does anything first is.
	 */
	if (job_rank_of(s->cls.specs, p->pid, strcmp(p->step, "batch") != 0, &rank))
		return;
	p->rank = rank >= 0 && !rank_taken(s, p, rank) ? rank : -1;
}

bool identity_own_image(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return !stat(path, &a) && !stat("/proc/self/exe", &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A launcher is no rank to the kernel, whatever rank it held before its exec: its children are not a rank's commands. */
uint32_t identity_flags(const struct proc *p)
{
	return TRACED_FOLLOW | (p->account ? TRACED_ACCOUNT : 0) |
	       (p->rank >= 0 && p->account ? TRACED_RANK : 0) | (p->under_rank ? TRACED_UNDER_RANK : 0);
}

void identity_update_kernel(struct tracker *t, struct session *s, struct proc *p)
{
	uint32_t flags = identity_flags(p);

	if (flags == p->kernel_flags)
		return;
	if (!tracer_add_process(&t->bpf, p->pid, s->id, flags))
		p->kernel_flags = flags;
}

void identity_late(struct tracker *t, struct session *s, struct proc *p)
{
	if (!p->unidentified)
		return;
	/* A rank's command: its name came with the exec record, and it is no rank. */
	if (p->under_rank)
		p->unidentified = false;
	else
		identity_read(s, p);
	identity_update_kernel(t, s, p);
}
