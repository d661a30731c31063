/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `memattr-bpf export` and `memattr-bpf diff`: a finished run's resident
 * memory as stacks, for flame graph tools, and two runs side by side.
 *
 * A dataset is read with report's readers (ex_load: timelines with every
 * component's pss, mpi_calls.csv, and heap_sites.csv here; bounded memory),
 * one moment of each process is chosen (ex_pick), and ex_build turns it
 * into a profile: a set of stacks, root first, each with its values. A
 * stack is the component that owns the memory, then, where the dataset
 * knows it, the MPI function that made the library grow (mpi_calls.csv)
 * or the heap call site (heap_sites.csv, --heap). The writers (one file
 * each: folded, speedscope, pprof) read only the profile, so the same
 * writers can later take stacks from a live session.
 *
 * Pure: no root, no BPF; what is read is the directory given.
 */
#ifndef MEMATTR_EXPORT_H
#define MEMATTR_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

#define EX_ERRLEN	RP_ERRLEN

/* The figures a stack carries; pprof writes them all, the others one. */
enum ex_value {
	EX_RSS,		/* resident bytes */
	EX_PSS,		/* proportional bytes */
	EX_INUSE,	/* --heap: live bytes of the call site */
	EX_INUSE_OBJ,	/* --heap: live blocks (calls - frees) */
	EX_ALLOC,	/* --heap: bytes ever allocated there */
	EX_ALLOC_OBJ,	/* --heap: calls */
	EX_NVALUES,
};

/* The moment of each process the profile shows. */
enum ex_at {
	EX_AT_PEAK,	/* the sample of the process's largest total rss */
	EX_AT_END,	/* its last whole sample */
	EX_AT_TIME,	/* its last sample at or before a time_s */
};

/* heap_sites.csv (or heap_sites_peak.csv): one row per process and malloc-family call site. */
#define EX_LIBRARY_MAX	128	/* a heap site's library name, its NUL included */
#define EX_SITE_MAX	384	/* a heap site's name, its NUL included */

struct ex_site {
	bool at_peak;		/* heap_sites_peak.csv's: its counts at the process's peak */
	int rank;
	int pid;
	char *library;		/* the component whose code called (malloc'ed, with site after it) */
	const char *site;	/* "file:function+0xOFF", "file+0xOFF" or "0xADDR" (in library's allocation) */
	int64_t calls, frees, live, peak_live, total;
};

/* alloc_stacks.csv: one row per process and allocation stack. */
struct ex_stack {
	int rank;
	int pid;
	char component[128];
	char *frames;		/* "file:function+0xOFF;..." outermost first (malloc'ed) */
	char *build_ids;	/* each frame's file's GNU build ID, ';'-joined; NULL: none known */
	int64_t rss;		/* at the process's last sample */
	int64_t peak_rss;	/* at its total's peak */
};

/* A dataset: report's run plus what only export reads. */
struct ex_data {
	struct rp_run run;	/* keep_pss: every component's pss */
	struct ex_site *sites;
	size_t nsites, sites_cap;
	bool has_sites;
	bool has_peak_sites;	/* heap_sites_peak.csv was read (a run traced since it exists) */
	struct ex_stack *stacks;
	size_t nstacks, stacks_cap;
	bool has_stacks;
};

/* One process at its chosen moment. */
struct ex_proc {
	int rank;		/* -1: not a rank */
	int pid;
	size_t pi;		/* index into run.procs */
	size_t sample;		/* index of the chosen sample in its timeline */
	double t;		/* its time_s */
};

struct ex_frame {
	uint32_t name;		/* string index */
	uint32_t mapping;	/* index into ex_profile.mappings: the component */
};

/* Frames of a stack: the component, an allocation stack's frames, or an MPI function or heap site. */
#define EX_MAX_DEPTH	12

struct ex_sample {
	uint32_t frames[EX_MAX_DEPTH];	/* frame indices, root first */
	uint32_t depth;
	uint32_t proc;		/* index into ex_profile.procs */
	uint32_t function;	/* string index of the MPI function, 0: none */
	int64_t v[EX_NVALUES];
};

/* Strings interned once; index 0 is "" (pprof's string table wants it). */
struct ex_strings {
	char **s;
	size_t n, cap;
	uint32_t *slot;		/* open addressing: index + 1, 0 empty */
	size_t nslot;
};

struct ex_profile {
	struct ex_strings str;
	struct ex_strings fkey;	/* "component\x1fname" of frame i at index i + 1 */
	uint32_t *mappings;	/* string index of each component's name */
	uint32_t *build_ids;	/* string index of each mapping's GNU build ID (hex), 0: none */
	size_t nmappings;
	struct ex_frame *frames;
	size_t nframes;
	struct ex_sample *samples;
	size_t nsamples, cap;
	struct ex_proc *procs;
	size_t nprocs;
	enum ex_at at;
	double at_time;
	double start_unix;	/* run_info.csv's start_time_unix_s, 0 if absent */
	bool has_heap;		/* heap samples are in (EX_INUSE...) */
	bool fn_split;		/* mpi is split by MPI function */
	/* What the dataset has but this moment cannot show (said on stderr). */
	bool dropped_fns, dropped_heap, dropped_stacks;
	bool stack_split;	/* components are split by allocation stack */
	size_t fn_over;		/* processes whose MPI functions sum past mpi's rss */
};

