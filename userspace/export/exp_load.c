// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a dataset for export and diff: report's readers do the
 * timelines (streamed, in bounded memory), summary.csv, mpi_calls.csv and run_info.csv (asked to keep
 * every component's pss); heap_sites.csv, heap_sites_peak.csv and alloc_stacks.csv are read here,
 * the report having no use for them. Each file in one pass, keeping only the rows a profile or a
 * diff can show, within RP_MAX_TABLE_BYTES (run.tables_bounded). The same rules as the report's: columns by header name,
 * anything that does not parse is refused naming the file and line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "columns.h"
#include "export.h"
#include "safe_open.h"

#define MAX_FIELDS	64

enum { S_RANK, S_PID, S_LIB, S_SITE, S_CALLS, S_FREES, S_LIVE, S_PEAK, S_TOTAL, NCOLS_SITE };

static const char *const site_cols[NCOLS_SITE] = {
	"rank", "pid", "library", "site", "calls", "frees", "live_bytes", "peak_live_bytes",
	"total_bytes",
};

/* An empty rank is a process that is not a rank; else 0 .. INT_MAX. */
static int parse_id(const char *s, bool empty_ok, int min, int *out)
{
	int64_t v;

	if (!*s && empty_ok) {
		*out = -1;
		return 0;
	}
	if (rp_parse_i64(s, min, &v) || v > INT32_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

static int site_row(struct rp_reader *rd, char **fld, const int *col, struct ex_site *r,
		    char *err, size_t errlen)
{
	static const int num[] = { S_CALLS, S_FREES, S_LIVE, S_PEAK, S_TOTAL };
	int64_t *dst[] = { &r->calls, &r->frees, &r->live, &r->peak_live, &r->total };
	const char *bad = NULL;

	memset(r, 0, sizeof(*r));
	if (parse_id(fld[col[S_RANK]], true, 0, &r->rank))
		bad = "rank";
	else if (parse_id(fld[col[S_PID]], false, 1, &r->pid))
		bad = "pid";
	else if (!fld[col[S_LIB]][0] || strlen(fld[col[S_LIB]]) >= EX_LIBRARY_MAX)
		bad = "library";
	else if (!fld[col[S_SITE]][0] || strlen(fld[col[S_SITE]]) >= EX_SITE_MAX)
		bad = "site";
	for (size_t i = 0; !bad && i < sizeof(num) / sizeof(num[0]); i++)
		if (rp_parse_i64(fld[col[num[i]]], 0, dst[i]))
			bad = site_cols[num[i]];
	if (bad) {
		rp_reader_err(err, errlen, rd, "bad value in column %s", bad);
		return -1;
	}
	return 0;
}

/*
 * Whether a row of a per-process table can show: with run.tables_bounded,
 * only a process whose timeline was read is in a profile.
 */
static bool proc_wanted(const struct ex_data *d, int rank, int pid)
{
	return !d->run.tables_bounded || rp_proc_find(&d->run, rank, pid) >= 0;
}

/* Room for one more of n elements in *a (room *cap), doubled when full. 0, or -1 out of memory. */
static int table_grow(void **a, size_t n, size_t *cap, size_t size)
{
	size_t want = *cap ? *cap * 2 : 64;
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*a, want * size);
	if (!q)
		return -1;
	*a = q;
	*cap = want;
	return 0;
}

typedef int (*row_fn)(struct ex_data *d, struct rp_reader *rd, char **fld, const int *col,
		      char *err, size_t errlen);

/*
 * A CSV whose header has every column of cols (found by name) but the last
 * nopt, which may be missing (col -1: a file of an older version), each
 * row through row.
 */
static int read_table(struct ex_data *d, FILE *f, const char *name, const char *const *cols,
		      size_t ncols, size_t nopt, const char *what, row_fn row, char *err,
		      size_t errlen)
{
	struct rp_reader rd = { .f = f, .name = name };
	char *hdr[MAX_FIELDS], *fld[MAX_FIELDS];
	int col[MAX_FIELDS], r, n, ret = -1;
	size_t nhdr;

	r = rp_next_line(&rd);
	if (r < 0) {
		rp_reader_err(err, errlen, &rd, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (r == 0) {
		rp_reader_err(err, errlen, &rd, "empty file, no header");
		goto out;
	}
	n = rp_csv_split(rd.line, hdr, MAX_FIELDS);
	if (n < 0 || n > MAX_FIELDS) {
		rp_reader_err(err, errlen, &rd, "unreadable header");
		goto out;
	}
	nhdr = (size_t)n;
	for (size_t i = 0; i < ncols; i++) {
		col[i] = rp_col(hdr, nhdr, cols[i]);
		if (col[i] < 0 && i < ncols - nopt) {
			rp_reader_err(err, errlen, &rd, "not a memattr-bpf %s (no column '%s' in the header)",
				      what, cols[i]);
			goto out;
		}
	}
	while ((r = rp_next_line(&rd)) > 0) {
		if (!rd.line[0])
			continue;
		n = rp_csv_split(rd.line, fld, MAX_FIELDS);
		if (n < 0 || (size_t)n != nhdr) {
			if (n < 0)
				rp_reader_err(err, errlen, &rd, "bad quoting");
			else
				rp_reader_err(err, errlen, &rd, "%d fields, the header has %zu", n, nhdr);
			goto out;
		}
		if (row(d, &rd, fld, col, err, errlen))
			goto out;
	}
	if (r < 0) {
		rp_reader_err(err, errlen, &rd, "cannot read: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(rd.line);
	return ret;
}

static int add_site_at(struct ex_data *d, struct rp_reader *rd, char **fld, const int *col,
		       bool at_peak, char *err, size_t errlen)
{
	struct ex_site row;
	size_t nlib, nsite;

	if (site_row(rd, fld, col, &row, err, errlen))
		return -1;
	if (!proc_wanted(d, row.rank, row.pid))
		return 0;
	nlib = strlen(fld[col[S_LIB]]) + 1;
	nsite = strlen(fld[col[S_SITE]]) + 1;
	if (rp_table_charge(&d->run, rd, sizeof(row) + nlib + nsite, err, errlen))
		return -1;
	row.at_peak = at_peak;
	row.library = malloc(nlib + nsite);
	if (!row.library || table_grow((void **)&d->sites, d->nsites, &d->sites_cap,
				       sizeof(*d->sites))) {
		free(row.library);
		rp_reader_err(err, errlen, rd, "out of memory");
		return -1;
	}
	memcpy(row.library, fld[col[S_LIB]], nlib);
	memcpy(row.library + nlib, fld[col[S_SITE]], nsite);
	row.site = row.library + nlib;
	d->sites[d->nsites++] = row;
	return 0;
}

static int add_site(struct ex_data *d, struct rp_reader *rd, char **fld, const int *col,
		    char *err, size_t errlen)
{
	return add_site_at(d, rd, fld, col, false, err, errlen);
}

static int add_peak_site(struct ex_data *d, struct rp_reader *rd, char **fld, const int *col,
			 char *err, size_t errlen)
{
	return add_site_at(d, rd, fld, col, true, err, errlen);
}

int ex_read_sites(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen)
{
	if (read_table(d, f, name, site_cols, NCOLS_SITE, 0, "heap_sites.csv", add_site, err, errlen))
		return -1;
	d->has_sites = true;
	return 0;
}

int ex_read_peak_sites(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen)
{
	if (read_table(d, f, name, site_cols, NCOLS_SITE, 0, "heap_sites_peak.csv", add_peak_site,
		       err, errlen))
		return -1;
	d->has_peak_sites = true;
	return 0;
}

enum { K_RANK, K_PID, K_COMP, K_STACK, K_RSS, K_PEAK, K_IDS, NCOLS_STACK };

/* build_ids last: optional, the files of a version before it have none. */
static const char *const stack_cols[NCOLS_STACK] = {
	"rank", "pid", "component", "stack", "rss_bytes", "peak_rss_bytes", "build_ids",
};

static int add_stack(struct ex_data *d, struct rp_reader *rd, char **fld, const int *col,
		     char *err, size_t errlen)
{
	struct ex_stack row = { 0 };
	const char *bad = NULL;
	size_t nframes, nids;

	if (parse_id(fld[col[K_RANK]], true, 0, &row.rank))
		bad = "rank";
	else if (parse_id(fld[col[K_PID]], false, 1, &row.pid))
		bad = "pid";
	else if (!fld[col[K_COMP]][0] || strlen(fld[col[K_COMP]]) >= sizeof(row.component))
		bad = "component";
	else if (!fld[col[K_STACK]][0])
		bad = "stack";
	else if (rp_parse_i64(fld[col[K_RSS]], 0, &row.rss))
		bad = "rss_bytes";
	else if (rp_parse_i64(fld[col[K_PEAK]], 0, &row.peak_rss))
		bad = "peak_rss_bytes";
	else if (col[K_IDS] >= 0 && fld[col[K_IDS]][strspn(fld[col[K_IDS]], "0123456789abcdef;")])
		bad = "build_ids";
	if (bad) {
		rp_reader_err(err, errlen, rd, "bad value in column %s", bad);
		return -1;
	}
	if (!proc_wanted(d, row.rank, row.pid))
		return 0;
	nframes = strlen(fld[col[K_STACK]]) + 1;
	nids = col[K_IDS] >= 0 && fld[col[K_IDS]][0] ? strlen(fld[col[K_IDS]]) + 1 : 0;
	if (rp_table_charge(&d->run, rd, sizeof(row) + nframes + nids, err, errlen))
		return -1;
	snprintf(row.component, sizeof(row.component), "%s", fld[col[K_COMP]]);
	row.frames = strdup(fld[col[K_STACK]]);
	if (nids)
		row.build_ids = strdup(fld[col[K_IDS]]);
	if (!row.frames || (nids && !row.build_ids) ||
	    table_grow((void **)&d->stacks, d->nstacks, &d->stacks_cap, sizeof(*d->stacks))) {
		free(row.frames);
		free(row.build_ids);
		rp_reader_err(err, errlen, rd, "out of memory");
		return -1;
	}
	d->stacks[d->nstacks++] = row;
	return 0;
}

int ex_read_stacks(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen)
{
	if (read_table(d, f, name, stack_cols, NCOLS_STACK, 1, "alloc_stacks.csv", add_stack, err,
		       errlen))
		return -1;
	d->has_stacks = true;
	return 0;
}

/*
 * An optional file of the run (heap_sites.csv: --heap; heap_sites_peak.csv
 * and alloc_stacks.csv: a newer tracer).
 */
static int load_optional(struct ex_data *d, int dirfd, const char *dir, const char *file,
			 int (*fn)(struct ex_data *, FILE *, const char *, char *, size_t),
			 char *err, size_t errlen)
{
	char path[4200];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	/* As the report opens its files: no symlink, FIFO or device; no hard link for root. */
	f = safe_fopenat(dirfd, file, geteuid() == 0 ? 0 : SAFE_ANY_NLINK, RP_MAX_FILE);
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: cannot open: %s", path, safe_open_strerror(errno));
		return -1;
	}
	ret = fn(d, f, path, err, errlen);
	fclose(f);
	return ret;
}

int ex_load(struct ex_data *d, const char *dir, const struct ex_select *sel, char *err,
	    size_t errlen)
{
	int dirfd, ret;

	memset(d, 0, sizeof(*d));
	d->run.keep_pss = true;
	/* What a profile or a diff can show, in bounded memory (ex_load's comment). */
	d->run.tables_bounded = true;
	/*
	 * Bounded memory, as `report` reads: a long timeline is thinned as it
	 * is read. What export and diff show of it stays exact: the first
	 * sample of the largest total and the last are always kept, the last
	 * at or before --at's time is kept on request, and each component's
	 * peaks come from every sample (rp_proc_peak).
	 */
	d->run.max_samples = RP_PROC_SAMPLES;
	if (sel && sel->at == EX_AT_TIME) {
		d->run.keep_at = true;
		d->run.keep_at_t = sel->at_time;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, errno == ENOTDIR ? "not a directory" : strerror(errno));
		return -1;
	}
	ret = rp_load_dir(&d->run, dirfd, dir, err, errlen);
	if (!ret)
		ret = load_optional(d, dirfd, dir, FILE_HEAP_SITES, ex_read_sites, err, errlen);
	if (!ret)
		ret = load_optional(d, dirfd, dir, FILE_HEAP_SITES_PEAK, ex_read_peak_sites, err,
				    errlen);
	if (!ret)
		ret = load_optional(d, dirfd, dir, FILE_ALLOC_STACKS, ex_read_stacks, err, errlen);
	close(dirfd);
	if (ret)
		ex_data_free(d);
	return ret;
}

void ex_data_free(struct ex_data *d)
{
	rp_run_free(&d->run);
	for (size_t i = 0; i < d->nsites; i++)
		free(d->sites[i].library);
	free(d->sites);
	for (size_t i = 0; i < d->nstacks; i++) {
		free(d->stacks[i].frames);
		free(d->stacks[i].build_ids);
	}
	free(d->stacks);
	memset(d, 0, sizeof(*d));
}

int ex_parse_at(const char *s, enum ex_at *at, double *t)
{
	*t = 0;
	if (!strcmp(s, "peak")) {
		*at = EX_AT_PEAK;
		return 0;
	}
	if (!strcmp(s, "end")) {
		*at = EX_AT_END;
		return 0;
	}
	*at = EX_AT_TIME;
	return rp_parse_time(s, t);
}

long ex_pick(const struct rp_proc *p, enum ex_at at, double t)
{
	long best = -1;

	if (!p->n)
		return -1;
	switch (at) {
	case EX_AT_END:
		return (long)p->n - 1;
	case EX_AT_PEAK:
		/* The first of equal peaks: when the process got there. */
		best = 0;
		for (size_t i = 1; i < p->n; i++)
			if (p->rss[0][i] > p->rss[0][best])
				best = (long)i;
		return best;
	case EX_AT_TIME:
		for (size_t i = 0; i < p->n && p->t[i] <= t; i++)
			best = (long)i;
		return best;
	}
	return -1;
}
