// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness: /proc/PID/maps and smaps text. Each input is parsed
 * both ways, as the tool reads both (maps at every rescan, smaps for PSS).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "procfs.h"

static int on_vma(const struct vma_info *v, void *arg)
{
	size_t *n = arg;

	/* Touch what a caller reads: a stray terminator shows under ASan. */
	*n += strlen(v->path) + strlen(v->perms) + (v->end > v->start);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;
	FILE *f;

	if (!size)
		return 0;
	for (int smaps = 0; smaps < 2; smaps++) {
		f = fmemopen((void *)data, size, "r");
		if (!f)
			return 0;
		procfs_parse_maps(f, smaps, on_vma, &n);
		fclose(f);
	}
	return 0;
}
