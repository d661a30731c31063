// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf export`: the moment chosen per process (peak, end, a time),
 * the stacks built from a run in the tracer's format (fixtures/export/run:
 * two ranks, mpi_calls.csv, heap_sites.csv, every number chosen so the
 * expected stacks are known), each process's stacks summing to its total
 * (rss and pss), the MPI functions only at the end, heap sites at the end
 * and (heap_sites_peak.csv) at the peak, the
 * three writers (folded text, speedscope JSON, pprof decoded back through
 * protobuf-c after gunzip), names made safe for each format, and the
 * command refusing bad input with a status and no output file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "export.h"
#include "export_cmd.h"
#include "pprof_read.h"

#define RUN	"fixtures/export/run"

static void test_parse_at(void **state)
{
	enum ex_at at;
	double t;

	(void)state;
	assert_int_equal(ex_parse_at("peak", &at, &t), 0);
	assert_int_equal(at, EX_AT_PEAK);
	assert_int_equal(ex_parse_at("end", &at, &t), 0);
	assert_int_equal(at, EX_AT_END);
	assert_int_equal(ex_parse_at("1.5", &at, &t), 0);
	assert_int_equal(at, EX_AT_TIME);
	assert_true(t == 1.5);
	assert_int_equal(ex_parse_at("-1", &at, &t), -1);
	assert_int_equal(ex_parse_at("soon", &at, &t), -1);
	assert_int_equal(ex_parse_at("", &at, &t), -1);
}

static void test_pick(void **state)
{
	double t[] = { 1.0, 2.0, 3.0, 4.0 };
	int64_t tot[] = { 5, 9, 9, 7 };
	int64_t *rss[] = { tot };
	struct rp_proc p = { .n = 4, .t = t, .rss = rss, .nrss = 1 };

	(void)state;
	/* The first of equal peaks: when the process got there. */
	assert_int_equal(ex_pick(&p, EX_AT_PEAK, 0), 1);
	assert_int_equal(ex_pick(&p, EX_AT_END, 0), 3);
	assert_int_equal(ex_pick(&p, EX_AT_TIME, 2.5), 1);
	assert_int_equal(ex_pick(&p, EX_AT_TIME, 3.0), 2);
	assert_int_equal(ex_pick(&p, EX_AT_TIME, 99), 3);
	/* Before its first sample the process was not there yet. */
	assert_int_equal(ex_pick(&p, EX_AT_TIME, 0.5), -1);
}

static void test_site_frame(void **state)
{
	char out[128];

	(void)state;
	ex_site_frame("solver:build_mesh+0x5a", out, sizeof(out));
	assert_string_equal(out, "build_mesh");
	ex_site_frame("libfoo.so.1:ns::Mesh::grow+0x1f", out, sizeof(out));
	assert_string_equal(out, "ns::Mesh::grow");
	/* No symbol covers it: the file and offset are all there is. */
	ex_site_frame("libfoo.so.1+0x4010", out, sizeof(out));
	assert_string_equal(out, "libfoo.so.1+0x4010");
	ex_site_frame("0x7f0012345678", out, sizeof(out));
	assert_string_equal(out, "0x7f0012345678");
	/* Not an offset after the '+': kept whole. */
	ex_site_frame("a.out:operator+", out, sizeof(out));
	assert_string_equal(out, "operator+");
}

static void test_names(void **state)
{
	char out[64], *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	ex_folded_name("a;b\nc\td", out, sizeof(out));
	assert_string_equal(out, "a:b?c?d");
	ex_folded_name("long name", out, 5);
	assert_string_equal(out, "long");

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	ex_json_str(f, "q\"b\\s\x01 \xc3\xa9 \xff \xe0\x80\x80");
	fclose(f);
	/* Valid UTF-8 passes, escapes are JSON's, a stray or overlong byte is U+FFFD. */
	assert_string_equal(buf, "\"q\\\"b\\\\s\\u0001 \xc3\xa9 \\ufffd \\ufffd\\ufffd\\ufffd\"");
	free(buf);
}

