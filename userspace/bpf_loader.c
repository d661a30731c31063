// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_loader.h"
#include "memattr.skel.h"

#define TRACEFS_DIR	"/sys/kernel/tracing"
#define TRACEFS_MAGIC_	0x74726163

static bool libbpf_verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (!libbpf_verbose && level == LIBBPF_INFO))
		return 0;
	if (!libbpf_verbose)
		return 0;	/* our own error line says what failed */
	return vfprintf(stderr, fmt, ap);
}

/*
 * The classic rss_stat tracepoint is found through tracefs, which a fresh
 * machine does not mount. Mount it where the kernel documents it; it stays
 * mounted (as systemd would mount it), which other tools expect anyway.
 */
static int ensure_tracefs(char *err, size_t errlen)
{
	struct statfs sfs;

	if (statfs(TRACEFS_DIR, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC_)
		return 0;
	if (access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return 0;
	if (mount("tracefs", TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		snprintf(err, errlen, "cannot mount tracefs on %s: %s", TRACEFS_DIR,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int tracer_open(struct bpf_tracer *t, size_t ringbuf_bytes, event_fn fn,
		void *ctx, bool verbose, char *err, size_t errlen)
{
	int ret;

	memset(t, 0, sizeof(*t));
	libbpf_verbose = verbose;
	libbpf_set_print(print_libbpf);
	if (ensure_tracefs(err, errlen))
		return -1;

	t->skel = memattr_bpf__open();
	if (!t->skel) {
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	if (ringbuf_bytes)
		bpf_map__set_max_entries(t->skel->maps.events, ringbuf_bytes);
	ret = memattr_bpf__load(t->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s (run with --verbose for the verifier log)",
			 strerror(-ret));
		goto fail;
	}
	ret = memattr_bpf__attach(t->skel);
	if (ret) {
		snprintf(err, errlen, "cannot attach the BPF programs: %s", strerror(-ret));
		goto fail;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), fn, ctx, NULL);
	if (!t->rb) {
		snprintf(err, errlen, "cannot open the BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	tracer_close(t);
	return -1;
}

void tracer_close(struct bpf_tracer *t)
{
	ring_buffer__free(t->rb);
	t->rb = NULL;
	memattr_bpf__destroy(t->skel);	/* detaches every link */
	t->skel = NULL;
}

int tracer_add_process(struct bpf_tracer *t, pid_t tgid, uint32_t job, uint32_t flags)
{
	struct traced_proc tp = { .job = job, .flags = flags };
	__u32 key = tgid;

	return bpf_map__update_elem(t->skel->maps.traced, &key, sizeof(key), &tp,
				    sizeof(tp), BPF_ANY);
}

int tracer_remove_process(struct bpf_tracer *t, pid_t tgid)
{
	__u32 key = tgid;

	return bpf_map__delete_elem(t->skel->maps.traced, &key, sizeof(key), 0);
}

int tracer_poll(struct bpf_tracer *t, int timeout_ms)
{
	return ring_buffer__poll(t->rb, timeout_ms);
}

int tracer_drain(struct bpf_tracer *t)
{
	return ring_buffer__consume(t->rb);
}

void tracer_stats(struct bpf_tracer *t, uint64_t out[STAT_NR])
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[ncpu > 0 ? ncpu : 1];

	for (__u32 i = 0; i < STAT_NR; i++) {
		out[i] = 0;
		if (ncpu <= 0 || bpf_map__lookup_elem(t->skel->maps.stats, &i, sizeof(i),
						      vals, sizeof(vals), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
}

uint64_t tracer_map_bytes(struct bpf_tracer *t)
{
	struct bpf_map *m;
	uint64_t total = 0;

	bpf_object__for_each_map(m, t->skel->obj) {
		char path[64], line[128];
		FILE *f;

		/* The kernel reports each map's charged memory in its fdinfo. */
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(m));
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "memlock: %llu", &v) == 1)
				total += v;
		}
		fclose(f);
	}
	return total;
}
