/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Output directory and CSV files. The tool runs as root in directories other
 * users may write: nothing is opened through a symlink, files are created
 * 0640 and handed to the invoking user (SUDO_UID/SUDO_GID) when there is one.
 */
#ifndef MEMATTR_CSV_OUT_H
#define MEMATTR_CSV_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "columns.h"

struct output_dir {
	int dirfd;
	char path[4096];
	uid_t uid;	/* owner to give created files, (uid_t)-1 to keep root */
	gid_t gid;
	char **failed;	/* files that could not be written whole, each reported once */
	size_t nfailed;
};

/*
 * Open (creating it 0750 if missing, parent must exist) the output
 * directory. Refuses a path that is a symlink, not a directory, or not
 * writable, with a one-line reason in err.
 */
int outdir_open(struct output_dir *od, const char *path, uid_t uid, gid_t gid,
		char *err, size_t errlen);
void outdir_close(struct output_dir *od);

/*
 * name (or what was meant to be written to it) could not be written whole:
 * one line on stderr naming the file, why, and what is missing (detail, may
 * be NULL), the first time for each file; od->nfailed counts the files.
 */
void outdir_write_failed(struct output_dir *od, const char *name, int err, const char *detail);

/* Create or truncate name inside the directory, never following a symlink. */
FILE *outdir_create(struct output_dir *od, const char *name);

/*
 * Like outdir_create, but when something not ours to write sits on name (a
 * FIFO, a symlink, a hard link, a directory, another user's file: planted
 * where a rank file goes), the file is created beside it instead, as
 * "rank-3.1.csv" ("rank-3.2.csv", ...: the first free one, made with
 * O_EXCL | O_NOFOLLOW, so nothing is written through what was planted).
 * used gets the name written; *why what was on name (NULL when name itself
 * was used). NULL on failure, errno set.
 */
FILE *outdir_create_beside(struct output_dir *od, const char *name, char *used, size_t usedlen,
			   const char **why);

/*
 * Write name atomically: the caller fills a temporary file through the
 * returned FILE*, outdir_commit renames it over name.
 */
FILE *outdir_begin_replace(struct output_dir *od, const char *name, char *tmpname, size_t tmplen);
int outdir_commit(struct output_dir *od, FILE *f, const char *tmpname, const char *name);
/*
 * The same; durable false skips the fsyncs of the file and the directory
 * (a rewrite that another follows: still atomic, and every write error
 * the file's own writes and close report is still returned).
 */
int outdir_commit_as(struct output_dir *od, FILE *f, const char *tmpname, const char *name,
		     bool durable);
/* Give up a replacement: the temporary file is closed and removed, name left as it was. */
void outdir_abort(struct output_dir *od, FILE *f, const char *tmpname);

/* File name for a process: "rank-<R>.csv", or "pid-<P>.csv" when rank < 0. */
void csv_file_name(int rank, pid_t pid, char *out, size_t outlen);

int csv_write_header(FILE *f);

/* Pieces for the other CSV files: "<rank>,<pid>," and one text field, quoted as needed. */
int csv_put_rank_pid(FILE *f, int rank, pid_t pid);
int csv_put_field(FILE *f, const char *s);

/* time_s with millisecond precision; rank written empty when < 0. */
int csv_write_row(FILE *f, double time_s, int rank, pid_t pid,
		  const char *component, int64_t rss, int64_t pss);
/* The same with a trailing node field (a merged dataset: CSV_HEADER_NODE). */
int csv_write_node_row(FILE *f, double time_s, int rank, pid_t pid,
		       const char *component, int64_t rss, int64_t pss, const char *node);

/* One row of summary.csv. */
struct summary_row {
	int rank;
	pid_t pid;
	const char *component;
	int64_t peak_rss;
	double peak_rss_time;
	int64_t peak_pss;
	double peak_pss_time;
	int64_t final_rss;
	int64_t final_pss;
	bool oom;		/* the OOM killer chose it: the two oom fields are written */
	double oom_time;
	int64_t oom_growth;
	/*
	 * The total row's: peak_source, kernel_hwm_bytes, hwm_before_attach
	 * (peak_source NULL: all empty; kernel_hwm -1: the last two empty).
	 */
	const char *peak_source;
	int64_t kernel_hwm;	/* -1: empty */
	bool hwm_before_attach;
	const char *node;	/* a merged dataset's node column, NULL: none */
};

int summary_write_header(FILE *f);
int summary_write_row(FILE *f, const struct summary_row *row);

#endif