/* The fixture's profile at a moment, with the checks every profile passes. */
static void build(struct ex_data *d, struct ex_profile *pr, enum ex_at at, double t, int rank)
{
	struct ex_select sel = { .at = at, .at_time = t, .one_rank = rank >= 0, .rank = rank };
	char err[EX_ERRLEN];

	if (ex_build(d, &sel, pr, err, sizeof(err)))
		fail_msg("%s", err);
	/* Each process's resident stacks add up to its total at the moment: the partition holds. */
	for (size_t p = 0; p < pr->nprocs; p++) {
		const struct rp_proc *rp = &d->run.procs[pr->procs[p].pi];
		int64_t rss = 0, pss = 0;

		for (size_t i = 0; i < pr->nsamples; i++)
			if (pr->samples[i].proc == p) {
				rss += pr->samples[i].v[EX_RSS];
				pss += pr->samples[i].v[EX_PSS];
			}
		assert_int_equal(rss, rp->rss[0][pr->procs[p].sample]);
		assert_int_equal(pss, rp->pss[0][pr->procs[p].sample]);
	}
}

/* The value of the stack "comp[;child]" of process p, -1 when there is none. */
static int64_t value_of(const struct ex_profile *pr, size_t p, const char *comp, const char *child,
			enum ex_value v)
{
	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];

		if (s->proc != p || s->depth != (child ? 2u : 1u) ||
		    strcmp(ex_str(pr, pr->frames[s->frames[0]].name), comp) ||
		    (child && strcmp(ex_str(pr, pr->frames[s->frames[1]].name), child)))
			continue;
		return s->v[v];
	}
	return -1;
}

static void load_dir(struct ex_data *d, const char *dir)
{
	char err[EX_ERRLEN];

	if (ex_load(d, dir, NULL, err, sizeof(err)))
		fail_msg("%s", err);
}

static void load(struct ex_data *d)
{
	load_dir(d, RUN);
}

/* The value of the stack of process p whose frames are names[0..n), -1 when there is none. */
static int64_t value_at(const struct ex_profile *pr, size_t p, enum ex_value v, unsigned int n,
			const char *const *names)
{
	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];
		unsigned int k = 0;

		if (s->proc != p || s->depth != n)
			continue;
		while (k < n && !strcmp(ex_str(pr, pr->frames[s->frames[k]].name), names[k]))
			k++;
		if (k == n)
			return s->v[v];
	}
	return -1;
}

/* The mapping (file or component) of the frame named name. */
static const char *mapping_of_frame(const struct ex_profile *pr, const char *name)
{
	for (size_t i = 0; i < pr->nframes; i++)
		if (!strcmp(ex_str(pr, pr->frames[i].name), name))
			return ex_str(pr, pr->mappings[pr->frames[i].mapping]);
	return NULL;
}

/*
 * alloc_stacks.csv (fixtures/export/stacks: the run above with stacks for
 * app): at the end each stack's rss under app, its frames in their files'
 * mappings, pss in rss's proportion, the rest on app; at the peak the
 * rows' peak figures; rows adding up to more than the component scaled
 * down to it; at another time app whole, said.
 */
