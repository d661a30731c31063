/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The names of the output files and of their columns, defined once: the
 * writers (output/) and the report reader (report/) both spell them from
 * here, so a renamed column cannot leave one of them behind. What each
 * means is described once, in memattr-bpf-output(5)
 * (docs/man/memattr-bpf-output.5): `make man-check` fails on a name here
 * that page does not describe (tools/check-output-columns.py).
 */
#ifndef MEMATTR_COLUMNS_H
#define MEMATTR_COLUMNS_H

/* Files of an output directory. */
#define FILE_SUMMARY	"summary.csv"
#define FILE_RUN_INFO	"run_info.csv"
#define FILE_MPI_CALLS	"mpi_calls.csv"
#define FILE_HEAP_SITES	"heap_sites.csv"
#define FILE_HEAP_SITES_PEAK	"heap_sites_peak.csv"
#define FILE_ALLOC_STACKS	"alloc_stacks.csv"

/* rank-<R>.csv / pid-<P>.csv: one row per sample per component. */
#define COL_TIME	"time_s"
#define COL_RANK	"rank"
#define COL_PID		"pid"
#define COL_COMPONENT	"component"
#define COL_RSS		"rss_bytes"
#define COL_PSS		"pss_bytes"
#define CSV_HEADER	COL_TIME "," COL_RANK "," COL_PID "," COL_COMPONENT "," COL_RSS "," COL_PSS

/* summary.csv: per process and component. */
#define COL_PEAK_RSS		"peak_rss_bytes"
#define COL_PEAK_RSS_TIME	"peak_rss_time_s"
#define COL_PEAK_PSS		"peak_pss_bytes"
#define COL_PEAK_PSS_TIME	"peak_pss_time_s"
#define COL_FINAL_RSS		"final_rss_bytes"
#define COL_FINAL_PSS		"final_pss_bytes"
/* Empty but for a process the OOM killer chose: when, and each component's growth before it. */
#define COL_OOM_TIME		"oom_kill_time_s"
#define COL_OOM_GROWTH		"oom_growth_bytes"
/*
 * Filled on the total row only: how peak_rss_bytes was found ("events":
 * every RSS change, "samples": the largest sample), the kernel's own peak
 * (VmHWM) when the process ended (empty: not read), and 1 when the image
 * ran before tracing began (VmHWM may then hold more than was traced).
 */
#define COL_PEAK_SOURCE		"peak_source"
#define COL_KERNEL_HWM		"kernel_hwm_bytes"
#define COL_HWM_BEFORE_ATTACH	"hwm_before_attach"
#define SUMMARY_HEADER	COL_RANK "," COL_PID "," COL_COMPONENT "," COL_PEAK_RSS "," \
			COL_PEAK_RSS_TIME "," COL_PEAK_PSS "," COL_PEAK_PSS_TIME "," \
			COL_FINAL_RSS "," COL_FINAL_PSS "," COL_OOM_TIME "," COL_OOM_GROWTH "," \
			COL_PEAK_SOURCE "," COL_KERNEL_HWM "," COL_HWM_BEFORE_ATTACH

/*
 * A merged dataset (`memattr-bpf merge`): every file above gains a trailing
 * node column; nodes.csv says how each node's clock was aligned.
 */
#define COL_NODE		"node"
#define CSV_HEADER_NODE		CSV_HEADER "," COL_NODE
#define SUMMARY_HEADER_NODE	SUMMARY_HEADER "," COL_NODE
#define FILE_NODES		"nodes.csv"
#define NODES_HEADER		"node,start_time_unix_s,clock_offset_s,ranks,processes,events,dropped_events,duration_s"

/* run_info.csv: key,value rows. */
#define RUN_INFO_HEADER	"key,value"
/*
 * Its OOM post-mortem keys: RUN_OOM_KILLS (a count), RUN_OOM_WATCHED (0:
 * the kernel could not report kills), then per kill N (from 1)
 * "oom_kill_<N>_<field>" (rank, pid, time_s, kind, limit_bytes, cgroup,
 * sample_time_s, window_s) and "oom_kill_<N>_<figure>:<component>"
 * (rss_bytes, growth_bytes, job_rss_bytes).
 */
#define RUN_OOM_KILLS		"oom_kills"
#define RUN_OOM_WATCHED		"oom_watched"
#define RUN_OOM_PREFIX		"oom_kill_"

/*
 * Files of the opt-in modes:
 *   mpi_calls.csv (--mpi-calls), per process and MPI function;
 *   heap_sites.csv (--heap), per process and malloc-family call site
 *     (site: "file:function+0xOFF", or the address when no symbol covers it);
 *   heap_sites_peak.csv (--heap), the same columns, of the sites holding
 *     memory at the sample where the process's total peaked, their counts
 *     as they were then: a file of its own, so that a reader of
 *     heap_sites.csv that knows nothing of it adds up the same rows.
 */
#define MPI_CALLS_HEADER "rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,peak_bytes,first_growth_s,last_growth_s"
#define HEAP_SITES_HEADER "rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes"
/*
 * alloc_stacks.csv (every mode), per process and allocation stack: the
 * resident bytes of the regions it asked for at the last sample and at
 * the total's peak; stack is "file:function+0xOFF" frames, outermost
 * first, joined by ';'; build_ids the GNU build ID (hex) of each frame's
 * file in the same order and joined the same way, empty where the file
 * has none or could not be read.
 */
#define ALLOC_STACKS_HEADER "rank,pid,component,stack,rss_bytes,peak_rss_bytes,build_ids"

#endif
