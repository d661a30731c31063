/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `memattr-bpf report DIR`: read a run's CSVs and write DIR/report.html.
 *
 * report_csv.c reads the files (pure: the directory is all it touches),
 * report_stats.c turns them into figures (pure arithmetic), report_svg.c
 * draws charts, report_html.c lays out the page and report.c is the command.
 * None of it needs root or touches BPF.
 */
#ifndef MEMATTR_REPORT_H
#define MEMATTR_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RP_ERRLEN	512
#define RP_MAX_GROUPS	10	/* colours a reader can tell apart in one legend */
#define RP_MAX_LIBS	4	/* lib:* shown apart; the rest is "other libraries" */
/*
 * Samples the report keeps in memory over all processes (about 150 bytes
 * each): past it, each process keeps RP_KEEP_SAMPLES / processes of them
 * (at least RP_MIN_SAMPLES), its largest totals first (rp_read_proc).
 */
#define RP_KEEP_SAMPLES	(8u << 20)
#define RP_MIN_SAMPLES	48
/*
 * Samples `report` keeps of one process however long its file: a chart
 * draws at most 2 per pixel column of a plot under 1,320 px wide
 * (rp_pick_samples) and a heat map 240 columns, so per slice of time its
 * largest and smallest total, 4,095 slices, lose nothing a chart shows.
 */
#define RP_PROC_SAMPLES	8192
/* Gaps between a process's first samples that set the job's grid (rp_interval). */
#define RP_MAX_GAPS	4096
/* Longest line a reader takes: a longer one is refused, not buffered. */
#define RP_MAX_LINE	(1u << 20)
#define RP_MAX_LINE_TEXT "1048576"
/* With rp_run.bounded: mpi_calls.csv's distinct functions. run_info.csv's lines, always. */
#define RP_MAX_FUNCS	4096
#define RP_MAX_INFO	65536
/*
 * With rp_run.tables_bounded (export, diff): the bytes of per-process rows
 * one dataset keeps from mpi_calls.csv, heap_sites.csv, heap_sites_peak.csv
 * and alloc_stacks.csv together (the rows' structures and their strings;
 * the tables' room may be up to twice that). Past it the read is refused.
 */
#define RP_MAX_TABLE_BYTES	(256u << 20)
#define RP_MAX_TABLE_MIB	256
/* Largest CSV the report reads: a day of 100 ms samples of 64 components is ~3 GiB. */
#define RP_MAX_FILE	(16ULL << 30)

/*
 * a + b, held at INT64_MAX or INT64_MIN instead of wrapping: the report sums
 * numbers read from files anyone may have written, and a wrapped sum would
 * show as a negative size, count or width (and is undefined behaviour).
 */
