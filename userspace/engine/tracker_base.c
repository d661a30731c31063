// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tracker.h"
#include "tracker_base.h"

double tracker_clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double tracker_mono_s(void)
{
	return tracker_clock_s(CLOCK_MONOTONIC);
}

double tracker_now(const struct tracker *t)
{
	return tracker_mono_s() - t->start_mono;
}

double tracker_boot_time(const struct tracker *t, uint64_t boot_ns)
{
	return ((double)boot_ns - (double)t->start_boot_ns) / 1e9;
}

double tracker_event_time(const struct tracker *t, const struct ev_header *h)
{
	return tracker_boot_time(t, h->ts_ns);
}

struct proc *tracker_find_proc(struct tracker *t, pid_t pid, struct session **in)
{
	for (struct session *s = t->sessions; s; s = s->next) {
		struct proc *p = session_find(s, pid);

		if (p) {
			if (in)
				*in = s;
			return p;
		}
	}
	return NULL;
}
