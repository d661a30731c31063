/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `memattr-bpf --job ID` without root, while the node service runs: the
 * daemon (daemon_socket.c) hands the job's owner read-only descriptors of
 * the job's spool files, and this process -- the user's own -- copies them
 * into its output directory as the per-job command would have written
 * them: rank-<R>.csv inflated from the spool's rank-<R>.csv.gz (kept
 * gzip'ed with --compress), summary.csv and run_info.csv. It follows the
 * timelines as the daemon writes them, asking again every second (new
 * ranks, the latest summary), until the daemon says the job ended, or
 * --duration, or SIGINT/SIGTERM: then what was copied is flushed, exit 0.
 */
#ifndef MEMATTR_JOB_CLIENT_H
#define MEMATTR_JOB_CLIENT_H

#include <signal.h>

#include "options.h"

/* o->job through the daemon listening on sock, into outdir (checked by the caller). The exit status. */
int job_client_run(const struct options *o, const char *sock, const char *outdir, volatile sig_atomic_t *stop);

#endif
