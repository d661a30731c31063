// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_batch.h"

void probe_batch_add(struct probe_batch *b, const struct probe_target *tg, uint64_t off)
{
	bool with_return = tg->mpi || tg->cookie != HEAP_FREE;

	if (b->n[0] >= PROBES_MAX_PER_FILE)
		return;
	b->mpi = tg->mpi;
	b->off[0][b->n[0]] = off;
	b->cookie[0][b->n[0]++] = tg->cookie;
	if (!with_return)
		return;
	/*
	 * The return probe sits with the entry probe: the offsets the specs
	 * allow come before any push, so the return address is still at the
	 * stack pointer there, which is all a return probe needs.
	 */
	b->off[1][b->n[1]] = off;
	b->cookie[1][b->n[1]++] = tg->cookie;
}

void probe_batch_add_once(struct probe_batch *b, const struct probe_target *tg, uint64_t off)
{
	for (size_t k = 0; k < b->n[0]; k++)
		if (b->off[0][k] == off)
			return;
	probe_batch_add(b, tg, off);
}

static void keep_link(struct probes *pr, struct proc *p, int fd, size_t nprobes)
{
	int *v;

	if (fd < 0) {
		pr->failed += nprobes;
		return;
	}
	v = realloc(p->link_fds, (p->nlinks + 1) * sizeof(*v));
	if (!v) {
		close(fd);
		pr->failed += nprobes;
		return;
	}
	p->link_fds = v;
	p->link_fds[p->nlinks++] = fd;
	pr->attached += nprobes;
}

/*
 * One link for all returns, then one for all entries. Returns first: a
 * call that enters between the two attaches must not be seen entering
 * without its return, or the thread's nesting depth would stay up for
 * good; a return without its entry is ignored by the programs.
 */
void probe_batch_attach(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
			const struct probe_batch *b, const char *path)
{
	enum uprobe_prog enter = b->mpi ? UPROBE_MPI_ENTER : UPROBE_HEAP_ENTER;
	enum uprobe_prog leave = b->mpi ? UPROBE_MPI_EXIT : UPROBE_HEAP_EXIT;
	int fd;

	if (!b->n[0])
		return;
	if (b->n[1]) {
		fd = tracer_attach_uprobes(bpf, leave, p->pid, path, b->off[1], b->cookie[1], b->n[1]);
		keep_link(pr, p, fd, b->n[1]);
		if (fd < 0) {
			if (pr->verbose)
				fprintf(stderr, "memattr-bpf: cannot probe %s (pid %d): %s\n", path,
					p->pid, strerror(-fd));
			pr->failed += b->n[0];
			return;
		}
	}
	fd = tracer_attach_uprobes(bpf, enter, p->pid, path, b->off[0], b->cookie[0], b->n[0]);
	if (fd < 0 && pr->verbose)
		fprintf(stderr, "memattr-bpf: cannot probe %s (pid %d): %s\n", path, p->pid,
			strerror(-fd));
	keep_link(pr, p, fd, b->n[0]);
	if (fd < 0)
		return;
	if (b->mpi)
		p->mpi_probed = true;
	else
		p->heap_probed = true;
}
