/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Files of the opt-in modes, rewritten atomically with summary.csv:
 *
 *   mpi_calls.csv (--mpi-calls), per process and MPI function:
 *     rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,
 *     peak_bytes,first_growth_s,last_growth_s
 *   heap_sites.csv (--heap), per process and malloc-family call site:
 *     rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes
 *     (site: "file:function+0xOFF", or the address when no symbol covers it)
 */
#ifndef MEMATTR_MODES_OUT_H
#define MEMATTR_MODES_OUT_H

struct tracker;

#define MPI_CALLS_HEADER "rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,peak_bytes,first_growth_s,last_growth_s"
#define HEAP_SITES_HEADER "rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes"

/* Write the files of the enabled modes from what the processes hold. */
int modes_write_csv(struct tracker *t);

#endif
