// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <sys/mman.h>

#include "apply.h"
#include "probe_process.h"
#include "reads.h"
#include "tracker.h"
#include "tracker_base.h"

/*
 * The loader mapped a library's code. A process waiting for its probes gets
 * them now rather than at the next sample: MPI_Init may be only
 * milliseconds away.
 */
static bool maps_new_code(const struct ev_syscall *e)
{
	return e->nr == NR_MMAP && e->ret > 0 && (e->args[2] & PROT_EXEC) && !(e->args[3] & MAP_ANONYMOUS);
}

void apply_record(struct tracker *t, struct session *s, struct proc *p, const void *data,
		  size_t size)
{
	const struct ev_header *h = data;

	if (!p->account)
		return;
	switch (h->type) {
	case EV_RSS:
		if (size >= sizeof(struct ev_rss))
			proc_apply_rss(p, &s->cls, data, tracker_event_time(t, h));
		break;
	case EV_RUN:
		if (size >= sizeof(struct ev_run))
			proc_apply_run(p, &s->cls, data, tracker_event_time(t, h));
		break;
	case EV_SYSCALL:
		if (size < EV_SYSCALL_NOSTACK_SIZE)
			break;
		proc_apply_syscall(p, &s->cls, data, tracker_event_time(t, h));
		if (!maps_new_code(data) || !t->probing)
			break;
		/* Its probes come with a read: now if it waits for them, else at the next sample. */
		if (probes_waiting(&t->probes, p))
			reads_mappings(t, s, p);
		else
			p->needs_sync = true;
		break;
	}
}
