// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Synthetic per-node datasets of one large MPI job, as memattr-bpf writes
 * them on each node (--output DIR/%n): for the merge-and-report benchmark
 * at a scale no test machine reaches (1,000 nodes x 128 ranks x 600
 * samples).
 *
 *   synth_job --nodes N --ranks-per-node R --samples S [--interval-ms MS]
 *             [--job ID] -o DIR
 *
 * writes DIR/node0000 ... with run_info.csv, rank-<R>.csv, summary.csv and
 * mpi_calls.csv. Shapes follow what real runs show: MPI_Init's ~6.5 MiB in
 * the first second, the application ramping up over the first fifth and
 * then breathing with its iterations, libc and libstdc++ flat, a little
 * unattributed; every 997th rank twice as large, node 7 half as large
 * again, nodes starting up to 0.3 s apart. Rows of a sample sum exactly to
 * its total, sizes are whole pages, ranks are numbered across the job.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PAGE		4096LL
#define MIB		(1LL << 20)
#define NCOMP		5	/* and total */

static const char *const comp_name[NCOMP] = { "app", "mpi", "libc", "lib:libstdc++.so.6", "unattributed" };

struct opts {
	long nodes, per_node, samples, interval_ms;
	const char *job, *out;
};

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "synth_job: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(1);
}

static long pages(double bytes)
{
	return (long)(bytes / PAGE);
}

/* Rank r's components at sample i (bytes, whole pages). */
static void shape(const struct opts *o, long node, long r, long i, long long *c)
{
	double t = (double)i * o->interval_ms / 1000.0;
	double dur = (double)o->samples * o->interval_ms / 1000.0;
	double scale = (r % 997 == 0 ? 2.0 : 1.0) * (node == 7 ? 1.5 : 1.0);
	double ramp = fmin(1.0, t / (0.2 * dur + 1e-9));
	double app = (256.0 + 64.0 * (r % 13)) * MIB * scale * ramp *
		     (1.0 + 0.08 * sin(2 * M_PI * t / 30.0 + r * 0.01));

	c[0] = pages(app) * PAGE;
	c[1] = pages((t < 1.0 ? t * 6.5 : 6.5) * MIB + 2 * MIB * ramp) * PAGE;
	c[2] = pages(2.1 * MIB) * PAGE;
	c[3] = pages(1.6 * MIB) * PAGE;
	c[4] = pages(0.3 * MIB + (r % 5) * 0.1 * MIB) * PAGE;
}

static FILE *create(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die("cannot create", path);
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

static void close_or_die(FILE *f, const char *what)
{
	if (ferror(f) | fclose(f))
		die("cannot write", what);
}

/* One rank's timeline and its summary rows; returns its events, roughly. */
static void write_rank(const struct opts *o, const char *dir, long node, long r, int pid, FILE *sum)
{
	long long c[NCOMP], peak[NCOMP + 1] = {0}, last[NCOMP + 1] = {0};
	double peak_t[NCOMP + 1] = {0};
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "rank-%ld.csv", r);
	f = create(dir, name);
	fputs("time_s,rank,pid,component,rss_bytes,pss_bytes\n", f);
	for (long i = 0; i < o->samples; i++) {
		double t = 0.1 + (double)i * o->interval_ms / 1000.0;
		long long tot = 0;

		shape(o, node, r, i, c);
		for (int k = 0; k < NCOMP; k++)
			tot += c[k];
		last[0] = tot;
		if (tot > peak[0]) {
			peak[0] = tot;
			peak_t[0] = t;
		}
		fprintf(f, "%.3f,%ld,%d,total,%lld,%lld\n", t, r, pid, tot, tot / 5 * 4);
		for (int k = 0; k < NCOMP; k++) {
			/* pss: whatever the kernel says; here 4/5, summing to the total's. */
			fprintf(f, "%.3f,%ld,%d,%s,%lld,%lld\n", t, r, pid, comp_name[k], c[k],
				k == NCOMP - 1 ? tot / 5 * 4 - (c[0] + c[1] + c[2] + c[3]) / 5 * 4 : c[k] / 5 * 4);
			last[k + 1] = c[k];
			if (c[k] > peak[k + 1]) {
				peak[k + 1] = c[k];
				peak_t[k + 1] = t;
			}
		}
	}
	close_or_die(f, name);
	for (int k = 0; k <= NCOMP; k++)
		fprintf(sum, "%ld,%d,%s,%lld,%.3f,%lld,%.3f,%lld,%lld\n", r, pid,
			k ? comp_name[k - 1] : "total", peak[k], peak_t[k], peak[k] / 5 * 4, peak_t[k],
			last[k], last[k] / 5 * 4);
}

