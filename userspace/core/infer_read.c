// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * proc_infer: what infer.c needs from a live process, and its answer
 * written back into the region table (infer_read.h).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "classify.h"
#include "elfsym.h"
#include "heapwalk.h"
#include "infer.h"
#include "infer_read.h"
#include "procfs.h"
#include "process.h"
#include "thread_stop.h"

#define MAX_THREADS	4096	/* threads whose stack pointer is looked at */
#define PAGE		4096ULL

struct thread_regs {
	pid_t tid;
	struct thread_gprs g;	/* g.n 0: blocked in the kernel, sp and pc only */
};

struct vma_brief {
	uint64_t start, end, offset;
	char perms[5];
	bool file, heap, main_stack, special;
};

struct collect {
	struct vma_brief *v;
	size_t n, cap;
};

static int collect_vma(const struct vma_info *v, void *arg)
{
	struct collect *c = arg;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct vma_brief *m;

		if (cap > PROC_MAX_REGIONS)
			return 0;	/* bounded: the rest is not looked at */
		m = realloc(c->v, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		c->v = m;
		c->cap = cap;
	}
	c->v[c->n] = (struct vma_brief){ .start = v->start, .end = v->end, .offset = v->offset,
					 .file = v->path[0] == '/',
					 .heap = !strcmp(v->path, "[heap]"),
					 .main_stack = !strcmp(v->path, "[stack]"),
					 .special = v->path[0] == '[' };
	memcpy(c->v[c->n].perms, v->perms, sizeof(v->perms));
	c->n++;
	return 0;
}

/*
 * Every thread's stack pointer: a thread blocked in the kernel gives it
 * without a stop; a running one is stopped for the read of its registers
 * (thread_stop.h), which are then roots too -- a running rank keeps the
 * pointers it is working with in them. Where ptrace is not allowed, a
 * running thread has no stack pointer: its whole stack is read.
 */
static size_t read_threads(pid_t pid, struct thread_regs *t, size_t max, unsigned int *stopped)
{
	char path[64];
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (n < max && (d = readdir(dir))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);

		int ret;

		if (tid <= 0)
			continue;
		t[n].g.n = 0;
		ret = procfs_read_thread_regs(pid, tid, &t[n].g.sp, &t[n].g.pc);
		if (ret == -EAGAIN && !thread_stop_read(tid, &t[n].g))
			++*stopped;
		else if (ret)
			continue;
		t[n].tid = tid;
		n++;
	}
	closedir(dir);
	return n;
}

static const struct thread_regs *thread_in(const struct thread_regs *t, size_t n, uint64_t start,
					   uint64_t end)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].g.sp >= start && t[i].g.sp < end)
			return &t[i];
	return NULL;
}

static void set_thread(struct infer_area *x, const struct thread_regs *t)
{
	if (!t)
		return;
	x->sp = t->g.sp;
	x->pc = t->g.pc;
	x->regs = t->g.r;
	x->nregs = t->g.n;
}

/*
 * Right above a small PROT_NONE mapping: a thread stack above its guard
 * (glibc's is a page, or the guard size asked for). The PROT_NONE rest of
 * an arena's 64 MiB reservation lies above its heap, and is larger.
 */
#define GUARD_MAX	(64ULL << 10)

static bool is_guarded(const struct collect *c, size_t i)
{
	const struct vma_brief *g = i ? &c->v[i - 1] : NULL;

	return g && g->end == c->v[i].start && !strcmp(g->perms, "---p") && !g->file &&
	       g->end - g->start <= GUARD_MAX && c->v[i].start % HEAP_MAX_SIZE;
}

/*
 * Where the .bss of the module whose writable data is mapped at d ends
 * (its PT_LOAD's memory size, from the file the process maps: through
 * map_files, no path to race), 0 when not known. The region table takes
 * the whole anonymous mapping right above a module's data for its .bss;
 * an allocation the kernel placed right there, merged with it, is not.
 */
static uint64_t bss_end(pid_t pid, const struct vma_brief *d)
{
	char path[96];
	uint64_t end = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)d->start, (unsigned long long)d->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (elfsym_writable_end(fd, d->start, d->offset, &end))
		end = 0;
	close(fd);
	return end;
}

/* The module's data right below v, when v is taken for its .bss. */
static const struct vma_brief *data_below(const struct collect *c, size_t i)
{
	const struct vma_brief *d = i ? &c->v[i - 1] : NULL;

	return d && d->file && d->end == c->v[i].start && !strcmp(d->perms, "rw-p") ? d : NULL;
}

/*
 * The module's RELRO (vtables, typeinfo, const tables of pointers): the
 * read-only mapping right below its writable data, of the same PT_LOAD
 * (the file offsets follow on). The owner of its data owns it.
 */
