/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A gzip stream behind a FILE *: the CSV writers stay as they are, and
 * rank-<R>.csv.gz is written through them. Every fflush ends in a zlib
 * sync flush, so what was flushed is whole, decodable deflate data: `zcat`
 * reads a file still being written, and a crash loses at most the rows not
 * yet flushed (one sample: the CSV sink flushes every sample). A write
 * that fails (a full disk) cuts the file back to its last sync flush, so it
 * ends in whole rows, and the stream writes nothing more (errno says why).
 */
#ifndef MEMATTR_GZ_FILE_H
#define MEMATTR_GZ_FILE_H

#include <stdio.h>

/* Takes plain over (closed with the result, or on failure); NULL: errno set. */
FILE *gz_wrap(FILE *plain);

#endif