/* exp_load.c ----------------------------------------------------------- */

/* What export shows: the moment of each process, and one rank or all. */
struct ex_select {
	enum ex_at at;
	double at_time;		/* EX_AT_TIME */
	bool one_rank;
	int rank;		/* with one_rank */
};

/*
 * Read the run in dir: every timeline with its components' pss, and the
 * optional files. 0, or -1 with "DIR/FILE[:LINE]: why" in err. A timeline
 * longer than RP_PROC_SAMPLES is thinned as it is read (bounded memory):
 * the moments sel names (NULL: the peak and the end, as diff reads) and
 * each component's peaks (rp_proc_peak) stay those of the whole file.
 * The other files are read in one pass each, keeping what a profile or a
 * diff can show (run.tables_bounded): summary.csv's rows are checked, not
 * kept; heap_sites*.csv and alloc_stacks.csv keep the rows of the
 * processes whose timelines were read; what the tables keep past
 * RP_MAX_TABLE_BYTES is refused.
 */
int ex_load(struct ex_data *d, const char *dir, const struct ex_select *sel, char *err,
	    size_t errlen);
void ex_data_free(struct ex_data *d);

/* heap_sites.csv from an open stream (name for messages); rows appended. */
int ex_read_sites(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen);
/* heap_sites_peak.csv the same way, its rows at_peak. */
int ex_read_peak_sites(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen);
/* alloc_stacks.csv from an open stream (name for messages); rows appended. */
int ex_read_stacks(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen);

/* "peak", "end" or a time in seconds. 0, or -1 (not one of them). */
int ex_parse_at(const char *s, enum ex_at *at, double *t);

/* The sample of p the moment names: its index, or -1 (p had none by then). */
long ex_pick(const struct rp_proc *p, enum ex_at at, double t);

/* exp_profile.c -------------------------------------------------------- */

/* Index of s, added when new: >= 0, or -1 out of memory. */
long ex_intern(struct ex_strings *st, const char *s);
void ex_strings_free(struct ex_strings *st);
const char *ex_str(const struct ex_profile *pr, uint32_t i);

/* The mapping of comp (a component or a file), made when new: index, or -1. */
long ex_mapping(struct ex_profile *pr, const char *comp);
/* The mapping's GNU build ID, hex (the first given stays; "" sets none). 0, or -1 out of memory. */
int ex_mapping_build_id(struct ex_profile *pr, uint32_t mapping, const char *hex);
/* The frame of name under the component comp (both strings): index, or -1. */
long ex_frame(struct ex_profile *pr, const char *comp, const char *name);
/* A new sample, zeroed but for proc; NULL out of memory. */
struct ex_sample *ex_sample_add(struct ex_profile *pr, uint32_t proc);
void ex_profile_free(struct ex_profile *pr);

/* exp_build.c ---------------------------------------------------------- */

/*
 * The profile of the chosen moment: per process, each component's rss and
 * pss; at the peak or the end, each component but a split mpi under its
 * allocation stacks (alloc_stacks.csv's figures of that moment, scaled
 * down to the component when they exceed it, as the tracer scales
 * components to the kernel's total; pss in rss's proportion; the rest on
 * the component); at the end, mpi split by MPI function (mpi_calls.csv's net bytes;
 * pss in the proportion of rss, the dataset knowing pss per component
 * only) with the rest on mpi itself; at the end with heap sites, and at
 * the peak with the sites live then (heap_sites_peak.csv), one stack per
 * site carrying the EX_INUSE.. values and no resident bytes.
 * 0, or -1 with a sentence in err.
 */
int ex_build(const struct ex_data *d, const struct ex_select *sel, struct ex_profile *pr,
	     char *err, size_t errlen);

/* "build_mesh" of "solver:build_mesh+0x5a"; "libx.so+0x40" and "0x7f.." stay as they are. */
void ex_site_frame(const char *site, char *out, size_t len);

/* A frame's function as written in its source: C++ demangled, gfortran's module procedures as mod::proc. */
void ex_demangle(const char *in, char *out, size_t len);
/* Whether C++ names can be demangled here (libstdc++ is there to do it). */
bool ex_cxx_demangler(void);

/* The writers ---------------------------------------------------------- */

/* One output format: the "sink" a profile goes to. */
struct ex_writer {
	const char *name;	/* --format NAME */
	bool binary;		/* not for a terminal */
	/* Write pr's value v to f. 0, or -1 with a sentence in err. */
	int (*write)(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err, size_t errlen);
};

/* The writer named name, NULL if none. */
const struct ex_writer *ex_writer_find(const char *name);
/* "folded, speedscope, pprof": for messages and usage. */
const char *ex_writer_names(void);

