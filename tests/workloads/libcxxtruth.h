/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libcxxtruth.so: a C++ library of mpi_cxx's own that allocates for itself
 * with new and a std::vector, so its memory must be `lib:libcxxtruth.so`
 * even though every byte reaches malloc through libstdc++'s operator new.
 */
#ifndef LIBCXXTRUTH_H
#define LIBCXXTRUTH_H

#include <stddef.h>

/* new char[bytes] and a std::vector<int> of bytes, every page touched. */
void cxxlib_alloc(size_t bytes, unsigned seed);
/* Bytes held (whole pages), as the kernel counts them. */
size_t cxxlib_bytes(void);
/* Check the pattern and free everything; returns the number of bad pages. */
size_t cxxlib_free(void);

#endif
