// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The library half of oom_grow: its memory is the library's (mmap called from here). */
#include <string.h>
#include <sys/mman.h>

#include "liboomgrow.h"

int oomgrow_lib_take(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	memset(p, 0x5a, len);
	return 0;
}