static comp_id relro_owner(struct proc *p, const struct collect *c, size_t i)
{
	const struct vma_brief *v = &c->v[i], *d = i + 1 < c->n ? &c->v[i + 1] : NULL;
	const struct region *r;

	if (!d || !v->file || strcmp(v->perms, "r--p") || !d->file || strcmp(d->perms, "rw-p") ||
	    d->start != v->end || d->offset != v->offset + (v->end - v->start))
		return COMP_UNATTRIBUTED;
	r = regions_find(&p->regions, d->start);
	return r ? r->owner : COMP_UNATTRIBUTED;
}

/*
 * What each mapping is to the inference. Unowned anonymous memory is
 * split into allocations (the brk heap, other arenas' heaps at their
 * 64 MiB alignment, the rest as mmap'd chunks or raw blocks); a thread's
 * stack is the mapping its stack pointer lies in, or one right above a
 * small PROT_NONE guard (glibc's; a running thread has no stack pointer to
 * read); owned writable memory (data, .bss) holds its owner's roots; a
 * module's RELRO holds its classes' vtables.
 */
static size_t make_areas(struct proc *p, const struct collect *c, const struct thread_regs *th,
			 size_t nth, struct infer_area *a)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct vma_brief *v = &c->v[i];
		const struct region *r = regions_find(&p->regions, v->start);
		comp_id owner = r ? r->owner : COMP_UNATTRIBUTED;
		const struct thread_regs *t;
		struct infer_area *x = &a[n];
		comp_id classes;
		uint64_t bss;

		*x = (struct infer_area){ .start = v->start, .end = v->end, .owner = owner };
		if (v->perms[2] == 'x' && v->file) {
			x->kind = AREA_CODE;
		} else if ((classes = relro_owner(p, c, i)) != COMP_UNATTRIBUTED) {
			x->kind = AREA_CLASSES;
			x->owner = classes;
		} else if (v->perms[0] != 'r' || v->perms[1] != 'w' || v->perms[3] != 'p') {
			continue;	/* guards, read-only data, shared segments */
		} else if (v->file) {
			x->kind = AREA_ROOT;
		} else if (v->main_stack) {
			t = thread_in(th, nth, v->start, v->end);
			x->kind = AREA_STACK;
			x->owner = COMP_APP;
			set_thread(x, t);
		} else if (v->heap) {
			if (owner != COMP_UNATTRIBUTED)
				continue;
			x->kind = AREA_HEAP;
		} else if (v->special) {
			continue;
		} else if (owner != COMP_UNATTRIBUTED && r && !(r->flags & REGION_FROM_EVENT) &&
			   data_below(c, i) && (bss = bss_end(p->pid, data_below(c, i))) &&
			   bss < v->end) {
			/* A .bss shorter than the mapping: the rest is allocations. */
			if (bss > v->start) {
				x->kind = AREA_ROOT;
				x->end = bss;
				a[++n] = (struct infer_area){ .start = bss, .end = v->end };
				x = &a[n];
			}
			x->kind = AREA_ALLOC;
			x->owner = COMP_UNATTRIBUTED;
			x->retake = true;
		} else if (owner != COMP_UNATTRIBUTED || (r && (r->flags & REGION_FROM_EVENT))) {
			x->kind = AREA_ROOT;	/* a library's .bss, memory an event gave an owner */
		} else if ((t = thread_in(th, nth, v->start, v->end)) || is_guarded(c, i)) {
			x->kind = AREA_STACK;
			x->owner = COMP_APP;
			x->claim = true;
			set_thread(x, t);
		} else if (!(v->start % HEAP_MAX_SIZE)) {
			x->kind = AREA_ARENA;
		} else {
			x->kind = AREA_ALLOC;
		}
		n++;
	}
	return n;
}

struct reader {
	int mem, pagemap;
	bool present[INFER_BLOCK / PAGE];
};

/* Only pages in memory are read: no page is brought in (swap) or mapped for the read. */
static int64_t read_present(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct reader *rd = ctx;
	size_t npages = len / PAGE, i = 0;
	int64_t got = 0;

	memset(buf, 0, len);
	if (npages > INFER_BLOCK / PAGE || procfs_pagemap_present(rd->pagemap, addr, npages,
								  rd->present))
		return 0;
	while (i < npages) {
		size_t j = i;
		ssize_t n;

		if (!rd->present[i]) {
			i++;
			continue;
		}
		while (j < npages && rd->present[j])
			j++;
		n = pread(rd->mem, (char *)buf + i * PAGE, (j - i) * PAGE, (off_t)(addr + i * PAGE));
		if (n > 0)
			got += n;
		i = j;
	}
	return got;
}

