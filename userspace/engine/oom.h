/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * OOM post-mortems: what the engine keeps of each process for one (its
 * memory cgroup, samples for the trend) and the record made when the
 * kernel chooses it for an OOM kill (EV_OOM).
 */
#ifndef MEMATTR_OOM_H
#define MEMATTR_OOM_H

#include "process.h"
#include "sink.h"

struct session;

/* p was sampled at job time now: its memory cgroup (once) and the trend's samples. */
void oom_note_sample(struct proc *p, double now);

/*
 * The record of p's kill at job time `time`: its figures at its last
 * sample, their growth before it, the job's, and the limit under root
 * ("" on a live system: memcg.h).
 */
void oom_fill(const struct session *s, const struct proc *p, double time, const char *root,
	      struct sink_oom *o);

/* Largest rss first; past SINK_OOM_COMPS, the smallest fold into "other". Returns the count kept. */
unsigned int oom_fold(struct sink_oom_comp *c, unsigned int n);

#endif
