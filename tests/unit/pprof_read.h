/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading back what the pprof writer wrote, for the unit tests (include
 * after cmocka.h): gunzip, then protobuf-c's own decoder of
 * profile.proto, never our writer's code.
 */
#ifndef MEMATTR_TEST_PPROF_READ_H
#define MEMATTR_TEST_PPROF_READ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "profile.pb-c.h"

/* gunzip a buffer: the pprof writer's output must be gzip, as pprof reads it. */
static inline uint8_t *gunzip(const char *in, size_t len, size_t *outlen)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream z = { 0 };

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*outlen = z.total_out;
	inflateEnd(&z);
	return out;
}

static inline const char *pstr(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* The profile in the .pb.gz file at path (free with ..._free_unpacked). */
static inline Perftools__Profiles__Profile *pprof_read_file(const char *path)
{
	Perftools__Profiles__Profile *p;
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 20);
	size_t n, plen;
	uint8_t *raw;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	raw = gunzip(buf, n, &plen);
	p = perftools__profiles__profile__unpack(NULL, plen, raw);
	assert_non_null(p);
	free(raw);
	free(buf);
	return p;
}

#endif
