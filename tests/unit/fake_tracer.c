// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The fake BPF side of the engine's unit tests (fake_tracer.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tracer.h"

struct fake_tracer fake_tracer;

void fake_tracer_reset(void)
{
	for (unsigned int i = 0; i < fake_tracer.nring; i++)
		free(fake_tracer.ring[i]);
	memset(&fake_tracer, 0, sizeof(fake_tracer));
}

void fake_tracer_queue(const void *rec, size_t size)
{
	unsigned char *c = malloc(size);

	if (!c || fake_tracer.nring >= FAKE_TRACER_RING) {
		free(c);
		return;
	}
	memcpy(c, rec, size);
	fake_tracer.ring[fake_tracer.nring] = c;
	fake_tracer.ring_size[fake_tracer.nring++] = size;
}

static int slot_of(pid_t pid)
{
	for (unsigned int i = 0; i < fake_tracer.ntraced; i++)
		if (fake_tracer.traced[i].pid == pid)
			return (int)i;
	return -1;
}

int64_t fake_tracer_flags(pid_t pid)
{
	int i = slot_of(pid);

	return i < 0 ? -1 : (int64_t)fake_tracer.traced[i].flags;
}

int tracer_open(struct bpf_tracer *t, size_t ringbuf_bytes, const struct tracer_modes *modes,
		event_fn fn, void *ctx, bool verbose, char *err, size_t errlen)
{
	(void)ringbuf_bytes, (void)modes, (void)verbose;
	(void)err, (void)errlen;
	memset(t, 0, sizeof(*t));
	fake_tracer.fn = fn;
	fake_tracer.ctx = ctx;
	fake_tracer.open = true;
	return 0;
}

int tracer_attach_global(struct bpf_tracer *t, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	t->global_on = true;
	return 0;
}

void tracer_detach_global(struct bpf_tracer *t)
{
	t->global_on = false;
}

void tracer_close(struct bpf_tracer *t)
{
	(void)t;
	fake_tracer.open = false;
}

int tracer_add_process(struct bpf_tracer *t, pid_t tgid, uint32_t job, uint32_t flags)
{
	int i = slot_of(tgid);

	(void)t;
	if (i < 0) {
		if (fake_tracer.ntraced >= FAKE_TRACER_PIDS)
			return -E2BIG;
		i = (int)fake_tracer.ntraced++;
	}
	fake_tracer.traced[i].pid = tgid;
	fake_tracer.traced[i].job = job;
	fake_tracer.traced[i].flags = flags;
	return 0;
}

int tracer_remove_process(struct bpf_tracer *t, pid_t tgid)
{
	int i = slot_of(tgid);

	(void)t;
	fake_tracer.removes++;
	if (i < 0)
		return -ENOENT;
	fake_tracer.traced[i] = fake_tracer.traced[--fake_tracer.ntraced];
	return 0;
}

int tracer_take_oom_mark(struct bpf_tracer *t, pid_t tgid, uint64_t *boot_ns)
{
	(void)t;
	if (!fake_tracer.open)
		return 0;	/* as the real one: closed, no map left */
	for (unsigned int i = 0; i < fake_tracer.noom_marks; i++)
		if (fake_tracer.oom_marks[i].pid == tgid) {
			*boot_ns = fake_tracer.oom_marks[i].boot_ns;
			fake_tracer.oom_marks[i] = fake_tracer.oom_marks[--fake_tracer.noom_marks];
			return 1;
		}
	return 0;
}

bool tracer_has_process(struct bpf_tracer *t, pid_t tgid)
{
	(void)t;
	return slot_of(tgid) >= 0;
}

void tracer_follow_changes(struct bpf_tracer *t, pid_t tgid)
{
	(void)t, (void)tgid;
}

int tracer_watch_exec(struct bpf_tracer *t, bool on)
{
	(void)t, (void)on;
	return 0;
}

int tracer_map_fill(struct bpf_tracer *t, const char *name, uint64_t *entries, uint64_t *max)
{
	(void)t, (void)name;
	*entries = fake_tracer.ntraced;
	*max = FAKE_TRACER_PIDS;
	return 0;
}

/* The tests feed the engine's entry themselves: the ring is always empty. */
int tracer_poll(struct bpf_tracer *t, int timeout_ms, int budget_ms)
{
	(void)t, (void)timeout_ms, (void)budget_ms;
	return 0;
}

int tracer_watch_fd(struct bpf_tracer *t, int fd)
{
	(void)t, (void)fd;
	return 0;
}

bool tracer_watch_fired(struct bpf_tracer *t)
{
	(void)t;
	return false;
}

int tracer_drain(struct bpf_tracer *t, int budget_ms)
{
	unsigned int n = 0;

	(void)t, (void)budget_ms;
	while (fake_tracer.ring_read < fake_tracer.nring &&
	       (!fake_tracer.per_drain || n < fake_tracer.per_drain)) {
		unsigned int i = fake_tracer.ring_read++;

		fake_tracer.fn(fake_tracer.ctx, fake_tracer.ring[i], fake_tracer.ring_size[i]);
		n++;
	}
	fake_tracer.ring_cut = fake_tracer.ring_read < fake_tracer.nring;
	return (int)n;
}

bool tracer_backlog(const struct bpf_tracer *t)
{
	(void)t;
	return fake_tracer.ring_cut;
}

uint64_t tracer_job_drops(struct bpf_tracer *t, uint32_t job)
{
	(void)t;
	return job < FAKE_TRACER_JOBS ? fake_tracer.job_drops[job] : 0;
}

int tracer_flush_runs(struct bpf_tracer *t)
{
	(void)t;
	return 0;
}

uint16_t tracer_step_epoch(struct bpf_tracer *t, pid_t tgid)
{
	(void)t;
	fake_tracer.steps++;
	if (fake_tracer.on_step)
		fake_tracer.on_step(fake_tracer.step_ctx, tgid, fake_tracer.steps);
	return 0;
}

void tracer_stats(struct bpf_tracer *t, uint64_t out[STAT_NR])
{
	(void)t;
	memcpy(out, fake_tracer.stats, sizeof(fake_tracer.stats));
}

int tracer_attach_uprobes(struct bpf_tracer *t, enum uprobe_prog which, pid_t pid,
			  const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  size_t cnt)
{
	(void)t, (void)which, (void)pid, (void)path, (void)offsets, (void)cookies, (void)cnt;
	return -EOPNOTSUPP;
}

uint64_t tracer_mpi_calls(struct bpf_tracer *t, pid_t tgid, uint32_t fn)
{
	(void)t, (void)tgid, (void)fn;
	return 0;
}

void tracer_heap_sites(struct bpf_tracer *t, pid_t tgid, site_fn fn, void *ctx)
{
	(void)t;
	fake_tracer.site_walks++;
	for (unsigned int i = 0; i < fake_tracer.nsites; i++)
		if (!tgid || fake_tracer.sites[i].tgid == tgid)
			fn(ctx, fake_tracer.sites[i].tgid, fake_tracer.sites[i].site,
			   &fake_tracer.sites[i].st);
}

void tracer_forget_process(struct bpf_tracer *t, pid_t tgid)
{
	(void)t, (void)tgid;
}

uint64_t tracer_map_bytes(struct bpf_tracer *t)
{
	(void)t;
	return 0;
}
