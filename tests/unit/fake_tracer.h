/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A fake of sys/bpf_loader.c for the engine's unit tests: no BPF object, no
 * root. tracer_open keeps the engine's event entry; the tests feed records
 * to it themselves (tracker_on_event, engine/internal/tracker.h). What the
 * engine asked of the kernel side is kept here for the tests to look at.
 */
#ifndef MEMATTR_FAKE_TRACER_H
#define MEMATTR_FAKE_TRACER_H

#include <stdint.h>
#include <sys/types.h>

#include "bpf_loader.h"

#define FAKE_TRACER_PIDS	64
#define FAKE_TRACER_JOBS	8
#define FAKE_TRACER_RING	512

struct fake_tracer {
	event_fn fn;
	void *ctx;
	bool open;
	/* The traced set as the engine left it: pid, job slot, flags. */
	struct {
		pid_t pid;
		uint32_t job, flags;
	} traced[FAKE_TRACER_PIDS];
	unsigned int ntraced;
	unsigned int removes;		/* tracer_remove_process calls */
	uint64_t stats[STAT_NR];	/* what tracer_stats reports */
	/* The kernel's heap site table (--heap) as tracer_heap_sites walks it. */
	struct {
		pid_t tgid;
		uint64_t site;
		struct site_stats st;
	} sites[8];
	unsigned int nsites;
	unsigned int site_walks;	/* tracer_heap_sites calls */
	uint64_t job_drops[FAKE_TRACER_JOBS];	/* what tracer_job_drops reports, by job slot */
	/*
	 * The ring buffer as tracer_drain reads it: queued records (copies),
	 * at most per_drain of them a drain (0: all), the drain then cut
	 * (tracer_backlog) if any is left.
	 */
	unsigned char *ring[FAKE_TRACER_RING];
	size_t ring_size[FAKE_TRACER_RING];
	unsigned int nring, ring_read, per_drain;
	bool ring_cut;
	/*
	 * tracer_step_epoch calls (a read of a process's /proc figures
	 * begins, or ends), and what a test does at each: the process
	 * moving while the engine reads it.
	 */
	unsigned int steps;
	/* The kernel's notes of OOM kills (oom_marks), as tracer_take_oom_mark reads them. */
	struct {
		pid_t pid;
		uint64_t boot_ns;
	} oom_marks[4];
	unsigned int noom_marks;
	void (*on_step)(void *ctx, pid_t tgid, unsigned int step);
	void *step_ctx;
};

extern struct fake_tracer fake_tracer;

void fake_tracer_reset(void);
/* The flags the engine gave pid in the kernel's traced set; -1: not there. */
int64_t fake_tracer_flags(pid_t pid);
/* A record into the fake ring (copied), read by the next tracer_drain calls. */
void fake_tracer_queue(const void *rec, size_t size);

#endif
