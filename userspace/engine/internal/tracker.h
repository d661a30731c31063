/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tracing engine's insides: one BPF object, the sessions (one per job)
 * it feeds, the event stream routed to them, and the sampling loop. The
 * engine's own files include this (it is on engine/'s include path only);
 * the commands see engine.h.
 */
#ifndef MEMATTR_TRACKER_H
#define MEMATTR_TRACKER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf_loader.h"
#include "discovery.h"
#include "engine.h"
#include "node_name.h"
#include "options.h"
#include "probe_hold.h"
#include "probes.h"
#include "process.h"
#include "session.h"
#include "spec.h"

#define TRACKER_ENDED_RING	256
/* Records held back in all, the tool's memory for them (held.h): a quarter of the default ring. */
#define TRACKER_HELD_BYTES	(4u << 20)

struct tracker {
	const struct options *opt;
	struct bpf_tracer bpf;
	struct probes probes;		/* --mpi-calls, --heap; symbol tables in every mode */
	struct mpi_catalog mpi_names;	/* the specs' MPI functions, numbered */
	bool probing;			/* probes in place (false once tracing ends) */
	bool flush_warned;		/* tracer_flush_runs failed once: said so */
	struct probe_hold hold;		/* the node-wide programs (opt->probes_on_demand) */
	const struct spec_set *specs;
	bool *spec_mapped;		/* per spec rule: a traced process mapped it (--spec files) */
	struct session *sessions;
	uint32_t next_id;
	const char *cmdline;		/* for run_info.csv */
	const struct tracker_hooks *hooks;	/* NULL: run until the sessions end */

	pid_t self;
	double start_mono;		/* CLOCK_MONOTONIC at attach */
	double start_realtime;		/* CLOCK_REALTIME then */
	char node[NODE_NAME_MAX];	/* this node's name, for run_info.csv */
	const char *own_job;		/* the Slurm job the tool runs in, "" if none */
	uint64_t start_boot_ns;		/* CLOCK_BOOTTIME then: the kernel's event clock */
	double pss_period;		/* seconds between smaps reads of one process */
	double smaps_cost;		/* running mean of one smaps read, seconds */

	/*
	 * Processes retired lately: the kernel reports an exit before the
	 * process is quite gone, so a rescan may still find it in /proc.
	 */
	struct ended_proc {
		pid_t pid;
		uint64_t start_ticks;	/* 0: not known */
		double when;		/* tracker time it was retired */
		bool fork_pending;	/* found in /proc, gone before its fork event came */
	} ended[TRACKER_ENDED_RING];
	unsigned int nended;

	/* What each session's attach inferred (sink_inferred), by session id. */
	struct tracker_inferred {
		uint32_t session;
		struct sink_inferred sum;
	} *inferred;
	size_t ninferred;

	uint64_t events;		/* every record, routed or not */
	uint64_t newest_record_ns;	/* the newest record's ts_ns so far (boot clock) */
	uint64_t unknown_pid_events;
	uint64_t ended_events;		/* records of processes or images no output showed, or
					 * after a process's last row: they could change no figure */
	size_t held_bytes;		/* held in all, during a drain */
	uint64_t map_full;		/* processes user space could not add: traced map full */
	uint64_t output_errors;		/* files of ended sessions not written whole */
	uint64_t kstats[STAT_NR];	/* kernel-side counters, refreshed each sample */
	/*
	 * Until when (tracker time) the drains of this sample round may read
	 * the ring buffer, 0: until it is empty. A job that makes records as
	 * fast as they are read would otherwise hold every job's samples.
	 */
	double drain_until;
	/* Until when the round's catch-ups may read it, 0: each its own time (held_records_round_begins). */
	double catch_up_until;
};

/*
 * The test seam (tests/unit/test_engine.c): the engine's event entry, as
 * the ring buffer calls it for each record, and the end of a drain (held
 * records released, exec'd processes identified).
 */
int tracker_on_event(void *ctx, void *data, size_t size);
void tracker_end_drain(struct tracker *t);

/*
 * The node-wide programs (tracker_probes.c): attached before a process is
 * added (0, or -EIO when the kernel refused: it is not traced), and
 * detached at the loop's rounds once none is traced for the hold.
 */
int tracker_probes_need(struct tracker *t, struct session *s);
void tracker_probes_tick(struct tracker *t, double now);

#endif
