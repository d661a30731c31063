// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness: the per-process status files the tool parses,
 * /proc/PID/stat (a comm holding spaces and parentheses) and statm.
 * Text is NUL-terminated, as read_small() leaves it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_stat st;
	uint64_t rss;
	char *text = malloc(size + 1);

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	procfs_parse_stat(text, &st);
	procfs_parse_statm(text, 4096, &rss);
	free(text);
	return 0;
}
