/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The job as the sinks see it (output/sink.h): one session's identity,
 * clock and counters, with the node-wide counters of the one BPF object.
 */
#ifndef MEMATTR_JOB_VIEW_H
#define MEMATTR_JOB_VIEW_H

struct tracker;
struct session;
struct sink_job;

/* The kernel's counters read again: node-wide, and each session's drops. */
void tracker_refresh_kstats(struct tracker *t);

/* s sampled at now (tracker time): the gap since its last sample kept. */
void tracker_note_sample(struct tracker *t, struct session *s, double now);

/* *j filled for s now; its strings live as long as the session. */
void tracker_job_view(struct tracker *t, const struct session *s, struct sink_job *j);

#endif
