// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The files of a merged dataset: each node's timelines rewritten onto the
 * job's clock with their node, summary.csv recomputed from what is written
 * (peaks and final values per process and component, the way the tracer
 * computes them), and the per-function and per-site tables concatenated.
 * One file is open at a time; nothing is held per sample.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gz_file.h"
#include "merge.h"
#include "report.h"
#include "safe_open.h"

#define MAX_FIELDS	64
#define MAX_COMPS	256	/* components one process may have */

/* One component's figures over a timeline. */
struct comp_stats {
	char name[128];
	int64_t peak_rss, peak_pss, rss, pss;
	double peak_rss_time, peak_pss_time;
};

struct timeline {
	int rank, pid;
	struct comp_stats comps[MAX_COMPS];
	size_t ncomps;
};

int mg_timeline_rank(const char *name)
{
	const char *d;
	size_t len;
	long v;

	if (!strncmp(name, "rank-", 5))
		d = name + 5;
	else if (!strncmp(name, "pid-", 4))
		d = name + 4;
	else
		return -2;
	len = strspn(d, "0123456789");
	if (!len || len > 9 || (strcmp(d + len, ".csv") && strcmp(d + len, ".csv.gz")))
		return -2;
	v = strtol(d, NULL, 10);
	return name[0] == 'r' ? (int)v : -1;
}

static struct comp_stats *comp_of(struct timeline *tl, const char *name)
{
	struct comp_stats *c;

