/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which pages of a range of a process are in memory, as runs of present
 * pages, read once for a whole span of mappings (/proc/PID/pagemap, open
 * as fd from procfs_pagemap_open). Where the kernel has it (Linux 6.7),
 * the PAGEMAP_SCAN ioctl gives the runs themselves: its cost follows the
 * page tables that exist, not the length of the range, so a sparse
 * reservation costs next to nothing. Elsewhere (Linux 6.1) pagemap is read
 * in large blocks, 8 bytes a page. Which one is decided at the first scan,
 * once for the process's life.
 */
#ifndef MEMATTR_PAGE_RUNS_H
#define MEMATTR_PAGE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct page_run {
	uint64_t start, end;	/* [start, end): present pages */
};

struct page_runs {
	struct page_run *v;
	size_t n, cap;
	uint64_t read_bytes;	/* what the reads returned (pagemap entries or runs), for the cost */
	unsigned int calls;	/* system calls made */
};

/*
 * Replace runs with the present pages of [start, end) (page aligned).
 * 0, or -errno (the process gone, pagemap unreadable, -ENOMEM).
 */
int page_runs_read(int fd, uint64_t start, uint64_t end, struct page_runs *runs);

/* Bytes of [start, end) inside runs; *cursor: where to begin (ascending queries), 0 at first. */
int64_t page_runs_bytes(const struct page_runs *runs, uint64_t start, uint64_t end, size_t *cursor);

/*
 * Where [start, end) is not in runs: the first page out (*first) and the
 * end of the last one (*last_end); false when every page is in. *cursor as
 * for page_runs_bytes.
 */
bool page_runs_absent(const struct page_runs *runs, uint64_t start, uint64_t end, size_t *cursor,
		      uint64_t *first, uint64_t *last_end);

void page_runs_free(struct page_runs *runs);

/* Whether the scan ioctl is in use (false before the first read, or on an old kernel). */
bool page_runs_scan_used(void);

/* Tests: force the pagemap read (true) as on a kernel without the ioctl. */
void page_runs_force_pread(bool on);

#endif