/* In an area whose owner was a guess (a .bss too long): the inference's owner replaces it. */
static bool retaken(const struct infer_area *a, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].retake && addr >= a[i].start && addr < a[i].end)
			return true;
	return false;
}

static void count_owner(struct proc_inferred *out, comp_id owner, uint64_t bytes)
{
	unsigned int k, small = 0;

	if (!bytes)
		return;
	if (owner == COMP_UNATTRIBUTED) {
		out->unattributed += bytes;
		return;
	}
	for (k = 0; k < out->n; k++)
		if (out->by[k].owner == owner) {
			out->by[k].bytes += bytes;
			return;
		}
	if (out->n < INFER_REPORT_COMPS) {
		out->by[out->n].owner = owner;
		out->by[out->n++].bytes = bytes;
		return;
	}
	for (k = 1; k < out->n; k++)
		if (out->by[k].bytes < out->by[small].bytes)
			small = k;
	if (out->by[small].bytes < bytes)
		out->by[small] = (typeof(out->by[0])){ owner, bytes };
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int proc_infer(struct proc *p, const struct classifier *cls, uint64_t budget,
	       struct proc_inferred *out)
{
	double cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID), wall0 = clock_s(CLOCK_MONOTONIC);
	struct infer_params prm = { .libc = cls->libc, .mpi = cls->mpi, .stack = COMP_STACK,
				    .budget = budget };
	struct reader rd = { .mem = -1, .pagemap = -1 };
	struct collect c = { 0 };
	struct thread_regs *th = NULL;
	struct infer_area *areas = NULL;
	struct infer_result res = { 0 };
	size_t nth, nareas;
	bool debug;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = procfs_read_maps(p->pid, false, collect_vma, &c);
	if (ret)
		goto out;
	ret = -ENOMEM;
	th = malloc(MAX_THREADS * sizeof(*th));
	areas = malloc((c.n ? 2 * c.n : 1) * sizeof(*areas));	/* a .bss split in two */
	if (!th || !areas)
		goto out;
	nth = read_threads(p->pid, th, MAX_THREADS, &out->threads_stopped);
	nareas = make_areas(p, &c, th, nth, areas);
	rd.mem = procfs_mem_open(p->pid);
	rd.pagemap = procfs_pagemap_open(p->pid);
	if (rd.mem < 0 || rd.pagemap < 0) {
		ret = rd.mem < 0 ? rd.mem : rd.pagemap;
		goto out;
	}
	ret = infer_owners(areas, nareas, &prm, read_present, &rd, &res);
	if (ret)
		goto out;
	debug = getenv("MEMATTR_DEBUG_INFER") != NULL;
	if (debug)
		for (size_t i = 0; i < nareas; i++)
			fprintf(stderr, "memattr-bpf: infer pid %d area %#llx-%#llx kind %d owner %s sp %#llx\n",
				p->pid, (unsigned long long)areas[i].start,
				(unsigned long long)areas[i].end, areas[i].kind,
				classify_name(cls, areas[i].owner), (unsigned long long)areas[i].sp);
	for (size_t i = 0; i < res.nruns; i++) {
		const struct infer_run *r = &res.runs[i];
		int64_t resident = procfs_pagemap_resident(rd.pagemap, r->start, r->end);

		if (debug)
			fprintf(stderr, "memattr-bpf: infer pid %d run %#llx-%#llx %s, %lld KiB resident\n",
				p->pid, (unsigned long long)r->start, (unsigned long long)r->end,
				classify_name(cls, r->owner), (long long)resident / 1024);
		if (retaken(areas, nareas, r->start))
			regions_set_owner(&p->regions, r->start, r->end, r->owner, false);
		else if (r->owner != COMP_UNATTRIBUTED)
			regions_set_owner(&p->regions, r->start, r->end, r->owner, true);
		count_owner(out, r->owner, resident > 0 ? (uint64_t)resident : 0);
	}
	/* Each new region's own pages are counted at the next read (merged smaps entries). */
	p->needs_sync = true;
	out->bytes_read = res.bytes_read;
	out->allocations = res.nodes;
	out->reached = res.reached;
	out->sampled_out = res.skipped_sampled;
	out->budget_hit = res.budget_hit || res.nodes_capped;
out:
	out->seconds = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	out->wall_seconds = clock_s(CLOCK_MONOTONIC) - wall0;
	infer_result_free(&res);
	if (rd.mem >= 0)
		close(rd.mem);
	if (rd.pagemap >= 0)
		close(rd.pagemap);
	free(areas);
	free(th);
	free(c.v);
	return ret;
}
