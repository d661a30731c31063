// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probe_hold.h"

void probe_hold_init(struct probe_hold *h, double hold_s)
{
	*h = (struct probe_hold){ .hold_s = hold_s, .idle_since = -1 };
}

enum probe_act probe_hold_step(struct probe_hold *h, size_t nprocs, double now)
{
	if (nprocs) {
		h->idle_since = -1;
		return h->attached ? PROBE_KEEP : PROBE_ATTACH;
	}
	if (!h->attached)
		return PROBE_KEEP;
	/* The hold counts from the first step that found nothing traced. */
	if (h->idle_since < 0)
		h->idle_since = now;
	if (h->hold_s < 0 || now - h->idle_since < h->hold_s)
		return PROBE_KEEP;
	return PROBE_DETACH;
}

void probe_hold_done(struct probe_hold *h, enum probe_act act, bool ok)
{
	if (act == PROBE_ATTACH && ok) {
		h->attached = true;
		h->attaches++;
	} else if (act == PROBE_DETACH) {
		/* A detach cannot half fail: the links are destroyed either way. */
		h->attached = false;
		h->idle_since = -1;
	}
}