	for (size_t i = 0; i < tl->ncomps; i++)
		if (!strcmp(tl->comps[i].name, name))
			return &tl->comps[i];
	if (tl->ncomps == MAX_COMPS || strlen(name) >= sizeof(c->name))
		return NULL;
	c = &tl->comps[tl->ncomps++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->peak_rss = c->peak_pss = -1;
	return c;
}

/* Peaks as the tracer keeps them: the first time the highest value is reached. */
static void account(struct comp_stats *c, double t, int64_t rss, int64_t pss)
{
	if (rss > c->peak_rss) {
		c->peak_rss = rss;
		c->peak_rss_time = t;
	}
	if (pss > c->peak_pss) {
		c->peak_pss = pss;
		c->peak_pss_time = t;
	}
	c->rss = rss;
	c->pss = pss;
}

enum { C_TIME, C_RANK, C_PID, C_COMP, C_RSS, C_PSS, NCOLS };

static int find_cols(struct rp_reader *rd, int *col, size_t *nhdr, char *err, size_t errlen)
{
	static const char *const names[NCOLS] = { COL_TIME, COL_RANK, COL_PID, COL_COMPONENT, COL_RSS, COL_PSS };
	char *hdr[MAX_FIELDS];
	int r = rp_next_line(rd), n;

	if (r <= 0) {
		rp_reader_err(err, errlen, rd, r < 0 ? "cannot read: %s" : "no header line%s",
		       r < 0 ? strerror(errno) : "");
		return -1;
	}
	n = rp_csv_split(rd->line, hdr, MAX_FIELDS);
	if (n < 0 || n > MAX_FIELDS) {
		rp_reader_err(err, errlen, rd, "unreadable header");
		return -1;
	}
	*nhdr = (size_t)n;
	for (int i = 0; i < NCOLS; i++) {
		col[i] = rp_col(hdr, (size_t)n, names[i]);
		if (col[i] < 0) {
			rp_reader_err(err, errlen, rd, "not a memattr-bpf timeline (no column '%s')", names[i]);
			return -1;
		}
	}
	return 0;
}

/* One row, checked and written on the job's clock. */
static int copy_row(struct rp_reader *rd, const int *col, size_t nhdr, struct timeline *tl,
		    const struct mg_node *n, FILE *out, char *err, size_t errlen)
{
	char *fld[MAX_FIELDS];
	int64_t rank = -1, pid, rss, pss;
	struct comp_stats *c;
	double t;
	int nf = rp_csv_split(rd->line, fld, MAX_FIELDS);

	if (nf < 0 || (size_t)nf != nhdr) {
		rp_reader_err(err, errlen, rd, nf < 0 ? "bad quoting" : "%d fields, the header has %zu", nf, nhdr);
		return -1;
	}
	if (rp_parse_time(fld[col[C_TIME]], &t) ||
	    (fld[col[C_RANK]][0] && rp_parse_i64(fld[col[C_RANK]], 0, &rank)) ||
	    rp_parse_i64(fld[col[C_PID]], 1, &pid) || pid > 0x7fffffff ||
	    rp_parse_i64(fld[col[C_RSS]], 0, &rss) || rp_parse_i64(fld[col[C_PSS]], 0, &pss) ||
	    !fld[col[C_COMP]][0]) {
		rp_reader_err(err, errlen, rd, "bad value in a time_s, rank, pid, component, rss_bytes or pss_bytes field");
		return -1;
	}
	/* rank-3.csv holds rank 3: a file renamed by hand would give one rank two nodes' rows. */
	if (rank != tl->rank) {
		rp_reader_err(err, errlen, rd, "rank %lld in the file of %s %d", (long long)rank,
		       tl->rank >= 0 ? "rank" : "a process that is not a rank", tl->rank);
		return -1;
	}
	c = comp_of(tl, fld[col[C_COMP]]);
	if (!c) {
		rp_reader_err(err, errlen, rd, "more than %d components, or a name longer than 127 bytes", MAX_COMPS);
		return -1;
	}
	tl->pid = (int)pid;
	t += n->offset;
	account(c, t, rss, pss);
	if (csv_write_node_row(out, t, (int)rank, (pid_t)pid, c->name, rss, pss, n->name)) {
		rp_reader_err(err, errlen, rd, "cannot write its merged copy: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/*
 * The node's OOM kill of this timeline's process, as its run_info.csv
 * keeps it (oom_kill_<K>_pid; the latest K when its pid was reused, as the
 * tracer's own summary picks it): K, 0 when the OOM killer did not choose it.
 */
static unsigned int oom_kill_of(const struct mg_node *n, int pid)
{
	unsigned int found = 0;
	char key[48];

	for (unsigned int k = 1; k <= 4096; k++) {
		const char *v;
		char *end;
		long p;

		snprintf(key, sizeof(key), RUN_OOM_PREFIX "%u_pid", k);
		v = mg_info(n, key);
		if (!v)
			break;
		p = strtol(v, &end, 10);
		if (end != v && !*end && p == pid)
			found = k;
	}
	return found;
}

/* The kill's time on the job's clock and a component's growth before it (0: none kept, as the tracer writes it). */
static int oom_fields(const struct mg_node *n, unsigned int k, const char *comp, double *time,
		      int64_t *growth)
{
	char key[sizeof(n->info->key) + 64];
	const char *v;
	char *end;

	snprintf(key, sizeof(key), RUN_OOM_PREFIX "%u_time_s", k);
	v = mg_info(n, key);
	if (!v || rp_parse_time(v, time))
		return -1;
	*time += n->offset;
	*growth = 0;
	snprintf(key, sizeof(key), RUN_OOM_PREFIX "%u_growth_bytes:%s", k, comp);
	v = mg_info(n, key);
	if (v) {
		errno = 0;
		*growth = strtoll(v, &end, 10);
		if (end == v || *end || errno)
			return -1;
	}
	return 0;
}

static int write_summary(struct mg_out *o, const struct timeline *tl, const struct mg_node *n,
			 char *err, size_t errlen)
{
	unsigned int kill = oom_kill_of(n, tl->pid);

	for (size_t i = 0; i < tl->ncomps; i++) {
		const struct comp_stats *c = &tl->comps[i];
		struct summary_row row = {
			.rank = tl->rank, .pid = tl->pid, .component = c->name,
			.peak_rss = c->peak_rss, .peak_rss_time = c->peak_rss_time,
			.peak_pss = c->peak_pss, .peak_pss_time = c->peak_pss_time,
			.final_rss = c->rss, .final_pss = c->pss, .node = n->name,
			.kernel_hwm = -1,
		};

		/* Its peaks are the timelines' largest samples, whatever the node's summary said. */
		if (!strcmp(c->name, "total"))
			row.peak_source = "samples";

		/* The columns the node's own summary.csv filled for its victim. */
		if (kill && oom_fields(n, kill, c->name, &row.oom_time, &row.oom_growth)) {
			snprintf(err, errlen, "%s/%s: bad oom_kill_%u_time_s or oom_kill_%u_growth_bytes:%s",
				 n->dir, FILE_RUN_INFO, kill, kill, c->name);
			return -1;
		}
		row.oom = kill != 0;
		if (summary_write_row(o->summary, &row)) {
			snprintf(err, errlen, "%s/%s: cannot write: %s", o->dir.path, FILE_SUMMARY,
				 strerror(errno ? errno : EIO));
			return -1;
		}
	}
	return 0;
}

/* rank-<R>.csv stays so (ranks are the job's); a pid may repeat across nodes: pid-<P>@<node>.csv. */
static FILE *create_out(struct mg_out *o, const struct timeline *tl, const char *file,
			const struct mg_node *n, char *name, size_t len)
{
	FILE *f;

	if (tl->rank >= 0)
		snprintf(name, len, "rank-%d.csv%s", tl->rank, o->compress ? ".gz" : "");
	else
		snprintf(name, len, "pid-%ld@%s.csv%s", strtol(file + 4, NULL, 10), n->name,
			 o->compress ? ".gz" : "");
	f = outdir_create(&o->dir, name);
	if (f && o->compress)
		f = gz_wrap(f);
	return f;
}

static int copy_rows(struct mg_out *o, struct rp_reader *rd, struct timeline *tl,
		     const struct mg_node *n, FILE *out, char *err, size_t errlen)
{
	int col[NCOLS], r;
	size_t nhdr;

	if (find_cols(rd, col, &nhdr, err, errlen))
		return -1;
	if (fputs(CSV_HEADER_NODE "\n", out) == EOF) {
		rp_reader_err(err, errlen, rd, "cannot write its merged copy: %s", strerror(errno));
		return -1;
	}
	while ((r = rp_next_line(rd)) > 0)
		if (rd->line[0] && copy_row(rd, col, nhdr, tl, n, out, err, errlen))
			return -1;
	if (r < 0) {
		rp_reader_err(err, errlen, rd, "cannot read: %s", strerror(errno));
		return -1;
	}
	o->cut_lines += rd->partial;
	return 0;
}

int mg_timeline(struct mg_out *o, const struct mg_node *n, const char *file, char *err, size_t errlen)
{
	struct timeline *tl = calloc(1, sizeof(*tl));
	char outname[128], path[PATH_MAX + 96];
	struct rp_reader rd = { .name = path };
	FILE *out = NULL;
	int ret = -1;

	if (!tl) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", n->dir, file);
	tl->rank = mg_timeline_rank(file);
	rd.f = mg_open(n->dirfd, file);
	if (!rd.f) {
		rp_reader_err(err, errlen, &rd, "cannot open: %s", safe_open_strerror(errno));
		goto out;
	}
	out = create_out(o, tl, file, n, outname, sizeof(outname));
	if (!out) {
		snprintf(err, errlen, "%s/%s: cannot create: %s", o->dir.path, outname, strerror(errno));
		goto out;
	}
	if (copy_rows(o, &rd, tl, n, out, err, errlen))
		goto out;
	ret = fclose(out);
	out = NULL;
	if (ret) {
		snprintf(err, errlen, "%s/%s: cannot write: %s", o->dir.path, outname, strerror(errno ? errno : EIO));
		goto out;
	}
	if (write_summary(o, tl, n, err, errlen))
		ret = -1;
out:
	if (out)
		fclose(out);
	if (rd.f)
		fclose(rd.f);
	free(rd.line);
	free(tl);
	return ret;
}

/* Columns of a table that hold a time_s: moved onto the job's clock. */
static bool time_column(const char *name)
{
	size_t len = strlen(name);

	return len > 2 && !strcmp(name + len - 2, "_s");
}

static int copy_table_row(struct rp_reader *rd, char **hdr, size_t nhdr, const struct mg_node *n,
			  FILE *out, char *err, size_t errlen)
{
	char *fld[MAX_FIELDS];
	int nf = rp_csv_split(rd->line, fld, MAX_FIELDS);
	double t;

	if (nf < 0 || (size_t)nf != nhdr) {
		rp_reader_err(err, errlen, rd, nf < 0 ? "bad quoting" : "%d fields, the header has %zu", nf, nhdr);
		return -1;
	}
	for (size_t i = 0; i < nhdr; i++) {
		if (i)
			fputc(',', out);
		if (!time_column(hdr[i]) || !fld[i][0]) {
			csv_put_field(out, fld[i]);
			continue;
		}
		if (rp_parse_time(fld[i], &t)) {
			rp_reader_err(err, errlen, rd, "bad value '%.40s' in column %s", fld[i], hdr[i]);
			return -1;
		}
		fprintf(out, "%.3f", t + n->offset);
	}
	fputc(',', out);
	csv_put_field(out, n->name);
	fputc('\n', out);
	return 0;
}

/* One node's rows of a table (a node that has no such file adds none). */
static int copy_table(struct rp_reader *rd, const char *header, const struct mg_node *n, FILE *out,
		      size_t *cut, char *err, size_t errlen)
{
	char hdr_line[1024], *hdr[MAX_FIELDS];
	int r = rp_next_line(rd), nh;

	if (r <= 0 || strcmp(rd->line, header)) {
		rp_reader_err(err, errlen, rd, r < 0 ? "cannot read its header" :
			"its columns are not this version's (%s)", header);
		return -1;
	}
	snprintf(hdr_line, sizeof(hdr_line), "%s", header);
	nh = rp_csv_split(hdr_line, hdr, MAX_FIELDS);
	while ((r = rp_next_line(rd)) > 0)
		if (rd->line[0] && copy_table_row(rd, hdr, (size_t)nh, n, out, err, errlen))
			return -1;
	if (r < 0) {
		rp_reader_err(err, errlen, rd, "cannot read: %s", strerror(errno));
		return -1;
	}
	*cut += rd->partial;
	return 0;
}

int mg_table(struct mg_out *o, const struct mg_node *nodes, size_t n, const char *file,
	     const char *header, char *err, size_t errlen)
{
	FILE *out = NULL;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		char path[PATH_MAX + 96];
		struct rp_reader rd = { .name = path };

		snprintf(path, sizeof(path), "%s/%s", nodes[i].dir, file);
		rd.f = mg_open(nodes[i].dirfd, file);
		if (!rd.f) {
			if (errno == ENOENT)
				continue;
			rp_reader_err(err, errlen, &rd, "cannot open: %s", safe_open_strerror(errno));
			return -1;
		}
		if (!out) {
			out = outdir_create(&o->dir, file);
			if (!out || fprintf(out, "%s,%s\n", header, COL_NODE) < 0) {
				snprintf(err, errlen, "%s/%s: cannot create: %s", o->dir.path, file, strerror(errno));
				ret = -1;
			}
		}
		if (!ret)
			ret = copy_table(&rd, header, &nodes[i], out, &o->cut_lines, err, errlen);
		fclose(rd.f);
		free(rd.line);
	}
	if (out) {
		int bad = ferror(out);

		if ((fclose(out) || bad) && !ret) {
			snprintf(err, errlen, "%s/%s: cannot write: %s", o->dir.path, file,
				 strerror(errno ? errno : EIO));
			ret = -1;
		}
	}
	return ret;
}
