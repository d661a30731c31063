// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "page_runs.h"

#define PAGE_		4096ULL

/*
 * PAGEMAP_SCAN (Linux 6.7), spelled out: Debian 12's UAPI headers predate
 * it. The layouts are the kernel's struct pm_scan_arg and struct
 * page_region (include/uapi/linux/fs.h).
 */
struct pm_scan_arg_ {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

struct page_region_ {
	uint64_t start, end, categories;
};

#define PAGEMAP_SCAN_		_IOWR('f', 16, struct pm_scan_arg_)
#define PAGE_IS_PRESENT_	(1ULL << 3)

#define SCAN_VEC	256	/* runs per ioctl */
#define PREAD_PAGES	4096	/* pagemap entries per read (32 KiB) */

enum { SCAN_UNKNOWN, SCAN_YES, SCAN_NO };
static int scan_support = SCAN_UNKNOWN;

bool page_runs_scan_used(void)
{
	return scan_support == SCAN_YES;
}

void page_runs_force_pread(bool on)
{
	scan_support = on ? SCAN_NO : SCAN_UNKNOWN;
}

/* Add [start, end) after the last run (merged when they touch). */
static int add_run(struct page_runs *r, uint64_t start, uint64_t end)
{
	if (r->n && r->v[r->n - 1].end == start) {
		r->v[r->n - 1].end = end;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct page_run *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct page_run){ start, end };
	return 0;
}

/* 1: done, 0: the kernel has no such ioctl (nothing added), -errno. */
static int scan(int fd, uint64_t start, uint64_t end, struct page_runs *r)
{
	struct page_region_ vec[SCAN_VEC];
	uint64_t at = start;

	while (at < end) {
		struct pm_scan_arg_ a = {
			.size = sizeof(a),
			.start = at,
			.end = end,
			.vec = (uintptr_t)vec,
			.vec_len = SCAN_VEC,
			.category_mask = PAGE_IS_PRESENT_,
			.return_mask = PAGE_IS_PRESENT_,
		};
		int n = ioctl(fd, PAGEMAP_SCAN_, &a), ret;

		r->calls++;
		if (n < 0) {
			/* ENOSYS: an emulator or a seccomp filter that does not pass the ioctl on. */
			if (scan_support == SCAN_UNKNOWN &&
			    (errno == ENOTTY || errno == EINVAL || errno == ENOSYS))
				return 0;
			return -errno;
		}
		scan_support = SCAN_YES;
		r->read_bytes += (uint64_t)n * sizeof(vec[0]);
		for (int i = 0; i < n; i++)
			if ((ret = add_run(r, vec[i].start, vec[i].end)))
				return ret;
		if (a.walk_end <= at)
			return -EIO;	/* no progress: never loop */
		at = a.walk_end;
	}
	return 1;
}

/* The same from pagemap's entries (bit 63: present). */
static int read_entries(int fd, uint64_t start, uint64_t end, struct page_runs *r)
{
	uint64_t buf[PREAD_PAGES], page = start / PAGE_, last = end / PAGE_;

	while (page < last) {
		size_t want = last - page < PREAD_PAGES ? (size_t)(last - page) : PREAD_PAGES;
		ssize_t n = pread(fd, buf, want * 8, (off_t)(page * 8));
		int ret;

		r->calls++;
		if (n <= 0 || n % 8)
			return n < 0 ? -errno : -EIO;
		r->read_bytes += (uint64_t)n;
		for (ssize_t i = 0; i < n / 8; i++)
			if ((buf[i] >> 63) && (ret = add_run(r, (page + i) * PAGE_, (page + i + 1) * PAGE_)))
				return ret;
		page += (uint64_t)n / 8;
	}
	return 0;
}

int page_runs_read(int fd, uint64_t start, uint64_t end, struct page_runs *runs)
{
	int ret;

	runs->n = 0;
	if (start >= end)
		return 0;
	if (scan_support != SCAN_NO) {
		ret = scan(fd, start, end, runs);
		if (ret)
			return ret < 0 ? ret : 0;
		scan_support = SCAN_NO;
	}
	return read_entries(fd, start, end, runs);
}

int64_t page_runs_bytes(const struct page_runs *runs, uint64_t start, uint64_t end, size_t *cursor)
{
	size_t i = *cursor;
	int64_t n = 0;

	/* Back to the run holding start (queries ascend, but may overlap the last one). */
	while (i > 0 && (i >= runs->n || runs->v[i].start > start))
		i--;
	while (i < runs->n && runs->v[i].end <= start)
		i++;
	*cursor = i;
	for (; i < runs->n && runs->v[i].start < end; i++) {
		uint64_t a = runs->v[i].start > start ? runs->v[i].start : start;
		uint64_t b = runs->v[i].end < end ? runs->v[i].end : end;

		n += (int64_t)(b - a);
	}
	return n;
}

bool page_runs_absent(const struct page_runs *runs, uint64_t start, uint64_t end, size_t *cursor,
		      uint64_t *first, uint64_t *last_end)
{
	uint64_t at = start;
	bool any = false;
	size_t i;

	page_runs_bytes(runs, start, start, cursor);	/* to the run holding start */
	for (i = *cursor; i < runs->n && runs->v[i].start < end && at < end; i++) {
		if (runs->v[i].end <= at)
			continue;
		if (runs->v[i].start > at) {
			if (!any)
				*first = at;
			any = true;
			*last_end = runs->v[i].start;
		}
		at = runs->v[i].end;
	}
	if (at < end) {
		if (!any)
			*first = at;
		any = true;
		*last_end = end;
	}
	return any;
}

void page_runs_free(struct page_runs *runs)
{
	free(runs->v);
	*runs = (struct page_runs){ 0 };
}