static void test_build_stacks(void **state)
{
	static const char *const mesh[] = { "app", "main", "build_mesh" };
	static const char *const helper[] = { "app", "main", "helper_alloc" };
	struct ex_data d;
	struct ex_profile pr;

	(void)state;
	load_dir(&d, "fixtures/export/stacks");
	assert_true(d.has_stacks);
	assert_int_equal(d.nstacks, 3);
	build(&d, &pr, EX_AT_END, 0, -1);
	assert_true(pr.stack_split);
	assert_int_equal(value_at(&pr, 0, EX_RSS, 3, mesh), 5000);
	assert_int_equal(value_at(&pr, 0, EX_PSS, 3, mesh), 2500);
	assert_int_equal(value_at(&pr, 0, EX_RSS, 3, helper), 2000);
	assert_int_equal(value_of(&pr, 0, "app", NULL, EX_RSS), 1000);
	assert_int_equal(value_of(&pr, 0, "app", NULL, EX_PSS), 500);
	/* Rank 1's 6000 bytes of stacks in an app of 4000: scaled to it, nothing left on app. */
	assert_int_equal(value_at(&pr, 1, EX_RSS, 3, mesh), 4000);
	assert_int_equal(value_of(&pr, 1, "app", NULL, EX_RSS), -1);
	assert_string_equal(mapping_of_frame(&pr, "build_mesh"), "solver");
	assert_string_equal(mapping_of_frame(&pr, "helper_alloc"), "libhelper.so");
	ex_profile_free(&pr);

	build(&d, &pr, EX_AT_PEAK, 0, 0);
	assert_int_equal(value_at(&pr, 0, EX_RSS, 3, mesh), 9000);
	assert_int_equal(value_of(&pr, 0, "app", NULL, EX_RSS), 1000);
	ex_profile_free(&pr);

	build(&d, &pr, EX_AT_TIME, 0.25, 0);
	assert_true(pr.dropped_stacks);
	assert_false(pr.stack_split);
	assert_int_equal(value_of(&pr, 0, "app", NULL, EX_RSS), 12000);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

static void test_build_end(void **state)
{
	struct ex_data d;
	struct ex_profile pr;

	(void)state;
	load(&d);
	assert_true(d.has_sites);
	assert_int_equal(d.nsites, 4);
	build(&d, &pr, EX_AT_END, 0, -1);
	assert_int_equal(pr.nprocs, 2);
	assert_true(pr.fn_split && pr.has_heap);
	assert_false(pr.dropped_fns || pr.dropped_heap);
	/* Rank 0 at 0.3 s: mpi 10000 = MPI_Init 6000 + MPI_Alloc_mem 3000 + 1000 on mpi itself. */
	assert_int_equal(value_of(&pr, 0, "mpi", "MPI_Init", EX_RSS), 6000);
	assert_int_equal(value_of(&pr, 0, "mpi", "MPI_Alloc_mem", EX_RSS), 3000);
	assert_int_equal(value_of(&pr, 0, "mpi", NULL, EX_RSS), 1000);
	/* pss is per component: split in rss's proportion. */
	assert_int_equal(value_of(&pr, 0, "mpi", "MPI_Init", EX_PSS), 3000);
	assert_int_equal(value_of(&pr, 0, "mpi", NULL, EX_PSS), 500);
	/* A function that holds nothing now has no stack. */
	assert_int_equal(value_of(&pr, 0, "mpi", "MPI_Free_mem", EX_RSS), -1);
	assert_int_equal(value_of(&pr, 0, "app", NULL, EX_RSS), 8000);
	assert_int_equal(value_of(&pr, 0, "libc", NULL, EX_PSS), 1000);
	/* Two sites in build_mesh are one frame; live blocks are calls - frees. */
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_INUSE), 7168);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_INUSE_OBJ), 8);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_ALLOC), 11264);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_ALLOC_OBJ), 12);
	/* Heap bytes are requested bytes: never counted as resident. */
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_RSS), 0);
	assert_int_equal(value_of(&pr, 0, "mpi", "ompi_mpi_init", EX_INUSE), 512);
	assert_int_equal(value_of(&pr, 1, "mpi", "MPI_Init", EX_RSS), 5000);
	assert_int_equal(value_of(&pr, 1, "mpi", NULL, EX_RSS), 3000);
	assert_int_equal(value_of(&pr, 1, "app", "solver+0x1234", EX_INUSE), 4096);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

/*
 * heap_sites_peak.csv (fixtures/export/peakheap: the run above with the
 * sites live at rank 0's peak): at the peak its rows, with the counts of
 * then; at the end heap_sites.csv's, never both; at a time none.
 */
static void test_build_peak_heap(void **state)
{
	struct ex_data d;
	struct ex_profile pr;

	(void)state;
	load_dir(&d, "fixtures/export/peakheap");
	assert_true(d.has_sites && d.has_peak_sites);
	build(&d, &pr, EX_AT_PEAK, 0, -1);
	assert_true(pr.has_heap);
	assert_false(pr.dropped_heap);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_INUSE), 8192 + 1024);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_INUSE_OBJ), 8 + 2);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_ALLOC_OBJ), 9 + 2);
	/* Not live at the peak: not in the peak's rows. */
	assert_int_equal(value_of(&pr, 0, "mpi", "ompi_mpi_init", EX_INUSE), -1);
	assert_int_equal(value_of(&pr, 1, "app", "solver+0x1234", EX_INUSE), -1);
	ex_profile_free(&pr);

	build(&d, &pr, EX_AT_END, 0, -1);
	assert_int_equal(value_of(&pr, 0, "app", "build_mesh", EX_INUSE), 7168);
	assert_int_equal(value_of(&pr, 0, "mpi", "ompi_mpi_init", EX_INUSE), 512);
	ex_profile_free(&pr);

	build(&d, &pr, EX_AT_TIME, 0.25, -1);
	assert_true(pr.dropped_heap);
	assert_false(pr.has_heap);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

