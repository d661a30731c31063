// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * run_info.csv for merge: each node's is read (its hostname, job and start
 * time say where it belongs and how its clock lies), checked against the
 * others, and the merged one written: the job's start, the nodes' counters
 * summed, and nodes.csv with each node's alignment.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_out.h"
#include "merge.h"
#include "report.h"
#include "safe_open.h"

const char *mg_info(const struct mg_node *n, const char *key)
{
	for (size_t i = 0; i < n->ninfo; i++)
		if (!strcmp(n->info[i].key, key))
			return n->info[i].value;
	return NULL;
}

static int add_kv(struct mg_node *n, const char *key, const char *value)
{
	struct mg_kv *grown;

	if (n->ninfo >= 4096)
		return -1;	/* no run writes that many keys */
	grown = realloc(n->info, (n->ninfo + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	n->info = grown;
	snprintf(grown[n->ninfo].key, sizeof(grown->key), "%s", key);
	snprintf(grown[n->ninfo].value, sizeof(grown->value), "%s", value);
	n->ninfo++;
	return 0;
}

static int read_rows(struct mg_node *n, struct rp_reader *rd, char *err, size_t errlen)
{
	char *fld[3];
	int r, nf;

	r = rp_next_line(rd);
	if (r <= 0 || strcmp(rd->line, RUN_INFO_HEADER)) {
		rp_reader_err(err, errlen, rd, r < 0 ? "cannot read: %s" : "not a run_info.csv (no '%s' header)",
		       r < 0 ? strerror(errno) : RUN_INFO_HEADER);
		return -1;
	}
	while ((r = rp_next_line(rd)) > 0) {
		nf = rp_csv_split(rd->line, fld, 3);
		if (nf != 2) {
			rp_reader_err(err, errlen, rd, "not a key,value row");
			return -1;
		}
		if (add_kv(n, fld[0], fld[1])) {
			rp_reader_err(err, errlen, rd, "too many rows");
			return -1;
		}
	}
	if (r < 0) {
		rp_reader_err(err, errlen, rd, "cannot read: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* What a node must say about itself to be placed: its name and its clock. */
static int read_identity(struct mg_node *n, struct rp_reader *rd, char *err, size_t errlen)
{
	const char *host = mg_info(n, "hostname"), *job = mg_info(n, "job");
	const char *start = mg_info(n, "start_time_unix_s"), *dur = mg_info(n, "duration_s");

	rd->lineno = 0;
	if (!host || !start) {
		rp_reader_err(err, errlen, rd, "has no %s: not written by a memattr-bpf that records it (0.1.0 of 2026-11-24 or later)",
		       !host ? "hostname" : "start_time_unix_s");
		return -1;
	}
	if (!node_name_valid(host)) {
		rp_reader_err(err, errlen, rd, "hostname '%.64s' is not a node name ([A-Za-z0-9._-])", host);
		return -1;
	}
	if (rp_parse_time(start, &n->start) || n->start < 1) {
		rp_reader_err(err, errlen, rd, "bad start_time_unix_s '%.40s'", start);
		return -1;
	}
	if (dur && rp_parse_time(dur, &n->duration)) {
		rp_reader_err(err, errlen, rd, "bad duration_s '%.40s'", dur);
		return -1;
	}
	if (job && strlen(job) >= sizeof(n->job)) {
		rp_reader_err(err, errlen, rd, "job '%.40s...' is longer than a job ID", job);
		return -1;
	}
	memcpy(n->name, host, strlen(host) + 1);	/* valid: shorter than NODE_NAME_MAX */
	memcpy(n->job, job ? job : "", job ? strlen(job) + 1 : 1);
	return 0;
}

int mg_read_info(struct mg_node *n, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	struct rp_reader rd = { .name = path };
	int ret;

	snprintf(path, sizeof(path), "%s/%s", n->dir, FILE_RUN_INFO);
	rd.f = mg_open(n->dirfd, FILE_RUN_INFO);
	if (!rd.f) {
		rp_reader_err(err, errlen, &rd, "cannot open: %s%s", safe_open_strerror(errno),
		       errno == ENOENT ? " (not a memattr-bpf output directory, or its run is still starting)" : "");
		return -1;
	}
	ret = read_rows(n, &rd, err, errlen) || read_identity(n, &rd, err, errlen) ? -1 : 0;
	fclose(rd.f);
	free(rd.line);
	return ret;
}

/* "1234.0" and "1234.batch" are steps of job 1234: one job's nodes may have traced different steps. */
static size_t job_len(const char *job)
{
	return strcspn(job, ".");
}

int mg_check_nodes(struct mg_node *nodes, size_t n, char *err, size_t errlen)
{
	double t0 = nodes[0].start;

	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < i; k++) {
			if (!strcmp(nodes[i].name, nodes[k].name)) {
				snprintf(err, errlen, "%s and %s are both node %s: one dataset per node",
					 nodes[k].dir, nodes[i].dir, nodes[i].name);
				return -1;
			}
		}
		if (job_len(nodes[i].job) != job_len(nodes[0].job) ||
		    strncmp(nodes[i].job, nodes[0].job, job_len(nodes[0].job))) {
			snprintf(err, errlen, "%s is job '%s', %s is job '%s': datasets of different jobs are not merged",
				 nodes[0].dir, nodes[0].job, nodes[i].dir, nodes[i].job);
			return -1;
		}
		if (nodes[i].start < t0)
			t0 = nodes[i].start;
	}
	for (size_t i = 0; i < n; i++)
		nodes[i].offset = nodes[i].start - t0;
	return 0;
}

/* Keys that are not counts to add up across nodes. */
static bool not_a_count(const char *key)
{
	static const char *const special[] = {
		"interval_ms", "modes", "duration_s", "start_time_unix_s", "hostname", "job",
		"version", "command_line", "unwind_us_per_request", "nodes", "lines_still_written", "finished",
	};

	for (size_t i = 0; i < sizeof(special) / sizeof(*special); i++)
		if (!strcmp(key, special[i]))
			return true;
	return false;
}

/* The sum over nodes of a count; -1 when a node's value is not a count (then it is left out). */
static long long sum_count(const struct mg_node *nodes, size_t n, const char *key)
{
	long long sum = 0;
	int64_t v;

	for (size_t i = 0; i < n; i++) {
		const char *s = mg_info(&nodes[i], key);

		if (!s)
			continue;
		if (rp_parse_i64(s, 0, &v) || __builtin_add_overflow(sum, v, &sum))
			return -1;
	}
	return sum;
}

static bool written_before(const struct mg_node *nodes, size_t upto, size_t at, const char *key)
{
	for (size_t i = 0; i < upto; i++)
		if (mg_info(&nodes[i], key))
			return true;
	for (size_t k = 0; k < at; k++)
		if (!strcmp(nodes[upto].info[k].key, key))
			return true;
	return false;
}

/* The job's end on its own clock: the latest node's end. */
static double job_duration(const struct mg_node *nodes, size_t n)
{
	double end = 0;

	for (size_t i = 0; i < n; i++)
		end = fmax(end, nodes[i].offset + nodes[i].duration);
	return end;
}

/* Request-weighted mean of the nodes' unwinding cost. */
static double unwind_us(const struct mg_node *nodes, size_t n)
{
	double us, sum = 0, weight = 0;
	int64_t req;

	for (size_t i = 0; i < n; i++) {
		const char *u = mg_info(&nodes[i], "unwind_us_per_request");
		const char *r = mg_info(&nodes[i], "memory_requests");

		if (!u || !r || rp_parse_time(u, &us) || rp_parse_i64(r, 0, &req))
			continue;
		sum += us * (double)req;
		weight += (double)req;
	}
	return weight ? sum / weight : 0;
}

static int all_finished(const struct mg_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = mg_info(&nodes[i], "finished");

		if (!v || strcmp(v, "1"))
			return 0;
	}
	return 1;
}

/* A kill's own keys and oom_watched: not counts to sum (oom_kills is one). */
static bool oom_key(const char *key)
{
	return !strncmp(key, RUN_OOM_PREFIX, strlen(RUN_OOM_PREFIX)) || !strcmp(key, RUN_OOM_WATCHED);
}

/* One key,value row, each field quoted as it needs. */
static void put_kv(FILE *f, const char *key, const char *value)
{
	csv_put_field(f, key);
	fputc(',', f);
	csv_put_field(f, value);
	fputc('\n', f);
}

/*
 * The nodes' OOM kills, numbered anew across nodes in node order, each
 * with its node's name, and its times on the merged clock (the node's
 * offset added, as to its timelines). Watched only if every node was.
 */
static void write_oom_kills(FILE *f, const struct mg_node *nodes, size_t n)
{
	unsigned int next = 0;
	bool watched = true;

	for (size_t i = 0; i < n; i++) {
		const char *v = mg_info(&nodes[i], RUN_OOM_WATCHED);

		watched = watched && v && !strcmp(v, "1");
	}
	fprintf(f, RUN_OOM_WATCHED ",%d\n", watched);
	for (size_t i = 0; i < n; i++) {
		for (unsigned int k = 1; k <= 4096; k++) {
			char pre[32], key[sizeof(nodes->info->key) + 32], val[64];
			size_t plen = (size_t)snprintf(pre, sizeof(pre), RUN_OOM_PREFIX "%u_", k);
			bool any = false;

			for (size_t j = 0; j < nodes[i].ninfo; j++) {
				const char *field = nodes[i].info[j].key + plen, *value = nodes[i].info[j].value;

				if (strncmp(nodes[i].info[j].key, pre, plen))
					continue;
				if (!any) {
					any = true;
					snprintf(key, sizeof(key), RUN_OOM_PREFIX "%u_node", ++next);
					put_kv(f, key, nodes[i].name);
				}
				snprintf(key, sizeof(key), RUN_OOM_PREFIX "%u_%s", next, field);
				if ((!strcmp(field, "time_s") || !strcmp(field, "sample_time_s")) && *value) {
					snprintf(val, sizeof(val), "%.3f", strtod(value, NULL) + nodes[i].offset);
					value = val;
				}
				put_kv(f, key, value);
			}
			if (!any)
				break;
		}
	}
}

int mg_write_info(FILE *f, const struct mg_node *nodes, size_t n, const char *cmdline,
		  size_t cut_lines)
{
	const char *first_job = nodes[0].job;
	double t0 = nodes[0].start - nodes[0].offset;

	fprintf(f, RUN_INFO_HEADER "\n");
	/* The job without a step: the nodes may have traced different steps of it. */
	fprintf(f, "job,%.*s\n", (int)job_len(first_job), first_job);
	fprintf(f, "nodes,%zu\n", n);
	fprintf(f, "start_time_unix_s,%.6f\n", t0);
	fprintf(f, "duration_s,%.3f\n", job_duration(nodes, n));
	fprintf(f, "unwind_us_per_request,%.1f\n", unwind_us(nodes, n));
	for (const char *const *k = (const char *const[]){ "interval_ms", "modes", "version", NULL }; *k; k++) {
		const char *v = mg_info(&nodes[0], *k);

		if (v) {
			fprintf(f, "%s,", *k);
			csv_put_field(f, v);
			fputc('\n', f);
		}
	}
	/* Counts in the order the first node that has each wrote them. */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < nodes[i].ninfo; k++) {
			const char *key = nodes[i].info[k].key;
			long long sum;

			if (not_a_count(key) || oom_key(key) || written_before(nodes, i, k, key))
				continue;
			sum = sum_count(nodes, n, key);
			if (sum >= 0)
				fprintf(f, "%s,%lld\n", key, sum);
		}
	}
	write_oom_kills(f, nodes, n);
	fprintf(f, "lines_still_written,%zu\n", cut_lines);
	fprintf(f, "finished,%d\n", all_finished(nodes, n));
	fprintf(f, "command_line,");
	csv_put_field(f, cmdline);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

static long long count_of(const struct mg_node *n, const char *key)
{
	const char *s = mg_info(n, key);
	int64_t v;

	return s && !rp_parse_i64(s, 0, &v) ? v : 0;
}

int mg_write_nodes(FILE *f, const struct mg_node *nodes, size_t n)
{
	fprintf(f, NODES_HEADER "\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s,%.6f,%.6f,%zu,%zu,%lld,%lld,%.3f\n", nodes[i].name, nodes[i].start,
			nodes[i].offset, nodes[i].nranks, nodes[i].nfiles, count_of(&nodes[i], "events"),
			count_of(&nodes[i], "dropped_events"), nodes[i].duration);
	return ferror(f) ? -1 : 0;
}