static void write_node(const struct opts *o, long node, double start)
{
	char dir[4096], host[32];
	FILE *sum, *calls, *info;

	snprintf(host, sizeof(host), "node%04ld", node);
	snprintf(dir, sizeof(dir), "%s/%s", o->out, host);
	if (mkdir(dir, 0750) && errno != EEXIST)
		die("cannot create", dir);
	sum = create(dir, "summary.csv");
	calls = create(dir, "mpi_calls.csv");
	fputs("rank,pid,component,peak_rss_bytes,peak_rss_time_s,peak_pss_bytes,peak_pss_time_s,final_rss_bytes,final_pss_bytes\n", sum);
	fputs("rank,pid,function,calls,gained_bytes,released_bytes,net_bytes,peak_bytes,first_growth_s,last_growth_s\n", calls);
	for (long k = 0; k < o->per_node; k++) {
		long r = node * o->per_node + k;
		int pid = 10000 + (int)k;

		write_rank(o, dir, node, r, pid, sum);
		fprintf(calls, "%ld,%d,MPI_Init,,6815744,0,6815744,6815744,0.150,0.950\n", r, pid);
		fprintf(calls, "%ld,%d,MPI_Alloc_mem,,2097152,0,2097152,2097152,1.000,%.3f\n", r, pid,
			0.2 * o->samples * o->interval_ms / 1000.0);
	}
	close_or_die(sum, "summary.csv");
	close_or_die(calls, "mpi_calls.csv");
	info = create(dir, "run_info.csv");
	fprintf(info, "key,value\ninterval_ms,%ld\nmodes,\nduration_s,%.3f\nevents,%ld\ndropped_events,0\n"
		"memory_requests,%ld\nunwind_failures,0\nunwind_us_per_request,40.0\nprocesses_traced,%ld\n"
		"output_errors,0\nstart_time_unix_s,%.6f\nhostname,%s\njob,%s\nfinished,1\nversion,0.1.0\n"
		"command_line,synth_job\n",
		o->interval_ms, (double)o->samples * o->interval_ms / 1000.0, o->per_node * o->samples * 40,
		o->per_node * 300, o->per_node + 1, start, host, o->job);
	close_or_die(info, "run_info.csv");
}

static long num(const char *s, const char *opt)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v <= 0)
		die("not a positive number", opt);
	return v;
}

int main(int argc, char **argv)
{
	struct opts o = { .nodes = 2, .per_node = 4, .samples = 60, .interval_ms = 1000, .job = "4242" };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			die("option needs a value", a);
		if (!strcmp(a, "--nodes"))
			o.nodes = num(v, a);
		else if (!strcmp(a, "--ranks-per-node"))
			o.per_node = num(v, a);
		else if (!strcmp(a, "--samples"))
			o.samples = num(v, a);
		else if (!strcmp(a, "--interval-ms"))
			o.interval_ms = num(v, a);
		else if (!strcmp(a, "--job"))
			o.job = v;
		else if (!strcmp(a, "-o"))
			o.out = v;
		else
			die("unknown option", a);
		i++;
	}
	if (!o.out)
		die("no -o DIR", NULL);
	if (mkdir(o.out, 0750) && errno != EEXIST)
		die("cannot create", o.out);
	for (long n = 0; n < o.nodes; n++)
		write_node(&o, n, 1795000000.0 + (double)((n * 7919) % 300) / 1000.0);
	return 0;
}