static void test_build_moments(void **state)
{
	struct ex_data d;
	struct ex_profile pr;
	struct ex_select sel = { .at = EX_AT_TIME, .at_time = 0.05 };
	char err[EX_ERRLEN];

	(void)state;
	load(&d);
	/* Peak: rank 0 at 0.2 s, mpi whole (its functions are known at the end only). */
	build(&d, &pr, EX_AT_PEAK, 0, -1);
	assert_true(pr.procs[0].t == 0.2);
	assert_int_equal(value_of(&pr, 0, "mpi", NULL, EX_RSS), 16000);
	assert_int_equal(value_of(&pr, 0, "mpi", "MPI_Init", EX_RSS), -1);
	assert_true(pr.dropped_fns && pr.dropped_heap);
	assert_false(pr.has_heap);
	ex_profile_free(&pr);

	/* A time: each process's last sample by then. */
	build(&d, &pr, EX_AT_TIME, 0.15, -1);
	assert_true(pr.procs[0].t == 0.1);
	assert_true(pr.procs[1].t == 0.101);
	assert_int_equal(value_of(&pr, 1, "app", NULL, EX_RSS), 8000);
	ex_profile_free(&pr);

	/* One rank. */
	build(&d, &pr, EX_AT_PEAK, 0, 1);
	assert_int_equal(pr.nprocs, 1);
	assert_int_equal(pr.procs[0].rank, 1);
	ex_profile_free(&pr);

	/* Before anything was sampled, or a rank the run does not have: refused, saying so. */
	assert_int_equal(ex_build(&d, &sel, &pr, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no process has a sample at or before 0.050 s"));
	sel = (struct ex_select){ .at = EX_AT_PEAK, .one_rank = true, .rank = 7 };
	assert_int_equal(ex_build(&d, &sel, &pr, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no rank 7"));
	ex_data_free(&d);
}

static void test_fn_over(void **state)
{
	struct ex_data d;
	struct ex_profile pr;

	(void)state;
	load(&d);
	/* MPI functions holding more than mpi's rss cannot be under it: mpi stays whole. */
	d.run.calls[0].net = 50000;
	build(&d, &pr, EX_AT_END, 0, 0);
	assert_int_equal(pr.fn_over, 1);
	assert_int_equal(value_of(&pr, 0, "mpi", NULL, EX_RSS), 10000);
	assert_int_equal(value_of(&pr, 0, "mpi", "MPI_Init", EX_RSS), -1);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

static char *write_mem(const struct ex_profile *pr, enum ex_value v,
		       int (*w)(FILE *, const struct ex_profile *, enum ex_value, char *, size_t),
		       size_t *len)
{
	char *buf = NULL, err[EX_ERRLEN];
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	if (w(f, pr, v, err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	return buf;
}

static void test_folded(void **state)
{
	struct ex_data d;
	struct ex_profile pr;
	size_t len;
	char *out;

	(void)state;
	load(&d);
	build(&d, &pr, EX_AT_END, 0, -1);
	out = write_mem(&pr, EX_RSS, ex_write_folded, &len);
	assert_string_equal(out,
			    "rank 0;app 8000\n"
			    "rank 0;mpi 1000\n"
			    "rank 0;libc 2000\n"
			    "rank 0;mpi;MPI_Init 6000\n"
			    "rank 0;mpi;MPI_Alloc_mem 3000\n"
			    "rank 1;app 4000\n"
			    "rank 1;mpi 3000\n"
			    "rank 1;mpi;MPI_Init 5000\n");
	free(out);
	out = write_mem(&pr, EX_INUSE, ex_write_folded, &len);
	assert_string_equal(out,
			    "rank 0;app;build_mesh 7168\n"
			    "rank 0;mpi;ompi_mpi_init 512\n"
			    "rank 1;app;solver+0x1234 4096\n");
	free(out);
	ex_profile_free(&pr);
	/* One process: no rank frame. */
	build(&d, &pr, EX_AT_PEAK, 0, 1);
	out = write_mem(&pr, EX_PSS, ex_write_folded, &len);
	assert_string_equal(out, "app 2000\nmpi 4000\n");
	free(out);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

static void test_speedscope(void **state)
{
	struct ex_data d;
	struct ex_profile pr;
	size_t len;
	char *out;

	(void)state;
	load(&d);
	build(&d, &pr, EX_AT_PEAK, 0, -1);
	out = write_mem(&pr, EX_RSS, ex_write_speedscope, &len);
	assert_non_null(strstr(out, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	assert_non_null(strstr(out, "\"shared\":{\"frames\":[{\"name\":\"app\",\"file\":\"app\"},"
				    "{\"name\":\"mpi\",\"file\":\"mpi\"},{\"name\":\"libc\",\"file\":\"libc\"}]}"));
	/* One profile per process, weights in bytes, endValue their sum. */
	assert_non_null(strstr(out, "\"name\":\"rank 0 (pid 100): resident bytes at its peak, 0.200 s\","
				    "\"unit\":\"bytes\",\"startValue\":0,\"endValue\":30000,"
				    "\"samples\":[[0],[1],[2]],\"weights\":[12000,16000,2000]}"));
	assert_non_null(strstr(out, "\"endValue\":12000,\"samples\":[[0],[1]],\"weights\":[4000,8000]}"));
	assert_int_equal(out[len - 1], '\n');
	free(out);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

static void test_pprof(void **state)
{
	Perftools__Profiles__Profile *p;
	struct ex_data d;
	struct ex_profile pr;
	size_t len, plen;
	int64_t rank0 = 0, all = 0;
	uint8_t *raw;
	char *out;

	(void)state;
	load(&d);
	build(&d, &pr, EX_AT_END, 0, -1);
	out = write_mem(&pr, EX_RSS, ex_write_pprof, &len);
	raw = gunzip(out, len, &plen);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, EX_NVALUES);
	assert_string_equal(pstr(p, p->sample_type[EX_RSS]->type), "resident_space");
	assert_string_equal(pstr(p, p->sample_type[EX_PSS]->type), "proportional_space");
	assert_string_equal(pstr(p, p->sample_type[EX_INUSE]->type), "inuse_space");
	assert_string_equal(pstr(p, p->sample_type[EX_INUSE_OBJ]->unit), "count");
	assert_string_equal(pstr(p, p->default_sample_type), "resident_space");
	/* One mapping per component, functions by name. */
	assert_int_equal(p->n_mapping, 3);
	assert_string_equal(pstr(p, p->mapping[0]->filename), "app");
	assert_true(p->mapping[0]->has_functions);
	assert_int_equal(p->n_comment, 2);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const Perftools__Profiles__Location *leaf = NULL;
		bool is_rank0 = false;

		assert_int_equal(s->n_value, EX_NVALUES);
		for (size_t k = 0; k < s->n_label; k++)
			if (!strcmp(pstr(p, s->label[k]->key), "rank") &&
			    !strcmp(pstr(p, s->label[k]->str), "0"))
				is_rank0 = true;
		all += s->value[EX_RSS];
		rank0 += is_rank0 ? s->value[EX_RSS] : 0;
		/* Leaf first: MPI_Init's location, then mpi's. */
		for (size_t l = 0; l < p->n_location; l++)
			if (p->location[l]->id == s->location_id[0])
				leaf = p->location[l];
		assert_non_null(leaf);
		if (s->n_location_id == 2 && leaf->line[0]->function_id) {
			const char *fn = pstr(p, p->function[leaf->line[0]->function_id - 1]->name);

			if (!strcmp(fn, "MPI_Init") && is_rank0)
				assert_int_equal(s->value[EX_RSS], 6000);
		}
	}
	/* Rank 0's stacks are its VmRSS at the end, the two ranks' the sum. */
	assert_int_equal(rank0, 20000);
	assert_int_equal(all, 32000);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(out);
	ex_profile_free(&pr);
	ex_data_free(&d);
}

/* The build ID of the pprof mapping whose file is file ("" if none, NULL if no such mapping). */
static const char *mapping_build_id(const Perftools__Profiles__Profile *p, const char *file)
{
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!strcmp(pstr(p, p->mapping[i]->filename), file))
			return pstr(p, p->mapping[i]->build_id);
	return NULL;
}

static Perftools__Profiles__Profile *pprof_of(const struct ex_profile *pr)
{
	Perftools__Profiles__Profile *p;
	size_t len, plen;
	char *out = write_mem(pr, EX_RSS, ex_write_pprof, &len);
	uint8_t *raw = gunzip(out, len, &plen);

	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	free(raw);
	free(out);
	return p;
}

/*
 * Each file's mapping carries the GNU build ID alloc_stacks.csv's
 * build_ids gives its frames (fixtures/export/stacks: solver's and
 * libhelper.so's, rank 1's row none); a component's own mapping has none;
 * a file of the version before build_ids loads, with no IDs.
 */
static void test_pprof_build_ids(void **state)
{
	static const char old[] = "rank,pid,component,stack,rss_bytes,peak_rss_bytes\n"
				  "0,100,app,solver:main+0x15;libhelper.so:helper_alloc+0x10,2000,2000\n";
	Perftools__Profiles__Profile *p;
	struct ex_data d;
	struct ex_profile pr;
	char err[EX_ERRLEN];
	FILE *f;

	(void)state;
	load_dir(&d, "fixtures/export/stacks");
	build(&d, &pr, EX_AT_END, 0, -1);
	p = pprof_of(&pr);
	assert_string_equal(mapping_build_id(p, "solver"), "5e1f0000000000000000000000000000000000aa");
	assert_string_equal(mapping_build_id(p, "libhelper.so"), "4e1b00000000000000000000000000000000bb01");
	assert_string_equal(mapping_build_id(p, "app"), "");
	perftools__profiles__profile__free_unpacked(p, NULL);
	ex_profile_free(&pr);
	/* Rank 1 alone: its row has no IDs, so solver's mapping has none. */
	build(&d, &pr, EX_AT_END, 0, 1);
	p = pprof_of(&pr);
	assert_string_equal(mapping_build_id(p, "solver"), "");
	perftools__profiles__profile__free_unpacked(p, NULL);
	ex_profile_free(&pr);
	ex_data_free(&d);

	memset(&d, 0, sizeof(d));
	f = fmemopen((void *)old, strlen(old), "r");
	assert_non_null(f);
	assert_int_equal(ex_read_stacks(&d, f, "alloc_stacks.csv", err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(d.nstacks, 1);
	assert_null(d.stacks[0].build_ids);
	ex_data_free(&d);
}

static void test_stacks_refused(void **state)
{
	static const char *const bad[] = {
		"rank,pid,component,stack,rss_bytes\n0,1,app,a:b+0x1,5\n",
		"rank,pid,component,stack,rss_bytes,peak_rss_bytes\n0,1,app,,5,5\n",
		"rank,pid,component,stack,rss_bytes,peak_rss_bytes\n0,1,app,a:b+0x1,-5,5\n",
		"rank,pid,component,stack,rss_bytes,peak_rss_bytes\n0,1,,a:b+0x1,5,5\n",
		"rank,pid,component,stack,rss_bytes,peak_rss_bytes\n0,1,app,\"a,5,5\n",
		"rank,pid,component,stack,rss_bytes,peak_rss_bytes,build_ids\n0,1,app,a:b+0x1,5,5,XYZ\n",
	};
	char err[EX_ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ex_data d = { 0 };
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		assert_non_null(f);
		assert_int_equal(ex_read_stacks(&d, f, "alloc_stacks.csv", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "alloc_stacks.csv"));
		fclose(f);
		ex_data_free(&d);
	}
}

static void test_sites_refused(void **state)
{
	static const char *const bad[] = {
		"rank,pid,site,bytes\n0,1,x,4\n",
		"rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes\n0,1,app,x,1,0,-5,0,0\n",
		"rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes\n0,1,app,x,1,0,5\n",
		"rank,pid,library,site,calls,frees,live_bytes,peak_live_bytes,total_bytes\n0,0,app,x,1,0,5,5,5\n",
		"",
	};
	char err[EX_ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ex_data d = { 0 };
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]) ? strlen(bad[i]) : 1, "r");

		assert_non_null(f);
		if (!*bad[i])
			fgetc(f);
		assert_int_equal(ex_read_sites(&d, f, "heap_sites.csv", err, sizeof(err)), -1);
		assert_non_null(strstr(err, "heap_sites.csv"));
		fclose(f);
		free(d.sites);
	}
}

/* Copy fixture file name of RUN into dir, then append extra (NULL: nothing). */
static void copy_append(const char *dir, const char *name, const char *extra)
{
	char src[256], dst[512], buf[4096];
	FILE *in, *out;
	size_t n;

	snprintf(src, sizeof(src), RUN "/%s", name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	in = fopen(src, "r");
	out = fopen(dst, "w");
	assert_non_null(out);
	while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	if (in)
		fclose(in);
	if (extra)
		fputs(extra, out);
	assert_int_equal(fclose(out), 0);
}

/*
 * ex_load keeps only what a profile or a diff can show (bounded memory,
 * issue 32): rows of heap_sites.csv and alloc_stacks.csv of a process
 * with no timeline, and mpi_calls.csv's of one that is no rank, are read
 * and checked, not kept; summary.csv's rows are not kept; a rank's calls
 * row is (diff shows it). Mutations: proc_wanted returning true (the
 * sites and stacks of pid 777 kept); rp_call_wanted returning true (the
 * calls row of no rank kept); summary_keep_row without its tables_bounded
 * test (summary rows kept).
 */
static void test_load_keeps_what_shows(void **state)
{
	char dir[] = "/tmp/ma-export-tables-XXXXXX", path[512];
	static const char *const plain[] = { "rank-0.csv", "rank-1.csv", "run_info.csv",
					     "summary.csv" };
	struct ex_data base, d;

	(void)state;
	load(&base);
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		copy_append(dir, plain[i], NULL);
	copy_append(dir, "heap_sites.csv", "0,777,app,solver:x+0x1,1,0,8,8,8\n");
	copy_append(dir, "mpi_calls.csv", ",777,MPI_Init,,1,0,1,1,,\n5,555,MPI_Init,,1,0,1,1,,\n");
	snprintf(path, sizeof(path), "%s/alloc_stacks.csv", dir);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("rank,pid,component,stack,rss_bytes,peak_rss_bytes\n"
		      "0,777,app,a:b+0x1,5,5\n0,100,app,a:b+0x1,5,5\n", f);
		assert_int_equal(fclose(f), 0);
	}
	load_dir(&d, dir);
	assert_int_equal(base.run.nsummary, 0);
	assert_int_equal(d.run.nsummary, 0);
	assert_true(d.run.has_summary);
	assert_int_equal(d.nsites, base.nsites);
	assert_int_equal(d.nstacks, 1);
	assert_int_equal(d.stacks[0].pid, 100);
	/* The row of rank 5 stays (no timeline, but a rank): the row of no rank goes. */
	assert_int_equal(d.run.ncalls, base.run.ncalls + 1);
	assert_int_equal(d.run.calls[d.run.ncalls - 1].rank, 5);
	assert_true(d.run.table_bytes > 0);
	ex_data_free(&d);
	ex_data_free(&base);
	for (const char *const *n = (const char *const[]){ "rank-0.csv", "rank-1.csv", "run_info.csv",
			"summary.csv", "heap_sites.csv", "mpi_calls.csv", "alloc_stacks.csv", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * Past RP_MAX_TABLE_BYTES of rows kept, the read is refused in one line
 * naming the file, its line and the limit. Mutation: rp_table_charge
 * returning 0 (never refused).
 */
static void test_table_limit(void **state)
{
	struct rp_run run = { .tables_bounded = true };
	struct rp_reader rd = { .name = "alloc_stacks.csv", .lineno = 7 };
	char err[EX_ERRLEN];

	(void)state;
	assert_int_equal(rp_table_charge(&run, &rd, RP_MAX_TABLE_BYTES - 10, err, sizeof(err)), 0);
	assert_int_equal(rp_table_charge(&run, &rd, 10, err, sizeof(err)), 0);
	assert_int_equal(rp_table_charge(&run, &rd, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "alloc_stacks.csv:7: more than 256 MiB of per-process rows"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(run.table_bytes, RP_MAX_TABLE_BYTES);
	run.tables_bounded = false;
	assert_int_equal(rp_table_charge(&run, &rd, SIZE_MAX, err, sizeof(err)), 0);
}

/* export_main on up to 7 arguments, NULL-terminated. */
static int run_export(const char *a1, ...)
{
	char *argv[9] = { "export", (char *)a1 };
	int argc = 2;
	va_list ap;

	va_start(ap, a1);
	while (argc < 8 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return export_main(argc, argv);
}

static void test_command(void **state)
{
	char dir[] = "/tmp/memattr-export-XXXXXX", out[128], tmp[160];
	struct export_args a;
	char err[EX_ERRLEN];
	struct stat st;
	char *argv[] = { "export", RUN, "--format", "pprof", "--rank", "1", "--at", "0.25", NULL };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out.pb.gz", dir);

	assert_int_equal(export_parse_args(8, argv, &a, err, sizeof(err)), 0);
	assert_string_equal(a.writer->name, "pprof");
	assert_true(a.sel.one_rank && a.sel.rank == 1 && a.sel.at == EX_AT_TIME && a.sel.at_time == 0.25);
	assert_string_equal(a.dir, RUN);

	assert_int_equal(run_export(RUN, "-f", "speedscope", "-o", out, NULL), 0);
	assert_int_equal(stat(out, &st), 0);
	assert_true(st.st_size > 100);
	unlink(out);
	assert_int_equal(run_export(RUN, "--at", "end", "--value", "heap", "-o", out, NULL), 0);
	unlink(out);
	assert_int_equal(run_export("fixtures/export/peakheap", "--value", "heap", "-o", out, NULL), 0);
	unlink(out);

	/* Usage errors: 2, and nothing written. */
	assert_int_equal(run_export(RUN, "--format", "svg", "-o", out, NULL), 2);
	assert_int_equal(run_export(RUN, "--rank", "-1", "-o", out, NULL), 2);
	assert_int_equal(run_export(RUN, "--at", "yesterday", "-o", out, NULL), 2);
	assert_int_equal(run_export(RUN, "--at", "0.25", "--value", "heap", "-o", out, NULL), 2);
	assert_int_equal(run_export(RUN, RUN, "-o", out, NULL), 2);
	assert_int_equal(run_export("-o", out, NULL), 2);
	/* Bad data: 1, and nothing written, not even the temporary file. */
	assert_int_equal(run_export("fixtures/report/badnum", "-o", out, NULL), 1);
	assert_int_equal(run_export("fixtures/report/empty", "-o", out, NULL), 1);
	assert_int_equal(run_export(dir, "-o", out, NULL), 1);
	assert_int_equal(run_export(RUN, "--rank", "9", "-o", out, NULL), 1);
	assert_int_equal(run_export("fixtures/report/good", "--at", "end", "--value", "heap", "-o", out, NULL), 1);
	/* At the peak, a run traced before heap_sites_peak.csv: 1, said. */
	assert_int_equal(run_export(RUN, "--value", "heap", "-o", out, NULL), 1);
	assert_int_equal(stat(out, &st), -1);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
	assert_int_equal(stat(tmp, &st), -1);
	/* Into a directory that does not exist: 1, said, nothing left. */
	snprintf(tmp, sizeof(tmp), "%s/none/out", dir);
	assert_int_equal(run_export(RUN, "-o", tmp, NULL), 1);
	assert_int_equal(rmdir(dir), 0);
}

/* Frames as written in the source: C++ demangled, gfortran module procedures, the rest as is. */
static void test_demangle(void **state)
{
	char out[256];

	(void)state;
	/* Without libstdc++ (the arm64 unit tests under qemu-user) a C++ name stays as it is. */
	ex_demangle("_Z15generate_matrixiiiPP24HPC_Sparse_Matrix_STRUCTPPdS3_S3_", out, sizeof(out));
	assert_string_equal(out, ex_cxx_demangler() ?
			    "generate_matrix(int, int, int, HPC_Sparse_Matrix_STRUCT**, double**, double**, double**)" :
			    "_Z15generate_matrixiiiPP24HPC_Sparse_Matrix_STRUCTPPdS3_S3_");
	ex_demangle("__clover_module_MOD_allocate_fields", out, sizeof(out));
	assert_string_equal(out, "clover_module::allocate_fields");
	ex_demangle("main", out, sizeof(out));
	assert_string_equal(out, "main");
	ex_demangle("_Zjunk", out, sizeof(out));
	assert_string_equal(out, "_Zjunk");
	ex_demangle("__MOD_x", out, sizeof(out));
	assert_string_equal(out, "__MOD_x");
	ex_site_frame("test_HPCCG:_Z5HPCCGv+0x1f", out, sizeof(out));
	assert_string_equal(out, ex_cxx_demangler() ? "HPCCG()" : "_Z5HPCCGv");
	ex_demangle("_Z15generate_matrixiiiPP24HPC_Sparse_Matrix_STRUCTPPdS3_S3_", out, 12);
	assert_string_equal(out, ex_cxx_demangler() ? "generate_ma" : "_Z15generat");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_at),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_site_frame),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_build_end),
		cmocka_unit_test(test_build_moments),
		cmocka_unit_test(test_build_peak_heap),
		cmocka_unit_test(test_fn_over),
		cmocka_unit_test(test_build_stacks),
		cmocka_unit_test(test_stacks_refused),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_pprof_build_ids),
		cmocka_unit_test(test_sites_refused),
		cmocka_unit_test(test_load_keeps_what_shows),
		cmocka_unit_test(test_table_limit),
		cmocka_unit_test(test_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
