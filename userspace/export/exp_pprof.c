// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof's profile.proto, gzip'ed, as `go tool pprof` and every pprof
 * reader take it. Encoded by protobuf-c from profile.proto (Debian's
 * libprotobuf-c), compressed by zlib: no hand-written wire format.
 *
 * Sample types: resident_space and proportional_space (bytes); with heap
 * sites, inuse_space, inuse_objects, alloc_space, alloc_objects as pprof's
 * heap profiles name them. One Mapping per component (library; with its
 * GNU build ID where alloc_stacks.csv gives the file's), one
 * Function and Location per frame, labels rank, pid, component and
 * mpi_function on each sample so that pprof's -tagfocus picks a rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

#define NLABELS	4

static const char *const type_name[EX_NVALUES][2] = {
	[EX_RSS] = { "resident_space", "bytes" },
	[EX_PSS] = { "proportional_space", "bytes" },
	[EX_INUSE] = { "inuse_space", "bytes" },
	[EX_INUSE_OBJ] = { "inuse_objects", "count" },
	[EX_ALLOC] = { "alloc_space", "bytes" },
	[EX_ALLOC_OBJ] = { "alloc_objects", "count" },
};

/* Everything the message points to, freed at once. */
struct pp {
	Profile prof;
	ValueType types[EX_NVALUES], *type_ptr[EX_NVALUES];
	Mapping *maps, **map_ptr;
	Function *funcs, **func_ptr;
	Location *locs, **loc_ptr;
	Line *lines, **line_ptr;
	Sample *samples, **sample_ptr;
	Label *labels, **label_ptr;
	uint64_t *loc_ids;
	int64_t *values;
	struct ex_strings str;	/* the profile's strings and ours, one table */
	int64_t *comments;
};

static void pp_free(struct pp *p)
{
	free(p->maps);
	free(p->map_ptr);
	free(p->funcs);
	free(p->func_ptr);
	free(p->locs);
	free(p->loc_ptr);
	free(p->lines);
	free(p->line_ptr);
	free(p->samples);
	free(p->sample_ptr);
	free(p->labels);
	free(p->label_ptr);
	free(p->loc_ids);
	free(p->values);
	free(p->comments);
	ex_strings_free(&p->str);
}

/* String index in the output table; the profile's are interned first, so theirs keep their numbers. */
static int64_t str_of(struct pp *p, const char *s, bool *oom)
{
	long i = ex_intern(&p->str, s);

	if (i < 0)
		*oom = true;
	return i < 0 ? 0 : i;
}

/* A mapping's file: "lib:libfoo.so" is libfoo.so; app, mpi, libc... keep their names. */
static const char *map_file(const char *comp)
{
	return !strncmp(comp, "lib:", 4) ? comp + 4 : comp;
}

static int build_tables(struct pp *p, const struct ex_profile *pr, bool *oom)
{
	size_t nm = pr->nmappings, nf = pr->nframes;

	p->maps = calloc(nm ? nm : 1, sizeof(*p->maps));
	p->map_ptr = calloc(nm ? nm : 1, sizeof(*p->map_ptr));
	p->funcs = calloc(nf ? nf : 1, sizeof(*p->funcs));
	p->func_ptr = calloc(nf ? nf : 1, sizeof(*p->func_ptr));
	p->locs = calloc(nf ? nf : 1, sizeof(*p->locs));
	p->loc_ptr = calloc(nf ? nf : 1, sizeof(*p->loc_ptr));
	p->lines = calloc(nf ? nf : 1, sizeof(*p->lines));
	p->line_ptr = calloc(nf ? nf : 1, sizeof(*p->line_ptr));
	if (!p->maps || !p->map_ptr || !p->funcs || !p->func_ptr || !p->locs || !p->loc_ptr ||
	    !p->lines || !p->line_ptr)
		return -1;
	for (size_t i = 0; i < nm; i++) {
		Mapping *m = &p->maps[i];

		perftools__profiles__mapping__init(m);
		/* Ids are 1-based: 0 means "none" to pprof. */
		m->id = i + 1;
		m->filename = str_of(p, map_file(ex_str(pr, pr->mappings[i])), oom);
		/* The file's GNU build ID (alloc_stacks.csv's build_ids): what symbolizers match on. */
		if (pr->build_ids[i])
			m->build_id = str_of(p, ex_str(pr, pr->build_ids[i]), oom);
		/* Names, no addresses: pprof must not try to symbolize these. */
		m->has_functions = 1;
		p->map_ptr[i] = m;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct ex_frame *fr = &pr->frames[i];

		perftools__profiles__function__init(&p->funcs[i]);
		p->funcs[i].id = i + 1;
		p->funcs[i].name = str_of(p, ex_str(pr, fr->name), oom);
		p->funcs[i].system_name = p->funcs[i].name;
		p->funcs[i].filename = str_of(p, map_file(ex_str(pr, pr->mappings[fr->mapping])), oom);
		p->func_ptr[i] = &p->funcs[i];
		perftools__profiles__line__init(&p->lines[i]);
		p->lines[i].function_id = i + 1;
		p->line_ptr[i] = &p->lines[i];
		perftools__profiles__location__init(&p->locs[i]);
		p->locs[i].id = i + 1;
		p->locs[i].mapping_id = fr->mapping + 1;
		p->locs[i].n_line = 1;
		p->locs[i].line = &p->line_ptr[i];
		p->loc_ptr[i] = &p->locs[i];
	}
	return 0;
}

static void label(Label *l, Label **slot, int64_t key, int64_t str)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	*slot = l;
}

