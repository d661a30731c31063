/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading rank-<R>.csv.gz: a FILE * that inflates. A stream still being
 * written (the node service's spool) reads up to its last sync flush and
 * then ends, as a plain file being written would (clearerr() and read
 * again for what was written since); what it inflates to is
 * capped, so a small hostile file cannot make the report read forever.
 */
#ifndef MEMATTR_GZ_READ_H
#define MEMATTR_GZ_READ_H

#include <stdint.h>
#include <stdio.h>

/*
 * Takes plain over (closed with the result, or on failure); NULL: errno set.
 * It seeks back to its start only (fseek 0, SEEK_SET: inflated again).
 */
FILE *gz_open_read(FILE *plain, uint64_t max_bytes);

#endif
