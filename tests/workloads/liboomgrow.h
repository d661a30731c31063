/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef LIBOOMGROW_H
#define LIBOOMGROW_H

#include <stddef.h>

/* Map len bytes from the library's own code and make every page resident; 0 or -1. */
int oomgrow_lib_take(size_t len);

#endif