static inline int64_t rp_sat_add(int64_t a, int64_t b)
{
	int64_t s;

	if (!__builtin_add_overflow(a, b, &s))
		return s;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

/* One traced process: rank-<R>.csv or pid-<P>.csv. */
struct rp_proc {
	int rank;		/* -1: not an MPI rank (pid-<P>.csv) */
	int pid;
	int node;		/* index into rp_run.nodes; -1: not a merged dataset */
	char file[96];		/* file name inside DIR */
	size_t n, cap;		/* samples read, room */
	double *t;		/* time_s of each sample */
	int64_t *pss_total;	/* pss of the `total` row, -1 if the sample had none */
	int64_t **rss;		/* [component] -> n values (0 before it appeared), or NULL */
	size_t nrss;		/* entries in rss[] */
	int64_t **pss;		/* with rp_run.keep_pss: as rss, the pss_bytes column; else NULL */
	bool partial;		/* last line was cut: the run is still writing it */
	/*
	 * Thinned as read (more samples than rp_run.max_samples): the exact
	 * figures over every sample, which the kept ones may understate.
	 */
	bool thinned;
	int64_t *rss_peak;	/* [npeak]: each component's largest rss */
	int64_t *pss_peaks;	/* [npeak], with rp_run.keep_pss: each component's largest pss */
	size_t npeak;
	int64_t pss_peak;	/* largest pss of total */
	double *gaps;		/* the first samples' positive gaps (rp_interval) */
	size_t ngaps;
	/* Filled by rp_groups_apply: */
	int64_t *tot;		/* rss total per sample */
	int64_t *grp;		/* n * RP_MAX_GROUPS: rss per display group per sample */
};

struct rp_summary_row {
	int rank;
	int pid;
	char component[128];
	int64_t peak_rss;
	double peak_rss_time;
	int64_t peak_pss;	/* -1: column absent */
	double peak_pss_time;
	int64_t final_rss;	/* -1: column absent */
};

/* mpi_calls.csv: which MPI function made the library grow, per rank. */
struct rp_call_row {
	int rank;
	int pid;
	char function[96];
	int64_t calls;		/* -1: not counted (no --mpi-calls probes: empty field) */
	int64_t gained;
	int64_t released;	/* -1: column absent */
	int64_t net;
	int64_t peak;		/* -1: column absent */
	double first_growth;	/* < 0: column absent or empty */
	double last_growth;
	size_t rows;		/* rows of the file summed into this one (rp_run.bounded: per function) */
};

/* run_info.csv: key,value lines written by the tracer. */
struct rp_kv {
	char key[128];	/* oom_kill_<N>_job_rss_bytes:<component> is long */
	char value[256];
};

struct rp_run {
	char dir[4096];
	char **comp;		/* component names; comp[0] is "total" */
	size_t ncomp;
	struct rp_proc *procs;	/* ranks by rank, then other processes by pid */
	size_t nprocs;
	char **nodes;		/* a merged dataset's nodes (its node column), in order of appearance */
	size_t nnodes;
	struct rp_summary_row *summary;
	size_t nsummary;
	bool has_summary;
	struct rp_call_row *calls;
	size_t ncalls;
	bool has_calls;
	struct rp_kv *info;
	size_t ninfo;
	bool has_info;
	size_t partial_lines;	/* cut last lines ignored: the run is in progress */
	/*
	 * Samples kept per process, 0: all. Set before reading to bound memory
	 * (`report`: RP_PROC_SAMPLES); rp_load_dir lowers it for a job of
	 * 100,000 ranks. A longer timeline is thinned as it is read.
	 */
	size_t max_samples;
	bool keep_pss;		/* set before reading: keep every component's pss, not only total's */
	/*
	 * Set before reading (export --at T): a thinned timeline keeps, beside
	 * what thinning keeps, its last sample at or before keep_at_t, so that
	 * the moment export shows is the one the whole file has.
	 */
	bool keep_at;
	double keep_at_t;
	/*
	 * Set before reading (`report`): keep only what the page shows, so no
	 * file's length sets the memory: summary.csv's `total` rows of the
	 * timelines read (two at most each), mpi_calls.csv summed per function
	 * (at most RP_MAX_FUNCS). (run_info.csv: at most RP_MAX_INFO lines
	 * whatever the flags: every command keeps it whole.)
	 */
	bool bounded;
	/*
	 * Set before reading (export, diff): summary.csv is checked, its rows
	 * not kept (their figures come from the timelines); mpi_calls.csv
	 * keeps no row of a process that is no rank unless its timeline was
	 * read (rp_call_wanted); and the rows kept of the per-process tables
	 * count in table_bytes, refused past RP_MAX_TABLE_BYTES.
	 */
	bool tables_bounded;
	size_t table_bytes;
	size_t thinned;		/* processes whose timelines were thinned */
	size_t dropped_samples;	/* incomplete last samples ignored */
	const char *model_html;	/* a section made by the caller (report DIR RUN...: the memory model), NULL: none */
};

/* report_csv.c ---------------------------------------------------------- */

/* A line reader that knows its line number and whether the last line was cut. */
struct rp_reader {
	FILE *f;
	const char *name;	/* for messages */
	char *line;
	size_t cap;
	size_t lineno;
	bool partial;
};

/*
 * Next complete line, without its line break: 1, 0 at the end (partial set
 * when the last line had no newline: it is still being written), -1 on a
 * read error (errno; EILSEQ for a NUL byte, EMSGSIZE for a line longer
 * than RP_MAX_LINE).
 */
int rp_next_line(struct rp_reader *rd);
/* strerror, with rp_next_line's EMSGSIZE said plainly. */
const char *rp_read_strerror(int e);

/* err gets "NAME:LINE: " (or "NAME: " before the first line) and the message. */
void rp_reader_err(char *err, size_t errlen, const struct rp_reader *rd, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Strict decimal integer within [min, INT64_MAX]. */
int rp_parse_i64(const char *s, int64_t min, int64_t *out);
/* A time in seconds: finite, not negative, plain decimal. */
int rp_parse_time(const char *s, double *out);

/*
 * Split one CSV line in place (RFC 4180 quotes allowed). Returns the field
 * count, or -1 on a bad quote. At most max fields are stored; the count is
 * still the true one.
 */
int rp_csv_split(char *line, char **fields, size_t max);

/* Index of a column by header name, -1 if absent. */
int rp_col(char *const *hdr, size_t n, const char *name);

/*
 * Read every CSV the report uses from the directory open at dirfd (dir is
 * its name, for messages). 0, or -1 with "DIR/FILE[:LINE]: why" in err.
 */
int rp_load_dir(struct rp_run *run, int dirfd, const char *dir, char *err, size_t errlen);

/*
 * Read one process timeline from an open stream (name is for messages).
 * The stream is read twice (it must seek back to its start): once to check
 * and count, once to keep at most run->max_samples of its samples.
 */
int rp_read_proc(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen);
/* summary.csv's rows, sorted by rp_summary_cmp (ranks by rank, then the other processes by pid). */
int rp_read_summary(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen);
/*
 * summary.csv's rows in one pass, each to fn as it is read, none kept
 * (model: what it needs of them is per component). fn returns 0, or -1
 * with err written. 0, or -1 with "NAME:LINE: why" in err.
 */
typedef int (*rp_summary_fn)(const struct rp_summary_row *row, void *arg, char *err,
			     size_t errlen);
int rp_scan_summary(FILE *f, const char *name, rp_summary_fn fn, void *arg, char *err,
		    size_t errlen);
int rp_summary_cmp(int rank_a, int pid_a, int rank_b, int pid_b);
/* The index in run->procs (sorted, as rp_load_dir leaves them) of rank and pid; -1: none. */
long rp_proc_find(const struct rp_run *run, int rank, int pid);
int rp_read_calls(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen);
int rp_read_info(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen);
/*
 * With run->tables_bounded: size more bytes of rows kept, counted in
 * run->table_bytes. 0, or -1 with "NAME:LINE: more than ..." in err
 * (past RP_MAX_TABLE_BYTES: nothing counted).
 */
int rp_table_charge(struct rp_run *run, const struct rp_reader *rd, size_t size, char *err,
		    size_t errlen);

/* Component index by name, -1 if the run has none. */
int rp_comp_find(const struct rp_run *run, const char *name);

void rp_run_free(struct rp_run *run);

/* report_stats.c -------------------------------------------------------- */

enum rp_group_kind {
	RP_G_APP, RP_G_MPI, RP_G_LIBC, RP_G_LIB, RP_G_OTHER_LIBS, RP_G_STACK, RP_G_UNATTR,
};

/* Components as drawn: one colour each, the same in every chart. */
struct rp_groups {
	size_t n;
	char name[RP_MAX_GROUPS][64];
	const char *color[RP_MAX_GROUPS];
	enum rp_group_kind kind[RP_MAX_GROUPS];
	int *of_comp;		/* component index -> group, -1 for total */
	int mpi, app;		/* group index of mpi and app, -1 if absent */
};

/* Per process, from its timeline. */
struct rp_pstat {
	size_t peak_idx;	/* sample of the largest total */
	double peak_t;
	int64_t peak_total;
	int64_t peak_pss;	/* summary.csv's when present, else the timeline's */
	int64_t final_total;
	int64_t at_peak[RP_MAX_GROUPS];	/* groups at the moment of the total peak */
	int64_t gpeak[RP_MAX_GROUPS];	/* each group's own peak */
	double mpi_share;	/* mpi / total at the peak, 0..1 */
};

/* A figure across processes: mean and population standard deviation. */
struct rp_dist {
	size_t n;
	double mean, std;
	double max, min;
	size_t max_at, min_at;	/* index into the values */
};

/* The job's sum over processes on a grid of interval-wide time buckets. */
struct rp_agg {
	double interval;	/* s */
	size_t nb;
	int64_t *tot;		/* nb */
	int64_t *grp;		/* nb * RP_MAX_GROUPS */
	size_t first_b;		/* the first bucket any process has a sample in */
	size_t peak_b;
};

int rp_groups_make(const struct rp_run *run, struct rp_groups *g);
/* Fill every process's tot and grp arrays. */
int rp_groups_apply(struct rp_run *run, const struct rp_groups *g);
void rp_groups_free(struct rp_groups *g);

void rp_pstat_of(const struct rp_run *run, const struct rp_groups *g, size_t pi,
		 struct rp_pstat *st);
/*
 * The largest rss (pss: pss) of component c in p over every sample of its
 * file, thinned or not; 0 when p has no such column or component.
 */
int64_t rp_proc_peak(const struct rp_proc *p, size_t c, bool pss);
void rp_dist_of(const double *v, size_t n, struct rp_dist *d);

/* The sampling interval: the median gap between samples of a process. */
double rp_interval(const struct rp_run *run);
double rp_duration(const struct rp_run *run);

/* The sum over every process (node < 0) or over one node's processes. */
int rp_agg_build(const struct rp_run *run, double interval, int node, struct rp_agg *a);
void rp_agg_free(struct rp_agg *a);

/*
 * Rank x time matrix: ncol cells over [0, tmax], each the largest value of
 * group grp (or total when grp < 0) among the samples inside it, carried
 * forward across cells with no sample; NaN where the process was not there.
 * cells is nprocs * ncol.
 */
void rp_heat_build(const struct rp_run *run, int grp, double tmax, size_t ncol, double *cells);
/* One process's row of that matrix. */
void rp_heat_row(const struct rp_proc *p, int grp, double tmax, size_t ncol, double *row);

/*
 * Samples to draw in a chart ncol pixels wide: per pixel the one with the
 * largest total, so no peak is lost; first, last and peak always kept.
 * out has room for 2 * ncol + 3; returns how many, in time order.
 */
size_t rp_pick_samples(const struct rp_proc *p, size_t ncol, size_t *out);

/* Process indices by peak total, largest first. */
void rp_order_by_peak(const struct rp_pstat *st, size_t n, size_t *order);

/* report_svg.c ---------------------------------------------------------- */

/* "12.3 MiB", "1.50 GiB", "512 KiB", "0 B". */
void rp_fmt_bytes(double b, char *out, size_t len);

/* Tick step 1, 2 or 5 x 10^k so that [0, max] gets about want ticks. */
double rp_nice_step(double max, int want);

/* Unit for an axis whose top is max bytes: divisor and name. */
double rp_byte_unit(double max, const char **name);

struct rp_stack_chart {
	double width, height;	/* whole SVG, px */
	double tmax;		/* right end of the time axis */
	double vmax;		/* top of the byte axis (0: from the data) */
	const char *title;
	bool legend;
};

/* Stacked areas of one process's groups, its peak marked. */
int rp_svg_proc(FILE *f, const struct rp_run *run, const struct rp_groups *g, size_t pi,
		const struct rp_pstat *st, const struct rp_stack_chart *c);

/* Stacked areas of the job aggregate, its peak marked. */
int rp_svg_agg(FILE *f, const struct rp_groups *g, const struct rp_agg *a,
	       const struct rp_stack_chart *c);

/* A heat map: its size, time axis, title and the job peak line. */
struct rp_heat_chart {
	double width;
	double tmax;
	const char *title;
	double peak_t;		/* job peak, marked with a line (< 0: none) */
};
/* Heat map of nrow rows: row r is cells[r * ncol ...], labelled labels[r]. */
int rp_svg_heat_rows(FILE *f, const char *const *labels, size_t nrow, const double *cells,
		     size_t ncol, const struct rp_heat_chart *c);

/* s with & < > " ' escaped, for text and attribute values. */
/* report_oom.c: a box for each OOM kill run_info.csv records (its oom_* keys); none: nothing. */
void rp_oom_html(FILE *f, const struct rp_run *run);
void rp_xml_escape(FILE *f, const char *s);

/* One coloured square per group with its name, wrapped to width. */
int rp_svg_legend(FILE *f, const struct rp_groups *g, double width);

/* report_nodes.c -------------------------------------------------------- */

/*
 * A merged dataset's nodes: a node x time heat map of each node's summed
 * total and the per-node peak table. Nothing when the run has no nodes.
 */
int rp_html_nodes(FILE *f, const struct rp_run *run, const struct rp_groups *g,
		  const struct rp_pstat *st, double interval, double dur, double job_peak_t,
		  double width);

/* report_html.c --------------------------------------------------------- */

/* report_style.c: the style sheet every page of ours inlines. */
extern const char rp_html_css[];

int rp_html_write(FILE *f, struct rp_run *run);

/* report.c -------------------------------------------------------------- */

int report_main(int argc, char **argv);
void report_usage(FILE *f);
/*
 * DIR/report.html, with model_html (NULL: none) as its memory model
 * section; says so on stdout. The exit status: 0, or 1 with one line on
 * stderr and no page written.
 */
int report_dir(const char *dir, const char *model_html);

#endif
