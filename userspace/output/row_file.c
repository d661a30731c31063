// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>

#include "csv_out.h"
#include "row_file.h"

void row_spool_add(struct row_spool *sp, row_fn rows, void *ctx)
{
	if (sp->err)
		return;
	if (!sp->f)
		sp->f = tmpfile();
	errno = 0;
	if (!sp->f || rows(sp->f, ctx) || fflush(sp->f))
		sp->err = errno ? errno : EIO;
}

void row_spool_close(struct row_spool *sp)
{
	if (sp->f)
		fclose(sp->f);
	sp->f = NULL;
}

int row_spool_copy(const struct row_spool *sp, FILE *to)
{
	char buf[65536];
	size_t n;

	if (sp->err) {
		errno = sp->err;
		return -1;
	}
	if (!sp->f)
		return 0;
	fflush(sp->f);
	rewind(sp->f);
	while ((n = fread(buf, 1, sizeof(buf), sp->f)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			break;
	/* Later rows are appended after these. */
	fseek(sp->f, 0, SEEK_END);
	return ferror(sp->f) || ferror(to) ? -1 : 0;
}

/* name whole, or not at all (the previous one stays, no temporary file is left). */
static int write_file(struct output_dir *dir, const char *name, const char *header,
		      const struct row_spool *sp, row_fn live, void *ctx, bool durable)
{
	char tmp[256];
	FILE *f = outdir_begin_replace(dir, name, tmp, sizeof(tmp));

	if (!f)
		return -1;
	if (fprintf(f, "%s\n", header) < 0 || row_spool_copy(sp, f) || live(f, ctx))
		goto fail;
	return outdir_commit_as(dir, f, tmp, name, durable);
fail:
	outdir_abort(dir, f, tmp);
	return -1;
}

void row_file_write(struct output_dir *dir, const char *name, const char *header,
		    struct row_spool *sp, row_fn live, void *ctx, bool durable)
{
	errno = 0;
	if (write_file(dir, name, header, sp, live, ctx, durable))
		outdir_write_failed(dir, name, errno ? errno : EIO,
				    sp->err ? "ended processes' rows are lost" : NULL);
}