static int build_samples(struct pp *p, const struct ex_profile *pr, bool *oom)
{
	size_t n = pr->nsamples ? pr->nsamples : 1;
	int64_t k_rank = str_of(p, "rank", oom), k_pid = str_of(p, "pid", oom);
	int64_t k_comp = str_of(p, "component", oom), k_fn = str_of(p, "mpi_function", oom);

	p->samples = calloc(n, sizeof(*p->samples));
	p->sample_ptr = calloc(n, sizeof(*p->sample_ptr));
	p->labels = calloc(n * NLABELS, sizeof(*p->labels));
	p->label_ptr = calloc(n * NLABELS, sizeof(*p->label_ptr));
	p->loc_ids = calloc(n * EX_MAX_DEPTH, sizeof(*p->loc_ids));
	p->values = calloc(n * EX_NVALUES, sizeof(*p->values));
	if (!p->samples || !p->sample_ptr || !p->labels || !p->label_ptr || !p->loc_ids || !p->values)
		return -1;
	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];
		const struct ex_proc *ep = &pr->procs[s->proc];
		Sample *o = &p->samples[i];
		Label *l = &p->labels[i * NLABELS];
		Label **lp = &p->label_ptr[i * NLABELS];
		size_t nl = 0;
		char num[16];
		const char *comp = ex_str(pr, pr->mappings[pr->frames[s->frames[0]].mapping]);

		perftools__profiles__sample__init(o);
		/* pprof's stacks are leaf first. */
		o->n_location_id = s->depth;
		o->location_id = &p->loc_ids[i * EX_MAX_DEPTH];
		for (uint32_t k = 0; k < s->depth; k++)
			o->location_id[k] = s->frames[s->depth - 1 - k] + 1;
		o->n_value = pr->has_heap ? EX_NVALUES : EX_PSS + 1;
		o->value = &p->values[i * EX_NVALUES];
		memcpy(o->value, s->v, sizeof(s->v));
		/*
		 * Rank and pid as strings: pprof's readers drop a numeric label
		 * of 0 with no unit, and rank 0 is the one most asked for.
		 */
		snprintf(num, sizeof(num), "%d", ep->rank);
		if (ep->rank >= 0)
			label(&l[nl], &lp[nl], k_rank, str_of(p, num, oom)), nl++;
		snprintf(num, sizeof(num), "%d", ep->pid);
		label(&l[nl], &lp[nl], k_pid, str_of(p, num, oom)), nl++;
		label(&l[nl], &lp[nl], k_comp, str_of(p, comp, oom)), nl++;
		if (s->function)
			label(&l[nl], &lp[nl], k_fn, str_of(p, ex_str(pr, s->function), oom)), nl++;
		o->n_label = nl;
		o->label = lp;
		p->sample_ptr[i] = o;
	}
	return 0;
}

