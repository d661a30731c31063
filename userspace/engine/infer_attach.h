/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engine's side of the inference at attach (core/infer_read.h): run it
 * for a process that was running before the tool came (the per-job command
 * and the node service alike: both attach through tracker_add_pid), and
 * sum what it found per session for run_info.csv and the summaries.
 */
#ifndef MEMATTR_INFER_ATTACH_H
#define MEMATTR_INFER_ATTACH_H

#include "sink.h"

struct tracker;
struct session;
struct proc;

/* Infer who holds p's memory, within --infer-budget; counted in s's totals. */
void infer_attach(struct tracker *t, struct session *s, struct proc *p);

/* s's totals into out (left as it is when nothing was inferred). */
void infer_attach_counters(const struct tracker *t, const struct session *s,
			   struct sink_inferred *out);

/* s ended: its totals go. */
void infer_attach_forget(struct tracker *t, const struct session *s);
void infer_attach_free(struct tracker *t);

#endif
