// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the attribution logic (process.c) learns from /proc: the mappings
 * with their resident and proportional sizes (smaps), and the kernel's
 * total (VmRSS). Kept apart so the logic runs in unit tests on synthetic
 * figures.
 */
#include <errno.h>
#include <unistd.h>

#include "page_runs.h"
#include "procfs.h"
#include "process.h"

/*
 * The process's pagemap, opened at a read's first count and kept to its
 * end: a first read of a rank counts hundreds of entries (one open each
 * was most of their cost). A span announced (page_count_ops.span) is read
 * once, and the regions in it are counted from what that read found.
 */
struct pagemap_reader {
	pid_t pid;
	int fd;		/* -errno until opened */
	uint64_t win_start, win_end;	/* runs hold the present pages of this span */
	struct page_runs runs;
	size_t cursor;
};

static int pagemap_span(void *ctx, uint64_t start, uint64_t end)
{
	struct pagemap_reader *r = ctx;
	int ret;

	if (r->fd == -EBADF)
		r->fd = procfs_pagemap_open(r->pid);
	if (r->fd < 0)
		return r->fd;
	r->win_start = r->win_end = 0;
	ret = page_runs_read(r->fd, start, end, &r->runs);
	if (ret)
		return ret;
	r->win_start = start;
	r->win_end = end;
	r->cursor = 0;
	return 0;
}

static int64_t pagemap_resident(void *ctx, uint64_t start, uint64_t end)
{
	struct pagemap_reader *r = ctx;
	int ret;

	if (start < r->win_start || end > r->win_end || r->win_start == r->win_end) {
		ret = pagemap_span(r, start, end);
		if (ret)
			return ret;
	}
	return page_runs_bytes(&r->runs, start, end, &r->cursor);
}

static bool pagemap_absent(void *ctx, uint64_t start, uint64_t end, uint64_t *first,
			   uint64_t *last_end)
{
	struct pagemap_reader *r = ctx;

	/* resident() just read [start, end): its runs are there. */
	return page_runs_absent(&r->runs, start, end, &r->cursor, first, last_end);
}

static void pagemap_close(struct pagemap_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	page_runs_free(&r->runs);
}

int proc_sync(struct proc *p, const struct classifier *cls, double now)
{
	struct pagemap_reader pagemap = { .pid = p->pid, .fd = -EBADF };
	struct proc_sync_state s;
	int ret;

	if (!p->exe[0])
		procfs_read_exe(p->pid, p->exe, sizeof(p->exe));
	proc_sync_begin(&s, p, cls, boot_clock_ns());
	s.resident = pagemap_resident;
	s.span = pagemap_span;
	s.resident_ctx = &pagemap;
	ret = procfs_read_maps(p->pid, true, proc_sync_vma, &s);
	proc_sync_end(&s, ret == 0, now);
	pagemap_close(&pagemap);
	return ret;
}

int proc_sample(struct proc *p, const struct classifier *cls, double now)
{
	uint64_t total_rss;
	int ret;

	ret = procfs_read_rss(p->pid, &total_rss);
	if (ret)
		return ret;
	return proc_account(p, cls, (int64_t)total_rss, now);
}

/*
 * A VmRSS read's time divides the faults: those before it are in the total,
 * those after it are set apart (proc_account). So the time is the read's
 * own, bracketed; on a busy node the tool can be preempted inside the
 * bracket (for far longer than the bracket), and the faults made
 * meanwhile would fall on the wrong side of it. A wide bracket is read
 * again, a few times at most.
 */
#define MARK_BRACKET_NS	200000
#define MARK_TRIES	4

int proc_mark_sample(struct proc *p)
{
	uint64_t total_rss, t0, t1;
	int ret;

	for (int i = 0; i < MARK_TRIES; i++) {
		t0 = boot_clock_ns();
		ret = procfs_read_rss(p->pid, &total_rss);
		t1 = boot_clock_ns();
		if (ret || t1 - t0 <= MARK_BRACKET_NS)
			break;
	}
	if (ret) {
		p->sample_mark_ns = 0;
		return ret;
	}
	p->sample_mark_ns = t0 + (t1 - t0) / 2;
	p->sample_total = (int64_t)total_rss;
	return 0;
}

int proc_count_touched(struct proc *p)
{
	static const struct page_count_ops ops = { pagemap_resident, pagemap_span, pagemap_absent };
	struct pagemap_reader pagemap = { .pid = p->pid, .fd = -EBADF };
	int ret;

	if (p->touched_full)
		return -E2BIG;
	ret = proc_count_touched_by(p, &ops, &pagemap, boot_clock_ns());
	pagemap_close(&pagemap);
	return ret;
}

int proc_count_all(struct proc *p)
{
	static const struct page_count_ops ops = { pagemap_resident, pagemap_span, pagemap_absent };
	struct pagemap_reader pagemap = { .pid = p->pid, .fd = -EBADF };
	int ret = proc_count_all_by(p, &ops, &pagemap, boot_clock_ns());

	pagemap_close(&pagemap);
	return ret;
}
