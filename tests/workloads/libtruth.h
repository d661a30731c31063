/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libtruth.so: a shared library that asks for memory itself, so memattr-bpf
 * must charge it to `lib:libtruth.so`, not to the program or to libc.
 */
#ifndef LIBTRUTH_H
#define LIBTRUTH_H

#include <stddef.h>

/*
 * One large malloc of large bytes, small_total bytes of 1008-byte mallocs
 * (1 KiB heap chunks), an anonymous mmap of map bytes and a SysV shared
 * segment of map bytes; every page touched. Returns 0, or -1 when an
 * allocation failed.
 */
int truth_lib_alloc(size_t large, size_t small_total, size_t map);

/*
 * The same without the shared segment: memory a library holds in its
 * statics only (the pre-attach workload, mpi_held: a segment's owner comes
 * from its name, not from who points at it).
 */
int truth_lib_hold(size_t large, size_t small_total, size_t map);

/* Free the large block and unmap the mapping (the small blocks stay). */
void truth_lib_release_blocks(void);

/* Bytes the library holds now (its blocks and its own bookkeeping array). */
size_t truth_lib_bytes(void);

/* Give everything truth_lib_alloc took back. */
void truth_lib_free(void);

#endif
