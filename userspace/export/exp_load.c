// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a dataset for export and diff: report's readers do the
 * timelines, summary.csv, mpi_calls.csv and run_info.csv (asked to keep
 * every component's pss); heap_sites.csv is read here, the report having
 * no use for it. The same rules as the report's: columns by header name,
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
	else if (!fld[col[S_LIB]][0] || strlen(fld[col[S_LIB]]) >= sizeof(r->library))
		bad = "library";
	else if (!fld[col[S_SITE]][0] || strlen(fld[col[S_SITE]]) >= sizeof(r->site))
		bad = "site";
	for (size_t i = 0; !bad && i < sizeof(num) / sizeof(num[0]); i++)
		if (rp_parse_i64(fld[col[num[i]]], 0, dst[i]))
			bad = site_cols[num[i]];
	if (bad) {
		rp_reader_err(err, errlen, rd, "bad value in column %s", bad);
		return -1;
	}
	snprintf(r->library, sizeof(r->library), "%s", fld[col[S_LIB]]);
	snprintf(r->site, sizeof(r->site), "%s", fld[col[S_SITE]]);
	return 0;
}

int ex_read_sites(struct ex_data *d, FILE *f, const char *name, char *err, size_t errlen)
{
	struct rp_reader rd = { .f = f, .name = name };
	char *hdr[MAX_FIELDS], *fld[MAX_FIELDS];
	int col[NCOLS_SITE], r, n, ret = -1;
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
	for (size_t i = 0; i < NCOLS_SITE; i++) {
		col[i] = rp_col(hdr, nhdr, site_cols[i]);
		if (col[i] < 0) {
			rp_reader_err(err, errlen, &rd,
				      "not a memattr-bpf heap_sites.csv (no column '%s' in the header)",
				      site_cols[i]);
			goto out;
		}
	}
	while ((r = rp_next_line(&rd)) > 0) {
		struct ex_site row, *grown;

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
		if (site_row(&rd, fld, col, &row, err, errlen))
			goto out;
		grown = realloc(d->sites, (d->nsites + 1) * sizeof(*grown));
		if (!grown) {
			rp_reader_err(err, errlen, &rd, "out of memory");
			goto out;
		}
		d->sites = grown;
		d->sites[d->nsites++] = row;
	}
	if (r < 0) {
		rp_reader_err(err, errlen, &rd, "cannot read: %s", strerror(errno));
		goto out;
	}
	d->has_sites = true;
	ret = 0;
out:
	free(rd.line);
	return ret;
}

/* heap_sites.csv when the run has one (a run without --heap has none). */
static int load_sites(struct ex_data *d, int dirfd, const char *dir, char *err, size_t errlen)
{
	char path[4200];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, FILE_HEAP_SITES);
	/* As the report opens its files: no symlink, FIFO or device; no hard link for root. */
	f = safe_fopenat(dirfd, FILE_HEAP_SITES, geteuid() == 0 ? 0 : SAFE_ANY_NLINK, RP_MAX_FILE);
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: cannot open: %s", path, safe_open_strerror(errno));
		return -1;
	}
	ret = ex_read_sites(d, f, path, err, errlen);
	fclose(f);
	return ret;
}

int ex_load(struct ex_data *d, const char *dir, char *err, size_t errlen)
{
	int dirfd, ret;

	memset(d, 0, sizeof(*d));
	d->run.keep_pss = true;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, errno == ENOTDIR ? "not a directory" : strerror(errno));
		return -1;
	}
	ret = rp_load_dir(&d->run, dirfd, dir, err, errlen);
	if (!ret)
		ret = load_sites(d, dirfd, dir, err, errlen);
	close(dirfd);
	if (ret)
		ex_data_free(d);
	return ret;
}

void ex_data_free(struct ex_data *d)
{
	rp_run_free(&d->run);
	free(d->sites);
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