/* The frame name as folded stacks can carry it: no ';', no line break, no control byte. */
void ex_folded_name(const char *s, char *out, size_t len);
/* s as a JSON string, quotes included; bytes that are not UTF-8 become U+FFFD. */
void ex_json_str(FILE *f, const char *s);
/* "rank 3" or "pid 4711": the root frame or title of one process. */
void ex_proc_label(const struct ex_proc *p, char *out, size_t len);

int ex_write_folded(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err, size_t errlen);
int ex_write_speedscope(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err,
			size_t errlen);
int ex_write_pprof(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err, size_t errlen);

/* exp_diff.c ----------------------------------------------------------- */

/* A component's figures in one run: its own peaks, as summary.csv has them, and its last sample. */
struct ex_fig {
	bool present;
	int64_t peak_rss, final_rss;
	int64_t peak_pss, final_pss;
};

struct ex_diff_comp {
	char name[128];
	struct ex_fig a, b;
};

/* mpi_calls.csv's row of one function in each run: net is what it holds at the end. */
struct ex_diff_fn {
	char name[96];
	bool in_a, in_b;
	int64_t net_a, net_b, peak_a, peak_b;
};

struct ex_diff_rank {
	int rank;
	int pid_a, pid_b;	/* -1: not in that run */
	struct ex_diff_comp *comps;	/* total first, then A's order, then B's new ones */
	size_t ncomps;
	struct ex_diff_fn *fns;
	size_t nfns;
};

struct ex_diff {
	struct ex_diff_rank *ranks;	/* by rank, every rank of either run */
	size_t nranks;
	size_t others_a, others_b;	/* processes that are no rank: not matched, left out */
};

/* The gate's verdict: the largest growth of a component's peak rss past the limit. */
struct ex_growth {
	int rank;
	const char *component;
	int64_t growth;		/* B's peak - A's peak */
	int64_t base;		/* A's total peak of that rank */
	double pct;		/* growth as a percentage of base */
};

/* Two runs side by side, ranks matched by rank. 0, or -1 out of memory. */
int ex_diff_build(const struct ex_data *a, const struct ex_data *b, struct ex_diff *d);
void ex_diff_free(struct ex_diff *d);

/*
 * In ranks both runs have, the component (total included) whose peak rss
 * grew the most past limit_pct percent of A's total peak of that rank:
 * true and *g filled, or false when none grew that much.
 */
bool ex_diff_over(const struct ex_diff *d, double limit_pct, struct ex_growth *g);

/* exp_diff_print.c ----------------------------------------------------- */

/* A folded stack ("rank R;comp;...") with its value in each run. */
struct ex_diff_line {
	char *stack;
	int64_t a, b;
};

/*
 * Both profiles' stacks of value v, with a rank frame (processes that are
 * no rank left out), sorted by stack, each once with A's and B's value
 * (0 where a run has none). 0, or -1 out of memory.
 */
int ex_diff_lines(const struct ex_profile *a, const struct ex_profile *b, enum ex_value v,
		  struct ex_diff_line **out, size_t *n);
void ex_diff_lines_free(struct ex_diff_line *lines, size_t n);

/* The terminal's text: per rank and component, then per MPI function. */
int ex_diff_text(FILE *f, const struct ex_diff *d, const char *name_a, const char *name_b);
/* diff.csv: one row per rank and component, every figure of both runs and the change. */
int ex_diff_csv(FILE *f, const struct ex_diff *d);
/* mpi_diff.csv: one row per rank and MPI function. */
int ex_diff_fn_csv(FILE *f, const struct ex_diff *d);
/*
 * difffolded.pl's form, "stack A B" per line, of two profiles (folded
 * stacks with a rank frame, value v): what flamegraph.pl draws as a
 * differential flame graph.
 */
int ex_diff_folded(FILE *f, const struct ex_profile *a, const struct ex_profile *b, enum ex_value v);
/*
 * Of the stacks below comp on rank (allocation stacks, MPI functions, heap
 * sites: deeper than the component), the one whose rss grew most from a
 * to b: 1 with its frames below comp in out and the growth, 0 when none
 * grew, -1 out of memory.
 */
int ex_diff_top_stack(const struct ex_profile *a, const struct ex_profile *b, int rank,
		      const char *comp, char *out, size_t len, int64_t *growth);

/* exp_diff_html.c ------------------------------------------------------ */

/*
 * diff.html, in the report's style: per rank and component each run's
 * peak and final rss and the change (the components that changed most
 * first), what each MPI function held, and the stacks whose rss changed
 * most at the peak (peak_a, peak_b) and at the end (end_a, end_b), largest
 * change first. 0, or -1 (write error, out of memory).
 */
int ex_diff_html(FILE *f, const struct ex_diff *d, const char *name_a, const char *name_b,
		 const struct ex_profile *peak_a, const struct ex_profile *peak_b,
		 const struct ex_profile *end_a, const struct ex_profile *end_b);

/* exp_out.c ------------------------------------------------------------ */

/*
 * Run write into path through a temporary file beside it, renamed over
 * path when whole (no half-written file is ever at path), or into
 * standard output when path is NULL or "-". 0, or -1 with err.
 */
int ex_output(const char *path, int (*write)(FILE *f, void *arg, char *err, size_t errlen),
	      void *arg, char *err, size_t errlen);

#endif
