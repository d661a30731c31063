// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the attribution logic (process.c) learns from /proc: the mappings
 * with their resident and proportional sizes (smaps), and the kernel's
 * total (VmRSS). Kept apart so the logic runs in unit tests on synthetic
 * figures.
 */
#include "procfs.h"
#include "process.h"

static int64_t pagemap_resident(void *proc, uint64_t start, uint64_t end)
{
	return procfs_pagemap_resident(((struct proc *)proc)->pid, start, end);
}

int proc_sync(struct proc *p, const struct classifier *cls, double now)
{
	struct proc_sync_state s;
	int ret;

	if (!p->exe[0])
		procfs_read_exe(p->pid, p->exe, sizeof(p->exe));
	proc_sync_begin(&s, p, cls, boot_clock_ns());
	s.resident = pagemap_resident;
	ret = procfs_read_maps(p->pid, true, proc_sync_vma, &s);
	proc_sync_end(&s, ret == 0, now);
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

int proc_mark_sample(struct proc *p)
{
	uint64_t total_rss;
	int ret;

	p->sample_mark_ns = boot_clock_ns();
	ret = procfs_read_rss(p->pid, &total_rss);
	if (ret) {
		p->sample_mark_ns = 0;
		return ret;
	}
	p->sample_total = (int64_t)total_rss;
	return 0;
}
