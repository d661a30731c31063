// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the attribution logic (process.c) learns from /proc: the mappings
 * with their resident and proportional sizes (smaps), and the kernel's
 * total (VmRSS). Kept apart so the logic runs in unit tests on synthetic
 * figures.
 */
#include <errno.h>
#include <unistd.h>

#include "procfs.h"
#include "process.h"

/*
 * The process's pagemap, opened at a read's first count and kept to its
 * end: a first read of a rank counts hundreds of entries (one open each
 * was most of their cost).
 */
struct pagemap_reader {
	pid_t pid;
	int fd;		/* -errno until opened */
};

static int64_t pagemap_resident(void *ctx, uint64_t start, uint64_t end)
{
	struct pagemap_reader *r = ctx;

	if (r->fd == -EBADF)
		r->fd = procfs_pagemap_open(r->pid);
	return r->fd < 0 ? r->fd : procfs_pagemap_resident(r->fd, start, end);
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
	s.resident_ctx = &pagemap;
	ret = procfs_read_maps(p->pid, true, proc_sync_vma, &s);
	proc_sync_end(&s, ret == 0, now);
	if (pagemap.fd >= 0)
		close(pagemap.fd);
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
	struct pagemap_reader pagemap = { .pid = p->pid, .fd = -EBADF };
	int ret;

	if (p->touched_full)
		return -E2BIG;
	ret = proc_count_touched_by(p, pagemap_resident, &pagemap, boot_clock_ns());
	if (pagemap.fd >= 0)
		close(pagemap.fd);
	return ret;
}