/* Where each process's figures come from, for `pprof -comments`. */
static int build_comments(struct pp *p, const struct ex_profile *pr, bool *oom)
{
	p->comments = calloc(pr->nprocs ? pr->nprocs : 1, sizeof(*p->comments));
	if (!p->comments)
		return -1;
	for (size_t i = 0; i < pr->nprocs; i++) {
		char who[64], line[160];

		/* "rank 0 pid 100", or "pid 4711" for a process that is no rank. */
		if (pr->procs[i].rank >= 0)
			snprintf(who, sizeof(who), "rank %d pid %d", pr->procs[i].rank, pr->procs[i].pid);
		else
			snprintf(who, sizeof(who), "pid %d", pr->procs[i].pid);
		snprintf(line, sizeof(line), "%s: time_s %.3f (%s)", who,
			 pr->procs[i].t, pr->at == EX_AT_PEAK ? "its peak" :
			 pr->at == EX_AT_END ? "its last sample" : "its last sample by --at");
		p->comments[i] = str_of(p, line, oom);
	}
	return 0;
}

/* The message packed and gzip'ed into f. */
static int emit(FILE *f, const Profile *prof, char *err, size_t errlen)
{
	size_t len = perftools__profiles__profile__get_packed_size(prof);
	uint8_t *buf = malloc(len ? len : 1), out[65536];
	z_stream z = { 0 };
	int zr = Z_OK, ret = -1;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	perftools__profiles__profile__pack(prof, buf);
	/* 15 + 16: a gzip header and trailer, what pprof expects of a .pb.gz. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		snprintf(err, errlen, "zlib: cannot start compressing");
		free(buf);
		return -1;
	}
	z.next_in = buf;
	z.avail_in = (uInt)len;
	while (zr != Z_STREAM_END) {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			snprintf(err, errlen, "zlib: %s", z.msg ? z.msg : "compression failed");
			goto out;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			snprintf(err, errlen, "write error");
			goto out;
		}
	}
	ret = 0;
out:
	deflateEnd(&z);
	free(buf);
	return ret;
}

int ex_write_pprof(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err, size_t errlen)
{
	struct pp p = { 0 };
	bool oom = false;
	size_t ntypes = pr->has_heap ? EX_NVALUES : EX_PSS + 1;
	int ret = -1;

	/* The profile's own strings first, in order: its indices stay valid in ours. */
	for (size_t i = 0; i < pr->str.n; i++)
		if (ex_intern(&p.str, pr->str.s[i]) != (long)i)
			oom = true;
	perftools__profiles__profile__init(&p.prof);
	for (size_t i = 0; i < ntypes; i++) {
		perftools__profiles__value_type__init(&p.types[i]);
		p.types[i].type = str_of(&p, type_name[i][0], &oom);
		p.types[i].unit = str_of(&p, type_name[i][1], &oom);
		p.type_ptr[i] = &p.types[i];
	}
	if (oom || build_tables(&p, pr, &oom) || build_samples(&p, pr, &oom) ||
	    build_comments(&p, pr, &oom) || oom) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	p.prof.n_sample_type = ntypes;
	p.prof.sample_type = p.type_ptr;
	/* The figure the user asked for is the one pprof shows first. */
	p.prof.default_sample_type = p.types[v < ntypes ? v : EX_RSS].type;
	p.prof.n_sample = pr->nsamples;
	p.prof.sample = p.sample_ptr;
	p.prof.n_mapping = pr->nmappings;
	p.prof.mapping = p.map_ptr;
	p.prof.n_location = pr->nframes;
	p.prof.location = p.loc_ptr;
	p.prof.n_function = pr->nframes;
	p.prof.function = p.func_ptr;
	p.prof.n_comment = pr->nprocs;
	p.prof.comment = p.comments;
	if (pr->start_unix > 0)
		p.prof.time_nanos = (int64_t)(pr->start_unix * 1e9);
	/* Last: every string is in the table now. */
	p.prof.n_string_table = p.str.n;
	p.prof.string_table = p.str.s;
	ret = emit(f, &p.prof, err, errlen);
out:
	pp_free(&p);
	return ret;
}
