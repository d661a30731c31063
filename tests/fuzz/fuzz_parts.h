/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The frame of the harnesses that read a dataset (fuzz_report, fuzz_export):
 * the input is cut at lines "--" into files, each handed, as a stream
 * that keeps its last line break as a file would, to the reader its
 * position selects; what is read is then written to /dev/null.
 */
#ifndef MEMATTR_FUZZ_PARTS_H
#define MEMATTR_FUZZ_PARTS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_SEP	"\n--\n"

/* /dev/null, opened once: where every writer writes. */
static inline FILE *fuzz_devnull(void)
{
	static FILE *devnull;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull)
			abort();
	}
	return devnull;
}

/* Part idx of the input as a stream; a reader's refusal is fine. */
typedef void (*fuzz_part_fn)(void *arg, size_t idx, FILE *f);

/* data cut into at most max parts, each non-empty one to part(arg, idx, stream). */
static inline void fuzz_parts(const uint8_t *data, size_t size, size_t max, fuzz_part_fn part,
			      void *arg)
{
	char *buf = malloc(size + 1), *p, *end, *sep;
	size_t idx = 0;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	p = buf;
	end = buf + size;
	while (p <= end && idx < max) {
		/* The part keeps its line break, as a file would. */
		size_t len;
		FILE *f;

		sep = memmem(p, (size_t)(end - p), FUZZ_SEP, strlen(FUZZ_SEP));
		len = sep ? (size_t)(sep - p) + 1 : (size_t)(end - p);
		if (len && (f = fmemopen(p, len, "r"))) {
			part(arg, idx, f);
			fclose(f);
		}
		idx++;
		if (!sep)
			break;
		p = sep + strlen(FUZZ_SEP);
	}
	free(buf);
}

#endif
