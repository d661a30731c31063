// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_links.h"

void probes_close_warm(struct probes *pr)
{
	for (size_t i = 0; i < pr->nwarm_fds; i++)
		close(pr->warm_fds[i]);
	pr->nwarm_fds = 0;
}

/* Append k descriptors to a growing list. -ENOMEM leaves the list as it was. */
static int append_fds(int **fds, size_t *n, const int *add, size_t k)
{
	int *v;

	if (!k)
		return 0;
	v = realloc(*fds, (*n + k) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v + *n, add, k * sizeof(*v));
	*fds = v;
	*n += k;
	return 0;
}

int probes_move_links(struct proc *p, int **fds, size_t *n)
{
	if (append_fds(fds, n, p->link_fds, p->nlinks))
		return -ENOMEM;
	free(p->link_fds);
	p->link_fds = NULL;
	p->nlinks = 0;
	return 0;
}

int probes_move_warm(struct probes *pr, int **fds, size_t *n)
{
	if (append_fds(fds, n, pr->warm_fds, pr->nwarm_fds))
		return -ENOMEM;
	pr->nwarm_fds = 0;
	return 0;
}

void probes_detach(struct proc *p)
{
	for (size_t i = 0; i < p->nlinks; i++)
		close(p->link_fds[i]);
	free(p->link_fds);
	p->link_fds = NULL;
	p->nlinks = 0;
}
