// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>

#include "row_file.h"
#include "row_sink.h"
#include "sink.h"

struct row_sink {
	struct sink base;
	struct output_dir *dir;
	const char *name, *header;
	proc_rows_fn rows;
	struct row_spool ended;
};

/* One process's rows (ctx: a struct row_of). */
struct row_of {
	proc_rows_fn rows;
	const struct sink_proc *p;
};

static int one_proc(FILE *f, void *ctx)
{
	const struct row_of *r = ctx;

	return r->rows(f, r->p);
}

struct live {
	proc_rows_fn rows;
	const struct sink_proc *const *procs;
	size_t n;
};

static int live_procs(FILE *f, void *ctx)
{
	const struct live *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (l->rows(f, l->procs[i]))
			return -1;
	return 0;
}

static void proc_end(struct sink *k, const struct sink_job *j, const struct sink_proc *p)
{
	struct row_sink *r = (struct row_sink *)k;
	struct row_of one = { r->rows, p };

	(void)j;
	row_spool_add(&r->ended, one_proc, &one);
}

static void job_summary(struct sink *k, const struct sink_job *j,
			const struct sink_proc *const *live, size_t nlive)
{
	struct row_sink *r = (struct row_sink *)k;
	struct live l = { r->rows, live, nlive };

	/* Synced once, when the job is over: the rewrites before only replace each other. */
	row_file_write(r->dir, r->name, r->header, &r->ended, live_procs, &l, j->finished);
}

static void destroy(struct sink *k)
{
	struct row_sink *r = (struct row_sink *)k;

	row_spool_close(&r->ended);
	free(r);
}

static const struct sink_ops row_sink_ops = {
	.proc_end = proc_end,
	.job_summary = job_summary,
	.destroy = destroy,
};

struct sink *row_sink_new(struct output_dir *dir, const char *name, const char *header,
			  proc_rows_fn rows)
{
	struct row_sink *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->base.ops = &row_sink_ops;
	r->dir = dir;
	r->name = name;
	r->header = header;
	r->rows = rows;
	return &r->base;
}
