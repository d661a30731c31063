// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a run's CSVs for the report.
 *
 * Columns are found by header name, so files with extra columns (a newer
 * tracer) read fine, and a file whose header lacks ours (another tool's) is
 * refused. A run may still be going: its files end in a line cut short,
 * which is ignored, and the last sample of a timeline may be missing rows
 * (stdio flushed mid-sample), which is detected by the partition rule (the
 * components sum to `total`) and ignored too. Anything else that does not
 * parse is an error naming the file and line: a report drawn from numbers
 * we misread would be worse than none.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "columns.h"
#include "gz_read.h"
#include "report.h"
#include "safe_open.h"

#define MAX_FIELDS	64


void rp_reader_err(char *err, size_t errlen, const struct rp_reader *rd, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	if (rd->lineno)
		n = snprintf(err, errlen, "%s:%zu: ", rd->name, rd->lineno);
	else
		n = snprintf(err, errlen, "%s: ", rd->name);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/*
 * A line is read a byte at a time into a buffer that stops growing at
 * RP_MAX_LINE: a file of one endless line (16 GiB are allowed) must not
 * become a 16 GiB buffer.
 */
int rp_next_line(struct rp_reader *rd)
{
	size_t len = 0;
	bool nul = false;
	int ch;

	errno = 0;
	for (;;) {
		ch = getc_unlocked(rd->f);
		if (ch == EOF) {
			if (ferror(rd->f)) {
				errno = errno ? errno : EIO;
				return -1;
			}
			/* The last line had no newline: it is still being written. */
			if (len)
				rd->partial = true;
			return 0;
		}
		if (ch == '\n')
			break;
		if (len + 1 >= rd->cap) {
			size_t cap = rd->cap ? rd->cap * 2 : 256;
			char *q;

			if (rd->cap >= RP_MAX_LINE) {
				rd->lineno++;
				errno = EMSGSIZE;
				return -1;
			}
			cap = cap < RP_MAX_LINE ? cap : RP_MAX_LINE;
			q = realloc(rd->line, cap);
			if (!q)
				return -1;
			rd->line = q;
			rd->cap = cap;
		}
		nul |= !ch;
		rd->line[len++] = (char)ch;
	}
	if (!rd->line) {
		rd->line = malloc(256);
		if (!rd->line)
			return -1;
		rd->cap = 256;
	}
	rd->lineno++;
	rd->line[len] = '\0';
	if (len && rd->line[len - 1] == '\r')
		rd->line[--len] = '\0';
	if (nul) {
		errno = EILSEQ;
		return -1;
	}
	return 1;
}

const char *rp_read_strerror(int e)
{
	return e == EMSGSIZE ? "line longer than " RP_MAX_LINE_TEXT " bytes" : strerror(e);
}

int rp_csv_split(char *line, char **fields, size_t max)
{
	char *r = line, *w = line;
	int n = 0;

	for (;;) {
		char *start = w;

		if (*r == '"') {
			/* Quoted: "" is a quote, the field ends at the closing quote. */
			r++;
			for (;;) {
				if (!*r)
					return -1;
				if (*r == '"') {
					if (r[1] != '"')
						break;
					r++;
				}
				*w++ = *r++;
			}
			r++;
			if (*r && *r != ',')
				return -1;
		} else {
			while (*r && *r != ',') {
				if (*r == '"')
					return -1;
				*w++ = *r++;
			}
		}
		if ((size_t)n < max)
			fields[n] = start;
		n++;
		if (!*r) {
			*w = '\0';
			return n;
		}
		/* w <= r: ending the field here never overwrites unread text. */
		*w++ = '\0';
		r++;
	}
}

int rp_col(char *const *hdr, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(hdr[i], name))
			return (int)i;
	return -1;
}

int rp_parse_i64(const char *s, int64_t min, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(const char *s, int min, int *out)
{
	int64_t v;

	if (rp_parse_i64(s, min, &v) || v > 0x7fffffff)
		return -1;
	*out = (int)v;
	return 0;
}

int rp_parse_time(const char *s, double *out)
{
	char *end;

	if (!*s || !strchr("0123456789.", *s))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (errno || *end || !isfinite(*out) || *out < 0)
		return -1;
	return 0;
}

/* An empty rank field is a process that is not a rank. */
static int parse_rank(const char *s, int *out)
{
	if (!*s) {
		*out = -1;
		return 0;
	}
	return parse_int(s, 0, out);
}

/* Header line into hdr[]; the file must have one, complete. */
static int read_header(struct rp_reader *rd, char **hdr, size_t *nhdr, char *err, size_t errlen)
{
	int r = rp_next_line(rd), n;

	if (r < 0) {
		rp_reader_err(err, errlen, rd, "cannot read: %s", rp_read_strerror(errno));
		return -1;
	}
	if (r == 0) {
		rd->lineno = 1;
		rp_reader_err(err, errlen, rd, rd->partial ? "header line is cut short (truncated file)"
						    : "empty file, no header");
		return -1;
	}
	n = rp_csv_split(rd->line, hdr, MAX_FIELDS);
	if (n < 0 || n > MAX_FIELDS) {
		rp_reader_err(err, errlen, rd, "unreadable header");
		return -1;
	}
	*nhdr = (size_t)n;
	return 0;
}

/*
 * Find the named columns; every one is required unless marked optional with
 * a leading '?'. idx[i] is -1 for an absent optional one.
 */
static int find_cols(struct rp_reader *rd, char **hdr, size_t nhdr, const char *what,
		     const char *const *names, size_t nnames, int *idx, char *err, size_t errlen)
{
	for (size_t i = 0; i < nnames; i++) {
		bool optional = names[i][0] == '?';
		const char *name = names[i] + optional;

		idx[i] = rp_col(hdr, nhdr, name);
		if (idx[i] < 0 && !optional) {
			rp_reader_err(err, errlen, rd, "not a %s (no column '%s' in the header)", what, name);
			return -1;
		}
	}
	return 0;
}

/* The fields of one data row; the row must have as many as the header. */
static int split_row(struct rp_reader *rd, char **fld, size_t nhdr, char *err, size_t errlen)
{
	int n = rp_csv_split(rd->line, fld, MAX_FIELDS);

	if (n < 0) {
		rp_reader_err(err, errlen, rd, "bad quoting");
		return -1;
	}
	if ((size_t)n != nhdr) {
		rp_reader_err(err, errlen, rd, "%d fields, the header has %zu", n, nhdr);
		return -1;
	}
	return 0;
}

static int bad_field(struct rp_reader *rd, const char *col, const char *val, char *err, size_t errlen)
{
	rp_reader_err(err, errlen, rd, "bad value '%.40s' in column %s", val, col);
	return -1;
}

static int read_error(struct rp_reader *rd, char *err, size_t errlen)
{
	rp_reader_err(err, errlen, rd, "cannot read: %s", rp_read_strerror(errno));
	return -1;
}

int rp_comp_find(const struct rp_run *run, const char *name)
{
	for (size_t i = 0; i < run->ncomp; i++)
		if (!strcmp(run->comp[i], name))
			return (int)i;
	return -1;
}

/* name's index in a list of names, appended on first sight; -1: out of memory. */
static int intern(char ***names, size_t *n, const char *name)
{
	char **grown;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return (int)i;
	grown = realloc(*names, (*n + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	*names = grown;
	grown[*n] = strdup(name);
	if (!grown[*n])
		return -1;
	return (int)(*n)++;
}

/* Index of a component, registered on first sight; hint is tried first. */
static int comp_index(struct rp_run *run, const char *name, size_t hint)
{
	if (hint < run->ncomp && !strcmp(run->comp[hint], name))
		return (int)hint;
	return intern(&run->comp, &run->ncomp, name);
}

static int proc_grow(struct rp_proc *p, size_t want)
{
	size_t cap = p->cap ? p->cap : 64;
	void *q;

	if (want <= p->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	q = realloc(p->t, cap * sizeof(*p->t));
	if (!q)
		return -1;
	p->t = q;
	q = realloc(p->pss_total, cap * sizeof(*p->pss_total));
	if (!q)
		return -1;
	p->pss_total = q;
	for (size_t c = 0; c < p->nrss; c++) {
		if (!p->rss[c])
			continue;
		q = realloc(p->rss[c], cap * sizeof(**p->rss));
		if (!q)
			return -1;
		p->rss[c] = q;
		if (!p->pss)
			continue;
		q = realloc(p->pss[c], cap * sizeof(**p->pss));
		if (!q)
			return -1;
		p->pss[c] = q;
	}
	p->cap = cap;
	return 0;
}

/* Room for c + 1 entries in a per-component table (rss or pss), NULLs new. */
static int64_t **series_table(int64_t **tbl, size_t n, size_t c)
{
	int64_t **q = realloc(tbl, (c + 1) * sizeof(*q));

	if (q)
		memset(q + n, 0, (c + 1 - n) * sizeof(*q));
	return q;
}

/*
 * The array of component c in p, created (zeros so far) when new; with
 * keep_pss its pss array too, so that rss[c] and pss[c] exist together.
 */
static int64_t *proc_series(struct rp_proc *p, size_t c, bool keep_pss)
{
	if (keep_pss && !p->pss) {
		p->pss = calloc(p->nrss ? p->nrss : 1, sizeof(*p->pss));
		if (!p->pss)
			return NULL;
	}
	if (c >= p->nrss) {
		int64_t **q = series_table(p->rss, p->nrss, c);

		if (!q)
			return NULL;
		p->rss = q;
		if (p->pss) {
			q = series_table(p->pss, p->nrss, c);
			if (!q)
				return NULL;
			p->pss = q;
		}
		p->nrss = c + 1;
	}
	if (p->pss && !p->pss[c]) {
		p->pss[c] = calloc(p->cap, sizeof(**p->pss));
		if (!p->pss[c])
			return NULL;
	}
	if (!p->rss[c])
		p->rss[c] = calloc(p->cap, sizeof(**p->rss));
	return p->rss[c];
}

static int proc_new_sample(struct rp_proc *p, double t)
{
	if (proc_grow(p, p->n + 1))
		return -1;
	p->t[p->n] = t;
	p->pss_total[p->n] = -1;
	for (size_t c = 0; c < p->nrss; c++) {
		if (p->rss[c])
			p->rss[c][p->n] = 0;
		if (p->pss && p->pss[c])
			p->pss[c][p->n] = 0;
	}
	p->n++;
	return 0;
}

static void proc_free(struct rp_proc *p)
{
	for (size_t c = 0; c < p->nrss; c++) {
		free(p->rss[c]);
		if (p->pss)
			free(p->pss[c]);
	}
	free(p->rss);
	free(p->pss);
	free(p->t);
	free(p->pss_total);
	free(p->tot);
	free(p->grp);
	free(p->rss_peak);
	free(p->pss_peaks);
	free(p->gaps);
	memset(p, 0, sizeof(*p));
}

enum { C_TIME, C_RANK, C_PID, C_COMP, C_RSS, C_PSS, C_NODE, NCOLS_PROC };

static const char *const proc_cols[NCOLS_PROC] = {
	COL_TIME, COL_RANK, COL_PID, COL_COMPONENT, COL_RSS, COL_PSS,
	"?node",	/* "?" COL_NODE: optional, only in a merged dataset */
};


/*
 * The timeline is read in two passes over the file (report_csv.c's
 * streaming reader): the first checks every row, counts the whole samples
 * and keeps what thinning would lose (each component's peak, the total's
 * peak pss, the first gaps); the second keeps the samples, all of them or
 * - past run->max_samples - per slice of time the first sample with the
 * largest total and the first with the smallest (and, with
 * run->keep_at, the last sample at or before run->keep_at_t). Only one
 * sample's rows are held at a time, so memory does not grow with the file.
 */
struct sample {
	double t;
	int64_t *rss, *pss;	/* [room]: this sample's rows, 0 where absent */
	int64_t pss_total;
	size_t idx;		/* its index among the file's whole samples */
};

struct proc_pass {
	int second;		/* 0: counting and checking; 1: keeping */
	size_t room;		/* entries of the per-component arrays below */
	bool *present;		/* components with a row anywhere in the file */
	size_t ncomp;		/* highest present component + 1 */
	struct sample cur;	/* the sample being read */
	bool started, has_total;
	size_t n;		/* whole samples passed on */
	size_t want;		/* pass 2: samples the first pass counted */
	/* Pass 1's figures. */
	double t0, tlast;
	int64_t *peak;		/* [room] */
	int64_t *cpss_peak;	/* [room]: each component's largest pss */
	int64_t pss_peak;
	bool at_found;		/* run->keep_at: a sample at or before keep_at_t, */
	size_t at_idx;		/* the last such */
	double *gaps;
	size_t ngaps, max_gaps;
	/* Pass 2's thinning: slices of time, each keeping its hi and lo. */
	bool thin;
	size_t slices, k;
	struct sample hi, lo, at;
	bool has_hl, has_at;
};

static int grow_i64(int64_t **a, size_t old, size_t n)
{
	int64_t *q = realloc(*a, n * sizeof(*q));

	if (!q)
		return -1;
	memset(q + old, 0, (n - old) * sizeof(*q));
	*a = q;
	return 0;
}

/* Room for component c in every per-component array of the pass. */
static int pass_room(struct proc_pass *ps, size_t c)
{
	size_t n = ps->room ? ps->room : 8;
	bool *pr;

	if (c < ps->room)
		return 0;
	while (n <= c)
		n *= 2;
	if (grow_i64(&ps->cur.rss, ps->room, n) || grow_i64(&ps->cur.pss, ps->room, n) ||
	    grow_i64(&ps->hi.rss, ps->room, n) || grow_i64(&ps->hi.pss, ps->room, n) ||
	    grow_i64(&ps->lo.rss, ps->room, n) || grow_i64(&ps->lo.pss, ps->room, n) ||
	    grow_i64(&ps->at.rss, ps->room, n) || grow_i64(&ps->at.pss, ps->room, n) ||
	    grow_i64(&ps->peak, ps->room, n) || grow_i64(&ps->cpss_peak, ps->room, n))
		return -1;
	pr = realloc(ps->present, n * sizeof(*pr));
	if (!pr)
		return -1;
	memset(pr + ps->room, 0, (n - ps->room) * sizeof(*pr));
	ps->present = pr;
	ps->room = n;
	return 0;
}

static void pass_free(struct proc_pass *ps)
{
	free(ps->cur.rss);
	free(ps->cur.pss);
	free(ps->hi.rss);
	free(ps->hi.pss);
	free(ps->lo.rss);
	free(ps->lo.pss);
	free(ps->at.rss);
	free(ps->at.pss);
	free(ps->peak);
	free(ps->cpss_peak);
	free(ps->present);
	free(ps->gaps);
}

static void sample_copy(struct sample *to, const struct sample *from, size_t ncomp)
{
	to->t = from->t;
	to->pss_total = from->pss_total;
	to->idx = from->idx;
	memcpy(to->rss, from->rss, ncomp * sizeof(*to->rss));
	memcpy(to->pss, from->pss, ncomp * sizeof(*to->pss));
}

/* One more sample in p, its values from s. */
static int proc_append(struct rp_proc *p, const struct proc_pass *ps, const struct sample *s,
		       bool keep_pss)
{
	if (proc_new_sample(p, s->t))
		return -1;
	p->pss_total[p->n - 1] = s->pss_total;
	for (size_t c = 0; c < ps->ncomp; c++) {
		int64_t *series;

		if (!ps->present[c])
			continue;
		series = proc_series(p, c, keep_pss);
		if (!series)
			return -1;
		series[p->n - 1] = s->rss[c];
		if (p->pss)
			p->pss[c][p->n - 1] = s->pss[c];
	}
	return 0;
}

/*
 * The slice's first largest and first smallest total, and the sample kept
 * for run->keep_at if it is in this slice: in time order, each once.
 */
static int flush_slice(struct rp_proc *p, struct proc_pass *ps, bool keep_pss)
{
	const struct sample *s[3] = { &ps->hi, &ps->lo, &ps->at }, *tmp;
	size_t n = ps->has_at ? 3 : 2;

	if (!ps->has_hl)
		return 0;
	ps->has_hl = ps->has_at = false;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && s[j - 1]->idx > s[j]->idx; j--) {
			tmp = s[j];
			s[j] = s[j - 1];
			s[j - 1] = tmp;
		}
	for (size_t i = 0; i < n; i++)
		if ((!i || s[i]->idx != s[i - 1]->idx) && proc_append(p, ps, s[i], keep_pss))
			return -1;
	return 0;
}

/* A whole sample, passed to the pass's use of it. */
static int commit(struct rp_run *run, struct rp_proc *p, struct proc_pass *ps)
{
	struct sample *s = &ps->cur;

	s->idx = ps->n++;
	if (!ps->second) {
		if (s->idx == 0)
			ps->t0 = s->t;
		else if (s->idx < ps->max_gaps && s->t > ps->tlast)
			ps->gaps[ps->ngaps++] = s->t - ps->tlast;
		ps->tlast = s->t;
		for (size_t c = 0; c < ps->ncomp; c++) {
			if (s->rss[c] > ps->peak[c])
				ps->peak[c] = s->rss[c];
			if (s->pss[c] > ps->cpss_peak[c])
				ps->cpss_peak[c] = s->pss[c];
		}
		if (s->pss_total > ps->pss_peak)
			ps->pss_peak = s->pss_total;
		/* Times never go back: the last sample at or before it so far. */
		if (run->keep_at && s->t <= run->keep_at_t) {
			ps->at_found = true;
			ps->at_idx = s->idx;
		}
		return 0;
	}
	/* A file still being written may have grown since the first pass. */
	if (s->idx >= ps->want)
		return 0;
	if (!ps->thin || s->idx == 0)
		return proc_append(p, ps, s, run->keep_pss);
	if (s->idx == ps->want - 1)
		return flush_slice(p, ps, run->keep_pss) || proc_append(p, ps, s, run->keep_pss) ? -1 : 0;
	/* Slice k ends at t0 + span * (k + 1) / slices; the last one takes the rest. */
	while (ps->k + 1 < ps->slices &&
	       s->t > ps->t0 + (ps->tlast - ps->t0) * (double)(ps->k + 1) / (double)ps->slices) {
		if (flush_slice(p, ps, run->keep_pss))
			return -1;
		ps->k++;
	}
	if (!ps->has_hl || s->rss[0] > ps->hi.rss[0])
		sample_copy(&ps->hi, s, ps->ncomp);
	if (!ps->has_hl || s->rss[0] < ps->lo.rss[0])
		sample_copy(&ps->lo, s, ps->ncomp);
	ps->has_hl = true;
	if (ps->at_found && s->idx == ps->at_idx) {
		sample_copy(&ps->at, s, ps->ncomp);
		ps->has_at = true;
	}
	return 0;
}

/* A sample whose rows all came: a total, and the components add up to it. */
static bool cur_whole(const struct proc_pass *ps)
{
	int64_t sum = 0;

	if (!ps->has_total)
		return false;
	for (size_t c = 1; c < ps->ncomp; c++)
		sum = rp_sat_add(sum, ps->cur.rss[c]);
	return sum == ps->cur.rss[0];
}

/* One pass over the rows of the timeline; the reader is past the header. */
static int read_proc_rows(struct rp_run *run, struct rp_proc *p, struct proc_pass *ps,
			  struct rp_reader *rd, const int *col, size_t nhdr, char *err, size_t errlen)
{
	char *fld[MAX_FIELDS];
	/* Rows come in the same order every sample: guess each from the last one. */
	int order[128] = { 0 };
	size_t pos = 0;
	int r;

	while ((r = rp_next_line(rd)) > 0) {
		int64_t rss, pss;
		double t;
		int rank, pid, c;

		if (!rd->line[0])
			continue;
		if (split_row(rd, fld, nhdr, err, errlen))
			return -1;
		if (rp_parse_time(fld[col[C_TIME]], &t))
			return bad_field(rd, "time_s", fld[col[C_TIME]], err, errlen);
		if (parse_rank(fld[col[C_RANK]], &rank))
			return bad_field(rd, "rank", fld[col[C_RANK]], err, errlen);
		if (parse_int(fld[col[C_PID]], 1, &pid))
			return bad_field(rd, "pid", fld[col[C_PID]], err, errlen);
		if (!fld[col[C_COMP]][0])
			return bad_field(rd, COL_COMPONENT, "", err, errlen);
		if (rp_parse_i64(fld[col[C_RSS]], 0, &rss))
			return bad_field(rd, COL_RSS, fld[col[C_RSS]], err, errlen);
		if (rp_parse_i64(fld[col[C_PSS]], 0, &pss))
			return bad_field(rd, COL_PSS, fld[col[C_PSS]], err, errlen);
		if (!ps->started) {
			p->rank = rank;
			p->pid = pid;
			if (col[C_NODE] >= 0) {
				if (!fld[col[C_NODE]][0])
					return bad_field(rd, COL_NODE, "", err, errlen);
				p->node = intern(&run->nodes, &run->nnodes, fld[col[C_NODE]]);
				if (p->node < 0)
					goto oom;
			}
		} else if (pid != p->pid || rank != p->rank) {
			rp_reader_err(err, errlen, rd, "rank/pid %d/%d differ from the file's first row (%d/%d)",
			       rank, pid, p->rank, p->pid);
			return -1;
		} else if (t < ps->cur.t) {
			rp_reader_err(err, errlen, rd, "time_s goes back (%.3f after %.3f)", t, ps->cur.t);
			return -1;
		}
		if (!strcmp(fld[col[C_COMP]], "total"))
			pos = 0;
		c = comp_index(run, fld[col[C_COMP]], pos < 128 && ps->started ? (size_t)order[pos] : 0);
		if (c < 0 || pass_room(ps, (size_t)c))
			goto oom;
		if (pos < 128)
			order[pos] = c;
		pos++;
		/* A sample begins with a new time, or with a second `total` row at the same one. */
		if (!ps->started || t != ps->cur.t || (c == 0 && ps->has_total)) {
			if (ps->started) {
				if (!ps->has_total) {
					rp_reader_err(err, errlen, rd, "the sample before (time_s %.3f) has no total row",
						      ps->cur.t);
					return -1;
				}
				if (commit(run, p, ps))
					goto oom;
			}
			memset(ps->cur.rss, 0, ps->ncomp * sizeof(*ps->cur.rss));
			memset(ps->cur.pss, 0, ps->ncomp * sizeof(*ps->cur.pss));
			ps->cur.t = t;
			ps->cur.pss_total = -1;
			ps->started = true;
			ps->has_total = false;
		}
		if (!ps->present[c]) {
			ps->present[c] = true;
			if ((size_t)c >= ps->ncomp)
				ps->ncomp = (size_t)c + 1;
		}
		ps->cur.rss[c] = rss;
		ps->cur.pss[c] = pss;
		if (c == 0) {
			ps->has_total = true;
			ps->cur.pss_total = pss;
		}
	}
	if (r < 0)
		return read_error(rd, err, errlen);
	/* Only the last sample can be cut short by a writer still at work. */
	if (ps->started) {
		if (cur_whole(ps)) {
			if (commit(run, p, ps))
				goto oom;
		} else if (!ps->second) {
			run->dropped_samples++;
		}
	}
	if (rd->partial && !ps->second)
		run->partial_lines++;
	return 0;
oom:
	rp_reader_err(err, errlen, rd, "out of memory");
	return -1;
}

/* Back to the first line, for the second pass. */
static int reader_rewind(struct rp_reader *rd, char *err, size_t errlen)
{
	if (fseek(rd->f, 0, SEEK_SET)) {
		rp_reader_err(err, errlen, rd, "cannot read it a second time: %s", strerror(errno));
		return -1;
	}
	clearerr(rd->f);
	rd->lineno = 0;
	rd->partial = false;
	return 0;
}

/* Exactly n samples of room (a thinned timeline knows how many it keeps). */
static int proc_reserve(struct rp_proc *p, size_t n)
{
	p->t = malloc(n * sizeof(*p->t));
	p->pss_total = malloc(n * sizeof(*p->pss_total));
	if (!p->t || !p->pss_total)
		return -1;
	p->cap = n;
	return 0;
}

int rp_read_proc(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen)
{
	struct rp_reader rd = { .f = f, .name = name };
	struct rp_proc p = { .rank = -1, .node = -1 }, *grown;
	struct proc_pass ps = { .pss_peak = -1 };
	size_t max = run->max_samples, keep;
	int col[NCOLS_PROC];
	char *hdr[MAX_FIELDS];
	size_t nhdr;
	int ret = -1;

	/* "total" is component 0 in every run: the readers rely on it. */
	if (comp_index(run, "total", 0) != 0 || pass_room(&ps, 0)) {
		rp_reader_err(err, errlen, &rd, "out of memory");
		goto out;
	}
	/* The gaps rp_interval reads: those of the first samples, as many as are kept. */
	if (max) {
		ps.max_gaps = max < RP_MAX_GAPS ? max : RP_MAX_GAPS;
		ps.gaps = malloc(ps.max_gaps * sizeof(*ps.gaps));
		if (!ps.gaps) {
			rp_reader_err(err, errlen, &rd, "out of memory");
			goto out;
		}
	}
	if (read_header(&rd, hdr, &nhdr, err, errlen) ||
	    find_cols(&rd, hdr, nhdr, "memattr-bpf timeline", proc_cols, NCOLS_PROC, col,
		      err, errlen))
		goto out;
	if (read_proc_rows(run, &p, &ps, &rd, col, nhdr, err, errlen))
		goto out;
	/* A file with a header and no whole sample yet: a process just found. */
	if (ps.n == 0) {
		ret = 0;
		goto out;
	}
	ps.want = ps.n;
	/* Past max, per slice its largest and its smallest total, and the first and last sample. */
	ps.thin = max >= 4 && ps.want > max;
	ps.slices = (max - 2) / 2;
	keep = ps.thin ? max + ps.at_found : ps.want;
	ps.second = 1;
	ps.n = 0;
	ps.started = ps.has_total = false;
	if (reader_rewind(&rd, err, errlen) ||
	    read_header(&rd, hdr, &nhdr, err, errlen) ||
	    find_cols(&rd, hdr, nhdr, "memattr-bpf timeline", proc_cols, NCOLS_PROC, col,
		      err, errlen))
		goto out;
	if (proc_reserve(&p, keep)) {
		rp_reader_err(err, errlen, &rd, "out of memory");
		goto out;
	}
	if (read_proc_rows(run, &p, &ps, &rd, col, nhdr, err, errlen))
		goto out;
	if (ps.n < ps.want) {
		rp_reader_err(err, errlen, &rd, "changed while being read (%zu samples, then %zu)",
			      ps.want, ps.n);
		goto out;
	}
	snprintf(p.file, sizeof(p.file), "%s", strrchr(name, '/') ? strrchr(name, '/') + 1 : name);
	if (ps.thin) {
		/* What the kept samples alone would understate: the exact figures. */
		p.thinned = true;
		p.rss_peak = ps.peak;
		p.npeak = ps.ncomp;
		ps.peak = NULL;
		if (run->keep_pss) {
			p.pss_peaks = ps.cpss_peak;
			ps.cpss_peak = NULL;
		}
		p.pss_peak = ps.pss_peak;
		p.gaps = ps.gaps;
		p.ngaps = ps.ngaps;
		ps.gaps = NULL;
		run->thinned++;
	}
	grown = realloc(run->procs, (run->nprocs + 1) * sizeof(*grown));
	if (!grown) {
		rp_reader_err(err, errlen, &rd, "out of memory");
		goto out;
	}
	run->procs = grown;
	run->procs[run->nprocs++] = p;
	pass_free(&ps);
	free(rd.line);
	return 0;
out:
	proc_free(&p);
	pass_free(&ps);
	free(rd.line);
	return ret;
}

/*
 * Room for one more of n elements of size in *a, whose room is *cap: doubled
 * when full (one realloc per row copies the whole table each time, which a
 * long file makes quadratic). 0, or -1 out of memory.
 */
static int table_room(void *a, size_t n, size_t *cap, size_t size)
{
	size_t want = *cap ? *cap * 2 : 64;
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*(void **)a, want * size);
	if (!q)
		return -1;
	*(void **)a = q;
	*cap = want;
	return 0;
}

int rp_summary_cmp(int rank_a, int pid_a, int rank_b, int pid_b)
{
	unsigned int ra = (unsigned int)rank_a, rb = (unsigned int)rank_b;	/* -1: after every rank */

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (pid_a > pid_b) - (pid_a < pid_b);
}

static int cmp_summary_row(const void *a, const void *b)
{
	const struct rp_summary_row *x = a, *y = b;

	return rp_summary_cmp(x->rank, x->pid, y->rank, y->pid);
}

enum { S_RANK, S_PID, S_COMP, S_PEAK, S_PEAK_T, S_PSS, S_PSS_T, S_FINAL, NCOLS_SUM };

static const char *const sum_cols[NCOLS_SUM] = {
	COL_RANK, COL_PID, COL_COMPONENT, COL_PEAK_RSS, COL_PEAK_RSS_TIME,
	"?" COL_PEAK_PSS, "?" COL_PEAK_PSS_TIME, "?" COL_FINAL_RSS,
};

static int parse_sum_row(struct rp_reader *rd, char **fld, const int *col,
			 struct rp_summary_row *row, char *err, size_t errlen)
{
	if (parse_rank(fld[col[S_RANK]], &row->rank))
		return bad_field(rd, "rank", fld[col[S_RANK]], err, errlen);
	if (parse_int(fld[col[S_PID]], 1, &row->pid))
		return bad_field(rd, "pid", fld[col[S_PID]], err, errlen);
	snprintf(row->component, sizeof(row->component), "%s", fld[col[S_COMP]]);
	if (rp_parse_i64(fld[col[S_PEAK]], 0, &row->peak_rss))
		return bad_field(rd, COL_PEAK_RSS, fld[col[S_PEAK]], err, errlen);
	if (rp_parse_time(fld[col[S_PEAK_T]], &row->peak_rss_time))
		return bad_field(rd, "peak_rss_time_s", fld[col[S_PEAK_T]], err, errlen);
	row->peak_pss = row->final_rss = -1;
	row->peak_pss_time = -1;
	if (col[S_PSS] >= 0 && rp_parse_i64(fld[col[S_PSS]], 0, &row->peak_pss))
		return bad_field(rd, COL_PEAK_PSS, fld[col[S_PSS]], err, errlen);
	if (col[S_PSS_T] >= 0 && rp_parse_time(fld[col[S_PSS_T]], &row->peak_pss_time))
		return bad_field(rd, "peak_pss_time_s", fld[col[S_PSS_T]], err, errlen);
	if (col[S_FINAL] >= 0 && rp_parse_i64(fld[col[S_FINAL]], 0, &row->final_rss))
		return bad_field(rd, COL_FINAL_RSS, fld[col[S_FINAL]], err, errlen);
	return 0;
}

long rp_proc_find(const struct rp_run *run, int rank, int pid)
{
	size_t lo = 0, hi = run->nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = rp_summary_cmp(run->procs[mid].rank, run->procs[mid].pid, rank, pid);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The timeline a summary row is about, -1 when none was read. */
static long proc_of_row(const struct rp_run *run, const struct rp_summary_row *row)
{
	return rp_proc_find(run, row->rank, row->pid);
}

/*
 * bounded: the report reads a process's `total` row only, and only whether
 * there is one or several: other rows, rows of no timeline and a third row
 * of one are not kept (the figures are the same).
 */
static bool summary_row_wanted(const struct rp_run *run, const struct rp_summary_row *row,
			       unsigned char *seen)
{
	long i;

	if (!run->bounded)
		return true;
	if (strcmp(row->component, "total") || (i = proc_of_row(run, row)) < 0 || seen[i] >= 2)
		return false;
	seen[i]++;
	return true;
}

int rp_scan_summary(FILE *f, const char *name, rp_summary_fn fn, void *arg, char *err,
		    size_t errlen)
{
	struct rp_reader rd = { .f = f, .name = name };
	char *hdr[MAX_FIELDS], *fld[MAX_FIELDS];
	int col[NCOLS_SUM], r, ret = -1;
	size_t nhdr;

	if (read_header(&rd, hdr, &nhdr, err, errlen) ||
	    find_cols(&rd, hdr, nhdr, "memattr-bpf summary", sum_cols, NCOLS_SUM, col, err, errlen))
		goto out;
	while ((r = rp_next_line(&rd)) > 0) {
		struct rp_summary_row row;

		if (!rd.line[0])
			continue;
		if (split_row(&rd, fld, nhdr, err, errlen) ||
		    parse_sum_row(&rd, fld, col, &row, err, errlen))
			goto out;
		if (fn(&row, arg, err, errlen)) {
			/* fn's sentence, after the place it was found. */
			char why[RP_ERRLEN];

			snprintf(why, sizeof(why), "%s", err);
			rp_reader_err(err, errlen, &rd, "%s", why);
			goto out;
		}
	}
	if (r < 0) {
		read_error(&rd, err, errlen);
		goto out;
	}
	ret = 0;
out:
	free(rd.line);
	return ret;
}

struct summary_keep {
	struct rp_run *run;
	unsigned char *seen;	/* bounded: rows kept per timeline */
	size_t cap;
};

static int summary_keep_row(const struct rp_summary_row *row, void *arg, char *err,
			    size_t errlen)
{
	struct summary_keep *k = arg;
	struct rp_run *run = k->run;

	if (run->tables_bounded || !summary_row_wanted(run, row, k->seen))
		return 0;
	if (table_room(&run->summary, run->nsummary, &k->cap, sizeof(*run->summary))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	run->summary[run->nsummary++] = *row;
	return 0;
}

int rp_read_summary(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen)
{
	struct summary_keep k = { .run = run, .cap = run->nsummary };
	int ret;

	if (run->bounded && !(k.seen = calloc(run->nprocs ? run->nprocs : 1, 1))) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	ret = rp_scan_summary(f, name, summary_keep_row, &k, err, errlen);
	free(k.seen);
	if (ret)
		return -1;
	run->has_summary = true;
	/* Looked up once per process: a 100,000-rank job needs a sorted table, not a scan. */
	if (run->nsummary > 1)
		qsort(run->summary, run->nsummary, sizeof(*run->summary), cmp_summary_row);
	return 0;
}

enum { K_RANK, K_PID, K_FUNC, K_CALLS, K_GAIN, K_REL, K_NET, K_PEAK, K_FIRST, K_LAST, NCOLS_CALLS };

static const char *const call_cols[NCOLS_CALLS] = {
	"rank", "?pid", "function", "calls", "gained_bytes", "?released_bytes", "net_bytes",
	"?peak_bytes", "?first_growth_s", "?last_growth_s",
};

/* Optional growth time: absent or empty is -1 (the function never grew). */
static int opt_time(const char *s, double *out)
{
	if (!s || !*s) {
		*out = -1;
		return 0;
	}
	return rp_parse_time(s, out);
}

static int parse_call_row(struct rp_reader *rd, char **fld, const int *col,
			  struct rp_call_row *row, char *err, size_t errlen)
{
	const char *v;

	memset(row, 0, sizeof(*row));
	row->rows = 1;
	if (parse_rank(fld[col[K_RANK]], &row->rank))
		return bad_field(rd, "rank", fld[col[K_RANK]], err, errlen);
	row->pid = -1;
	if (col[K_PID] >= 0 && parse_int(fld[col[K_PID]], 1, &row->pid))
		return bad_field(rd, "pid", fld[col[K_PID]], err, errlen);
	if (!fld[col[K_FUNC]][0])
		return bad_field(rd, "function", "", err, errlen);
	snprintf(row->function, sizeof(row->function), "%s", fld[col[K_FUNC]]);
	/* Empty: a run without --mpi-calls has growth per function, not calls. */
	row->calls = -1;
	if (fld[col[K_CALLS]][0] && rp_parse_i64(fld[col[K_CALLS]], 0, &row->calls))
		return bad_field(rd, "calls", fld[col[K_CALLS]], err, errlen);
	if (rp_parse_i64(fld[col[K_GAIN]], 0, &row->gained))
		return bad_field(rd, "gained_bytes", fld[col[K_GAIN]], err, errlen);
	/* net may be negative: a call that released more than it took. */
	if (rp_parse_i64(fld[col[K_NET]], INT64_MIN, &row->net))
		return bad_field(rd, "net_bytes", fld[col[K_NET]], err, errlen);
	row->released = row->peak = -1;
	if (col[K_REL] >= 0 && rp_parse_i64(fld[col[K_REL]], 0, &row->released))
		return bad_field(rd, "released_bytes", fld[col[K_REL]], err, errlen);
	if (col[K_PEAK] >= 0 && rp_parse_i64(fld[col[K_PEAK]], 0, &row->peak))
		return bad_field(rd, "peak_bytes", fld[col[K_PEAK]], err, errlen);
	v = col[K_FIRST] >= 0 ? fld[col[K_FIRST]] : NULL;
	if (opt_time(v, &row->first_growth))
		return bad_field(rd, "first_growth_s", v, err, errlen);
	v = col[K_LAST] >= 0 ? fld[col[K_LAST]] : NULL;
	if (opt_time(v, &row->last_growth))
		return bad_field(rd, "last_growth_s", v, err, errlen);
	return 0;
}

/* r summed into a, as the report's table sums a function's rows (report_html.c). */
static void call_merge(struct rp_call_row *a, const struct rp_call_row *r)
{
	a->rows++;
	if (r->calls >= 0)
		a->calls = a->calls < 0 ? r->calls : rp_sat_add(a->calls, r->calls);
	a->gained = rp_sat_add(a->gained, r->gained);
	a->net = rp_sat_add(a->net, r->net);
	if (r->released >= 0)
		a->released = a->released < 0 ? r->released : rp_sat_add(a->released, r->released);
	if (r->peak > a->peak)
		a->peak = r->peak;
	if (r->first_growth >= 0 && (a->first_growth < 0 || r->first_growth < a->first_growth))
		a->first_growth = r->first_growth;
	if (r->last_growth > a->last_growth)
		a->last_growth = r->last_growth;
}

#define FUNC_SLOTS	(2 * RP_MAX_FUNCS)	/* a power of two */

/* The slot of function name in an open-addressing table of run->calls indices. */
static size_t func_slot(const struct rp_run *run, const int *slots, const char *name)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	for (size_t i = h & (FUNC_SLOTS - 1);; i = (i + 1) & (FUNC_SLOTS - 1))
		if (slots[i] < 0 || !strcmp(run->calls[slots[i]].function, name))
			return i;
}

/* bounded: row summed into its function's; 1 when there are too many functions. */
static int call_add_merged(struct rp_run *run, int *slots, const struct rp_call_row *row)
{
	size_t i = func_slot(run, slots, row->function);

	if (slots[i] >= 0) {
		call_merge(&run->calls[slots[i]], row);
		return 0;
	}
	if (run->ncalls >= RP_MAX_FUNCS)
		return 1;
	slots[i] = (int)run->ncalls;
	run->calls[run->ncalls++] = *row;
	return 0;
}

int rp_table_charge(struct rp_run *run, const struct rp_reader *rd, size_t size, char *err,
		    size_t errlen)
{
	if (!run->tables_bounded)
		return 0;
	if (size > RP_MAX_TABLE_BYTES - run->table_bytes) {
		rp_reader_err(err, errlen, rd,
			      "more than %u MiB of per-process rows to keep (the most export and diff keep of mpi_calls.csv, heap_sites*.csv and alloc_stacks.csv together)",
			      RP_MAX_TABLE_MIB);
		return -1;
	}
	run->table_bytes += size;
	return 0;
}

/*
 * tables_bounded: whether export or diff can use a row. A rank's rows
 * can (diff shows a rank mpi_calls.csv alone names); a process that is no
 * rank is found by its pid (an old file without pids: by any such process).
 */
static bool rp_call_wanted(const struct rp_run *run, const struct rp_call_row *row)
{
	if (!run->tables_bounded || row->rank >= 0)
		return true;
	/* Processes that are no rank come last (cmp_proc). */
	if (!run->nprocs || run->procs[run->nprocs - 1].rank >= 0)
		return false;
	return row->pid < 0 || rp_proc_find(run, -1, row->pid) >= 0;
}

int rp_read_calls(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen)
{
	struct rp_reader rd = { .f = f, .name = name };
	char *hdr[MAX_FIELDS], *fld[MAX_FIELDS];
	int col[NCOLS_CALLS], r, ret = -1;
	int *slots = NULL;
	size_t nhdr, cap = run->ncalls;

	/* One row per function, in a table of their most: a file of any length fits. */
	if (run->bounded) {
		struct rp_call_row *all = realloc(run->calls, RP_MAX_FUNCS * sizeof(*all));

		slots = malloc(FUNC_SLOTS * sizeof(*slots));
		if (all)
			run->calls = all;
		if (!all || !slots) {
			rp_reader_err(err, errlen, &rd, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < FUNC_SLOTS; i++)
			slots[i] = -1;
		for (size_t i = 0; i < run->ncalls; i++)
			slots[func_slot(run, slots, run->calls[i].function)] = (int)i;
	}

	if (read_header(&rd, hdr, &nhdr, err, errlen) ||
	    find_cols(&rd, hdr, nhdr, "memattr-bpf MPI call table", call_cols, NCOLS_CALLS, col,
		      err, errlen))
		goto out;
	while ((r = rp_next_line(&rd)) > 0) {
		struct rp_call_row row;

		if (!rd.line[0])
			continue;
		if (split_row(&rd, fld, nhdr, err, errlen) ||
		    parse_call_row(&rd, fld, col, &row, err, errlen))
			goto out;
		if (slots) {
			if (call_add_merged(run, slots, &row)) {
				rp_reader_err(err, errlen, &rd, "more than %d MPI functions", RP_MAX_FUNCS);
				goto out;
			}
			continue;
		}
		if (!rp_call_wanted(run, &row))
			continue;
		if (rp_table_charge(run, &rd, sizeof(row), err, errlen))
			goto out;
		if (table_room(&run->calls, run->ncalls, &cap, sizeof(*run->calls))) {
			rp_reader_err(err, errlen, &rd, "out of memory");
			goto out;
		}
		run->calls[run->ncalls++] = row;
	}
	if (r < 0) {
		read_error(&rd, err, errlen);
		goto out;
	}
	run->has_calls = true;
	ret = 0;
out:
	free(slots);
	free(rd.line);
	return ret;
}

int rp_read_info(struct rp_run *run, FILE *f, const char *name, char *err, size_t errlen)
{
	struct rp_reader rd = { .f = f, .name = name };
	char *fld[MAX_FIELDS];
	size_t cap = run->ninfo;
	int r, n, ret = -1;

	while ((r = rp_next_line(&rd)) > 0) {
		struct rp_kv kv;
		size_t used;

		if (!rd.line[0] || rd.line[0] == '#')
			continue;
		n = rp_csv_split(rd.line, fld, MAX_FIELDS);
		if (n < 2 || n > MAX_FIELDS || !fld[0][0]) {
			rp_reader_err(err, errlen, &rd, "expected key,value");
			goto out;
		}
		if (rd.lineno == 1 && !strcmp(fld[0], "key") && !strcmp(fld[1], "value"))
			continue;
		if (run->ninfo >= RP_MAX_INFO) {
			rp_reader_err(err, errlen, &rd, "more than %d keys", RP_MAX_INFO);
			goto out;
		}
		snprintf(kv.key, sizeof(kv.key), "%s", fld[0]);
		/* An unquoted value with commas in it: keep it whole. */
		used = (size_t)snprintf(kv.value, sizeof(kv.value), "%s", fld[1]);
		for (int i = 2; i < n && used < sizeof(kv.value); i++)
			used += (size_t)snprintf(kv.value + used, sizeof(kv.value) - used, ",%s", fld[i]);
		if (table_room(&run->info, run->ninfo, &cap, sizeof(*run->info))) {
			rp_reader_err(err, errlen, &rd, "out of memory");
			goto out;
		}
		run->info[run->ninfo++] = kv;
	}
	if (r < 0) {
		read_error(&rd, err, errlen);
		goto out;
	}
	run->has_info = true;
	ret = 0;
out:
	free(rd.line);
	return ret;
}

/*
 * "rank-<digits>.csv" or "pid-<digits>.csv", gzip'ed or not (--compress, the
 * node service); in a merged dataset "pid-<digits>@<node>.csv" (pids repeat
 * across nodes).
 */
static bool timeline_name(const char *name)
{
	const char *d;
	size_t len;

	if (!strncmp(name, "rank-", 5))
		d = name + 5;
	else if (!strncmp(name, "pid-", 4))
		d = name + 4;
	else
		return false;
	len = strspn(d, "0123456789");
	if (!len || len >= 12)
		return false;
	d += len;
	if (name[0] == 'p' && *d == '@') {
		/* The node name may hold dots: the suffix is found from the end. */
		size_t rest = strlen(d + 1);
		size_t suffix = rest > 7 && !strcmp(d + 1 + rest - 7, ".csv.gz") ? 7 :
				rest > 4 && !strcmp(d + 1 + rest - 4, ".csv") ? 4 : 0;

		len = strspn(d + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
		if (!suffix || len != rest || rest - suffix >= 64)
			return false;
		d += 1 + rest - suffix;
	}
	return !strcmp(d, ".csv") || !strcmp(d, ".csv.gz");
}

/*
 * Open name inside the run directory for reading; NULL with errno set. No
 * symlink, no FIFO or device, nothing larger than a run could write. Run
 * as root in a directory its owner controls, no hard link either: a link
 * to a root-only file would end up in the page. A user's own hard links
 * (a run copied with cp -al) give them nothing they could not read.
 */
static FILE *open_in(int dirfd, const char *name)
{
	return safe_fopenat(dirfd, name, geteuid() == 0 ? 0 : SAFE_ANY_NLINK, RP_MAX_FILE);
}

typedef int (*reader_fn)(struct rp_run *, FILE *, const char *, char *, size_t);

/* Read one file with fn; a missing optional file is fine. */
static int read_file(struct rp_run *run, int dirfd, const char *dir, const char *name,
		     bool optional, reader_fn fn, char *err, size_t errlen)
{
	char path[4200];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = open_in(dirfd, name);
	if (f && strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".gz"))
		f = gz_open_read(f, RP_MAX_FILE);
	if (!f) {
		if (optional && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: cannot open: %s", path, safe_open_strerror(errno));
		return -1;
	}
	ret = fn(run, f, path, err, errlen);
	fclose(f);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ranks by rank, then the other processes by pid. */
static int cmp_proc(const void *a, const void *b)
{
	const struct rp_proc *p = a, *q = b;

	if ((p->rank < 0) != (q->rank < 0))
		return p->rank < 0 ? 1 : -1;
	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	return (p->pid > q->pid) - (p->pid < q->pid);
}

/* The names of the timeline files in the directory, sorted. */
static int list_timelines(int dirfd, const char *dir, char ***names, size_t *n,
			  char *err, size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int fd = dup(dirfd);

	*names = NULL;
	*n = 0;
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		snprintf(err, errlen, "%s: cannot list: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char **grown;

		if (!timeline_name(de->d_name))
			continue;
		grown = realloc(*names, (*n + 1) * sizeof(*grown));
		if (!grown || !(grown[*n] = strdup(de->d_name))) {
			if (grown)
				*names = grown;
			closedir(d);
			snprintf(err, errlen, "%s: out of memory", dir);
			return -1;
		}
		*names = grown;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
}

int rp_load_dir(struct rp_run *run, int dirfd, const char *dir, char *err, size_t errlen)
{
	char **names;
	size_t n;
	int ret = -1;

	snprintf(run->dir, sizeof(run->dir), "%s", dir);
	if (list_timelines(dirfd, dir, &names, &n, err, errlen))
		return -1;
	if (n == 0) {
		snprintf(err, errlen, "%s: no rank-<R>.csv or pid-<P>.csv files: not a memattr-bpf output directory",
			 dir);
		goto out;
	}
	if (n * 600 > RP_KEEP_SAMPLES) {
		size_t share = RP_KEEP_SAMPLES / n > RP_MIN_SAMPLES ? RP_KEEP_SAMPLES / n : RP_MIN_SAMPLES;

		if (!run->max_samples || share < run->max_samples)
			run->max_samples = share;
	}
	for (size_t i = 0; i < n; i++)
		if (read_file(run, dirfd, dir, names[i], false, rp_read_proc, err, errlen))
			goto out;
	if (run->nprocs == 0) {
		snprintf(err, errlen, "%s: the timelines hold no sample yet (run just started?)", dir);
		goto out;
	}
	qsort(run->procs, run->nprocs, sizeof(*run->procs), cmp_proc);
	if (read_file(run, dirfd, dir, FILE_SUMMARY, true, rp_read_summary, err, errlen) ||
	    read_file(run, dirfd, dir, FILE_MPI_CALLS, true, rp_read_calls, err, errlen) ||
	    read_file(run, dirfd, dir, FILE_RUN_INFO, true, rp_read_info, err, errlen))
		goto out;
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

void rp_run_free(struct rp_run *run)
{
	for (size_t i = 0; i < run->nprocs; i++)
		proc_free(&run->procs[i]);
	free(run->procs);
	for (size_t i = 0; i < run->ncomp; i++)
		free(run->comp[i]);
	free(run->comp);
	for (size_t i = 0; i < run->nnodes; i++)
		free(run->nodes[i]);
	free(run->nodes);
	free(run->summary);
	free(run->calls);
	free(run->info);
	memset(run, 0, sizeof(*run));
}
