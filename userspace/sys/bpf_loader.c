// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_loader.h"
#include "close_many.h"
#include "syscall_hooks.h"
#include "memattr.skel.h"


static bool libbpf_verbose;

#define TRACEFS_DIR	"/sys/kernel/tracing"
#define TRACEFS_MAGIC_	0x74726163

/*
 * The memory syscalls' tracepoints (syscalls:sys_enter_mmap, ...) are found
 * through tracefs, which a fresh machine without systemd does not mount.
 * Mount it where the kernel documents it; it stays mounted (as systemd
 * would mount it), which other tools expect anyway.
 */
static int ensure_tracefs(char *err, size_t errlen)
{
	struct statfs sfs;

	if (statfs(TRACEFS_DIR, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC_)
		return 0;
	if (access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return 0;
	if (mount("tracefs", TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		snprintf(err, errlen, "cannot mount tracefs on %s (the syscall tracepoints are found there): %s",
			 TRACEFS_DIR, strerror(errno));
		return -1;
	}
	return 0;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (!libbpf_verbose && level == LIBBPF_INFO))
		return 0;
	if (!libbpf_verbose)
		return 0;	/* our own error line says what failed */
	return vfprintf(stderr, fmt, ap);
}

/*
 * BPF_LINK_CREATE for a uprobe_multi link, spelled out: the kernel has it
 * (6.6+) but Debian 12's libbpf 1.1 and UAPI headers predate it. The layout
 * is the kernel's link_create member of union bpf_attr (checked against
 * this kernel's BTF when the Makefile builds vmlinux.h).
 */
#define ATTACH_UPROBE_MULTI		48	/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN		1	/* BPF_F_UPROBE_MULTI_RETURN */

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad[13];		/* zero, up to the size we pass */
};

static struct bpf_program *uprobe_prog(struct bpf_tracer *t, enum uprobe_prog which)
{
	switch (which) {
	case UPROBE_MPI_ENTER:
		return t->skel->progs.ma_mpi_enter;
	case UPROBE_MPI_EXIT:
		return t->skel->progs.ma_mpi_exit;
	case UPROBE_HEAP_ENTER:
		return t->skel->progs.ma_heap_enter;
	default:
		return t->skel->progs.ma_heap_exit;
	}
}

/*
 * Where a user page fault's struct vm_fault lies in its task's stack (see
 * fault_frame_pos in memattr.bpf.c): this process faults at known
 * addresses with ma_find_fault_frame attached, three times. One place,
 * the same each time, and ma_rss_stat reads the fault's address there:
 * ma_fault_user, a program on every page fault of every process on the
 * node, is then not attached. Otherwise it is, as before.
 *
 * It runs with ma_rss_stat already attached: a tracepoint whose last
 * program has just gone waits for a grace period before it takes a first
 * one again, so detaching this search's program before attaching
 * ma_rss_stat made some starts wait for that grace period.
 */
#define FRAME_TRIALS	3

static void find_fault_frame(struct bpf_tracer *t)
{
	struct memattr_bpf__bss *bss = t->skel->bss;
	long page = sysconf(_SC_PAGESIZE);
	struct bpf_link *link;
	__u32 pos = 0;
	int found = 0;

	link = bpf_program__attach(t->skel->progs.ma_find_fault_frame);
	if (!link)
		return;
	bss->frame_probe_tgid = getpid();
	for (int i = 0; i < FRAME_TRIALS; i++) {
		/* An odd offset in a fresh page: its fault's real_address is unlike other words. */
		char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		bss->frame_probe_hits = 0;
		__atomic_store_n(&bss->frame_probe_addr, (unsigned long)p + 0x123 + 8 * i, __ATOMIC_SEQ_CST);
		*(volatile char *)(p + 0x123 + 8 * i) = 1;
		__atomic_store_n(&bss->frame_probe_addr, 0, __ATOMIC_SEQ_CST);
		munmap(p, page);
		if (bss->frame_probe_hits != 1 || (i && bss->frame_probe_pos != pos))
			break;
		pos = bss->frame_probe_pos;
		found++;
	}
	bpf_link__destroy(link);
	if (found == FRAME_TRIALS && pos)
		bss->fault_frame_pos = pos;
	if (libbpf_verbose)
		fprintf(stderr, "memattr-bpf: user page faults' frame %s (at %u)\n",
			bss->fault_frame_pos ? "found: no program at their entry" :
			"not found: ma_fault_user gives their address", pos);
}

/*
 * What the running kernel offers that the programs' variants depend on,
 * read from its BTF before load (the programs of the other variant are not
 * loaded: the verifier would refuse them).
 */
struct kernel_feats {
	bool exit_group_dead;	/* sched_process_exit passes group_dead (6.18; not 6.12) */
	bool rdonly_cast;	/* the bpf_rdonly_cast kfunc (6.2) */
	bool percpu_rss;	/* RSS counters are percpu_counters (6.2), not struct mm_rss_stat */
	bool uprobe_multi;	/* uprobe_multi links (6.6) */
	bool fault_tps;		/* exceptions:page_fault_user/kernel (x86 only) */
};

/* Whether enum name of btf has the value val_name. */
static bool enum_has(const struct btf *btf, const char *name, const char *val_name)
{
	__s32 id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), val_name))
			return true;
	return false;
}

static const char *kernel_release(void)
{
	static struct utsname u;

	return uname(&u) ? "unknown" : u.release;
}

/* The number of arguments of raw tracepoint name, -1 when it is unknown. */
static int tp_nargs(const struct btf *btf, const char *name)
{
	char tname[96];
	const struct btf_type *t;
	__s32 id;

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, tname, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);			/* typedef -> pointer -> prototype */
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1;				/* the first is the context */
}

static void probe_kernel(struct kernel_feats *f)
{
	struct btf *btf = btf__load_vmlinux_btf();

	memset(f, 0, sizeof(*f));
	if (!btf)
		return;		/* the load then says what is missing */
	f->exit_group_dead = tp_nargs(btf, "sched_process_exit") >= 2;
	f->rdonly_cast = btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) >= 0;
	f->percpu_rss = btf__find_by_name_kind(btf, "mm_rss_stat", BTF_KIND_STRUCT) < 0;
	f->uprobe_multi = enum_has(btf, "bpf_attach_type", "BPF_TRACE_UPROBE_MULTI");
	f->fault_tps = tp_nargs(btf, "page_fault_user") >= 0 && tp_nargs(btf, "page_fault_kernel") >= 0;
	btf__free(btf);
}

/* Memory call i's fentry (enter) or fexit program: ma_fe_mmap, ma_fx_mmap, ... */
static struct bpf_program *fentry_prog(struct bpf_tracer *t, int i, bool enter)
{
	char name[32];

	snprintf(name, sizeof(name), "ma_f%s_%s", enter ? "e" : "x", memory_syscalls[i]);
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

/*
 * Which programs load: the tracepoints' always; each call's fentry and
 * fexit programs too where fentry is used (each is bound to its function).
 * The tracepoints' two stay loaded, unattached, beside the fentry ones: a
 * link the kernel refuses after a good load (another tool's programs fill
 * the function's trampoline, say) falls back to them at once, even in the
 * node service, whose on-demand attach comes long after the load and must
 * keep its maps. Their cost, measured on this host: ~7 ms more load and
 * 12 KiB of kernel memory (docs/operations.md); reopening the object
 * instead would lose the service's maps.
 */
static void choose_syscall_hooks(struct bpf_tracer *t)
{
	t->syscall_fentry = syscall_hooks_fentry();
	for (int i = 0; i < 2 * TRACER_SYSCALLS; i++) {
		struct bpf_program *p = fentry_prog(t, i % TRACER_SYSCALLS, i < TRACER_SYSCALLS);

		bpf_program__set_autoload(p, t->syscall_fentry);
		/* tracer_attach_global attaches them, not the skeleton. */
		bpf_program__set_autoattach(p, false);
	}
	/*
	 * Test only (tools/vmtest): the verifier refuses an fexit program, as
	 * a stricter one might: bound to a function of no argument, its read
	 * of the return value lies past the function's arguments.
	 */
	if (t->syscall_fentry && getenv("MEMATTR_TEST_FENTRY_UNLOADABLE"))
		bpf_program__set_attach_target(fentry_prog(t, 0, false), 0, "schedule");
}

static void destroy_link(void *ctx, size_t i)
{
	struct bpf_link ***links = ctx;

	bpf_link__destroy(*links[i]);
	*links[i] = NULL;
}

/* Destroy the memory calls' links made so far (at once: destroy_link). */
static void detach_syscalls(struct bpf_tracer *t)
{
	struct bpf_link **links[2 * TRACER_SYSCALLS];
	size_t n = 0;

	for (int i = 0; i < 2 * TRACER_SYSCALLS; i++)
		if (t->syscall_links[i])
			links[n++] = &t->syscall_links[i];
	parallel_for(n, destroy_link, links);
}

/* Each call's own fentry and fexit programs; on failure none stays attached. */
static int attach_fentry(struct bpf_tracer *t, char *err, size_t errlen)
{
	for (int i = 0; i < 2 * TRACER_SYSCALLS; i++) {
		bool enter = i < TRACER_SYSCALLS;

		t->syscall_links[i] = bpf_program__attach_trace(fentry_prog(t, i % TRACER_SYSCALLS, enter));
		if (!t->syscall_links[i]) {
			snprintf(err, errlen, "cannot attach %s to %s%s: %s", enter ? "fentry" : "fexit",
				 SYSCALL_FN_PREFIX, memory_syscalls[i % TRACER_SYSCALLS], strerror(errno));
			detach_syscalls(t);
			return -1;
		}
	}
	return 0;
}

/*
 * ma_sys_enter and ma_sys_exit, each on every memory syscall's tracepoint;
 * or each call's own fentry and fexit programs. fentry links the kernel
 * refuses (after their programs loaded) fall back to the tracepoints, for
 * good (syscall_hooks_fall_back), said once on stderr.
 */
static int attach_syscalls(struct bpf_tracer *t, char *err, size_t errlen)
{
	char tp[32];

	if (t->syscall_fentry) {
		char why[200];
		int ret;

		syscall_hooks_test_block(true);
		ret = attach_fentry(t, why, sizeof(why));
		syscall_hooks_test_block(false);
		if (!ret)
			return 0;
		t->syscall_fentry = false;
		syscall_hooks_fall_back(why);
		fprintf(stderr, "memattr-bpf: %s: memory calls through the syscall tracepoints from now on\n", why);
	}
	for (int i = 0; i < 2 * TRACER_SYSCALLS; i++) {
		bool enter = i < TRACER_SYSCALLS;
		const char *call = memory_syscalls[i % TRACER_SYSCALLS];
		struct bpf_program *prog = enter ? t->skel->progs.ma_sys_enter : t->skel->progs.ma_sys_exit;

		snprintf(tp, sizeof(tp), "sys_%s_%s", enter ? "enter" : "exit", call);
		t->syscall_links[i] = bpf_program__attach_tracepoint(prog, "syscalls", tp);
		if (!t->syscall_links[i]) {
			snprintf(err, errlen, "cannot attach to the tracepoint syscalls:%s: %s", tp,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* prog's link into *link, unless it is there already. */
static int attach_link(struct bpf_program *prog, struct bpf_link **link, char *err, size_t errlen)
{
	if (*link)
		return 0;
	*link = bpf_program__attach(prog);
	if (*link)
		return 0;
	snprintf(err, errlen, "cannot attach %s: %s", bpf_program__name(prog), strerror(errno));
	return -1;
}

int tracer_attach_global(struct bpf_tracer *t, char *err, size_t errlen)
{
	struct memattr_bpf *sk = t->skel;

	if (t->global_on)
		return 0;
	/* The syscalls' last: a request is then never seen without the faults that follow it. */
	if ((t->global_rss && attach_link(sk->progs.ma_rss_stat, &sk->links.ma_rss_stat, err, errlen)) ||
	    (t->global_fault_user &&
	     attach_link(sk->progs.ma_fault_user, &sk->links.ma_fault_user, err, errlen)) ||
	    (t->global_fault_kernel &&
	     attach_link(sk->progs.ma_fault_kernel, &sk->links.ma_fault_kernel, err, errlen)) ||
	    attach_syscalls(t, err, errlen)) {
		tracer_detach_global(t);
		return -1;
	}
	t->global_on = true;
	return 0;
}

/*
 * Test only, to split a cost by program (issue 34; tools/bench/README.md):
 * the programs the skeleton attaches (ma_fork, ma_exec, ma_exit,
 * ma_exit_task, ma_oom_victim) named in MEMATTR_TEST_UNATTACHED
 * (comma-separated) are loaded but not attached. The tool is then
 * incomplete: tracer_open says so on stderr.
 */
static bool test_unattached(const struct bpf_program *p)
{
	const char *v = getenv("MEMATTR_TEST_UNATTACHED"), *name = bpf_program__name(p);
	size_t n = strlen(name);

	for (const char *s = v; s && *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
		if (strcspn(s, ",") == n && !strncmp(s, name, n))
			return true;
	}
	return false;
}

/*
 * OOM kills of traced processes. Optional: a kernel built without the
 * tracepoint (or a tracefs without it) traces everything else, and says
 * once that kills will not be recorded.
 */
static void attach_oom(struct bpf_tracer *t)
{
	if (test_unattached(t->skel->progs.ma_oom_victim))
		return;
	t->skel->links.ma_oom_victim =
		bpf_program__attach_tracepoint(t->skel->progs.ma_oom_victim, "oom", "mark_victim");
	t->oom_watched = t->skel->links.ma_oom_victim != NULL;
	if (!t->oom_watched)
		fprintf(stderr, "memattr-bpf: no tracepoint oom:mark_victim (%s): OOM kills will not be recorded\n",
			strerror(errno));
}

int tracer_open(struct bpf_tracer *t, size_t ringbuf_bytes, const struct tracer_modes *modes,
		event_fn fn, void *ctx, bool verbose, char *err, size_t errlen)
{
	bool mpi_calls = modes->mpi_calls, heap = modes->heap, fault_frame = modes->fault_frame;
	bool faults = modes->rss_events;
	struct kernel_feats feats;
	int ret;

	memset(t, 0, sizeof(*t));
	libbpf_verbose = verbose;
	libbpf_set_print(print_libbpf);

reopen:
	t->skel = memattr_bpf__open();
	if (!t->skel) {
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	if (ringbuf_bytes)
		bpf_map__set_max_entries(t->skel->maps.events, ringbuf_bytes);
	/* rss_stat: how many CPU slots an RSS counter has, and what it counts. */
	t->skel->rodata->nr_cpus = libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 1;
	t->skel->rodata->page_shift = __builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
	/* Only the opt-in modes' probes need a new image or new code handled at once. */
	t->skel->rodata->prompt_wakeup = mpi_calls || heap;
	t->skel->rodata->exec_filter = modes->watch_exec;
	/* A mode that is off keeps one entry: exit and exec walk these maps in the kernel. */
	if (!mpi_calls)
		bpf_map__set_max_entries(t->skel->maps.mpi_calls, 1);
	if (!heap) {
		bpf_map__set_max_entries(t->skel->maps.heap_blocks, 1);
		bpf_map__set_max_entries(t->skel->maps.heap_sites, 1);
	}
	/*
	 * The opt-in programs attach as uprobe_multi links: one per library,
	 * not per function. Those of a mode that is off are not even loaded:
	 * the verifier's time is most of the start's.
	 */
	for (int i = UPROBE_MPI_ENTER; i <= UPROBE_HEAP_EXIT; i++) {
		bool on = i <= UPROBE_MPI_EXIT ? mpi_calls : heap;

		bpf_program__set_expected_attach_type(uprobe_prog(t, i), ATTACH_UPROBE_MULTI);
		bpf_program__set_autoload(uprobe_prog(t, i), on);
	}
	probe_kernel(&feats);
	if (syscall_hooks_check(err, errlen))
		goto fail;
	/* A mode that needs what this kernel lacks is refused before anything is loaded. */
	if ((mpi_calls || heap) && !feats.uprobe_multi) {
		snprintf(err, errlen, "%s needs uprobe_multi links, which Linux 6.6 brought; this kernel (%s) lacks them",
			 mpi_calls ? "--mpi-calls" : "--heap", kernel_release());
		goto fail;
	}
	choose_syscall_hooks(t);
	if (verbose)
		fprintf(stderr, "memattr-bpf: memory calls through %s\n", tracer_syscall_hooks());
	bpf_program__set_autoload(t->skel->progs.ma_exit, feats.exit_group_dead);
	bpf_program__set_autoload(t->skel->progs.ma_exit_task, !feats.exit_group_dead);
	t->skel->rodata->have_rdonly_cast = feats.rdonly_cast;
	/*
	 * The faults' frame is searched for where rss_stat fires inside each
	 * fault (percpu counters); before 6.2 it fires every 64 faults.
	 */
	fault_frame = faults && fault_frame && feats.rdonly_cast && feats.percpu_rss;
	bpf_program__set_autoload(t->skel->progs.ma_find_fault_frame, fault_frame);
	/* Without them (arm64) a fault's address comes only from its frame. */
	bpf_program__set_autoload(t->skel->progs.ma_fault_user, faults && feats.fault_tps);
	bpf_program__set_autoload(t->skel->progs.ma_fault_kernel, faults && feats.fault_tps);
	/* Sampled attribution: nothing at any process's faults, not even a test of its bits. */
	bpf_program__set_autoload(t->skel->progs.ma_rss_stat, faults);
	bpf_program__set_autoload(t->skel->progs.ma_flush_runs, faults);
	ret = memattr_bpf__load(t->skel);
	if (ret && t->syscall_fentry) {
		char why[160];

		/* The tracepoints then, which every kernel this runs on has. */
		snprintf(why, sizeof(why), "the fentry programs did not load: %s", strerror(-ret));
		syscall_hooks_fall_back(why);
		memattr_bpf__destroy(t->skel);
		t->skel = NULL;
		goto reopen;
	}
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s (run with --verbose for the verifier log)",
			 strerror(-ret));
		goto fail;
	}
	if (ensure_tracefs(err, errlen))
		goto fail;
	/*
	 * Mapped before any program is attached: mapping the buffer moves this
	 * process's RSS counter page by page (16 MiB, its data mapped twice), each a run
	 * of ma_rss_stat once it is attached.
	 */
	t->budget.fn = fn;
	t->budget.ctx = ctx;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), ring_budget_event, &t->budget, NULL);
	if (!t->rb) {
		snprintf(err, errlen, "cannot open the BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	/* The node-wide programs are tracer_attach_global's; the skeleton attaches the rest. */
	bpf_program__set_autoattach(t->skel->progs.ma_find_fault_frame, false);
	bpf_program__set_autoattach(t->skel->progs.ma_fault_user, false);
	bpf_program__set_autoattach(t->skel->progs.ma_fault_kernel, false);
	bpf_program__set_autoattach(t->skel->progs.ma_rss_stat, false);
	for (struct bpf_program *p = bpf_object__next_program(t->skel->obj, NULL); p;
	     p = bpf_object__next_program(t->skel->obj, p))
		if (bpf_program__autoload(p) && test_unattached(p)) {
			bpf_program__set_autoattach(p, false);
			fprintf(stderr, "memattr-bpf: MEMATTR_TEST_UNATTACHED: %s loaded, not attached (test only)\n",
				bpf_program__name(p));
		}
	ret = memattr_bpf__attach(t->skel);
	if (ret) {
		snprintf(err, errlen, "cannot attach the BPF programs: %s", strerror(-ret));
		goto fail;
	}
	t->global_rss = faults;
	t->global_fault_kernel = faults && feats.fault_tps;
	/* Before the frame's search, when it stays: see find_fault_frame. */
	if (!modes->on_demand && t->global_rss &&
	    attach_link(t->skel->progs.ma_rss_stat, &t->skel->links.ma_rss_stat, err, errlen))
		goto fail;
	if (fault_frame)
		find_fault_frame(t);
	t->global_fault_user = faults && !t->skel->bss->fault_frame_pos && feats.fault_tps;
	if (!modes->on_demand && tracer_attach_global(t, err, errlen))
		goto fail;
	attach_oom(t);
	return 0;
fail:
	tracer_close(t);
	return -1;
}

/*
 * Every program's link is destroyed at once, from several threads: each
 * syscall tracepoint's waits for a grace period, and one after the other
 * the waits would add up.
 */
static void destroy_links(struct bpf_tracer *t)
{
	const struct bpf_object_skeleton *s = t->skel->skeleton;
	struct bpf_link **links[128];
	size_t n = 0;

	for (int i = 0; s && i < s->prog_cnt && n < sizeof(links) / sizeof(*links); i++)
		if (s->progs[i].link && *s->progs[i].link)
			links[n++] = s->progs[i].link;
	for (int i = 0; i < 2 * TRACER_SYSCALLS && n < sizeof(links) / sizeof(*links); i++)
		if (t->syscall_links[i])
			links[n++] = &t->syscall_links[i];
	parallel_for(n, destroy_link, links);
}

/* Each of them waits for a grace period: at once, from several threads (destroy_links). */
void tracer_detach_global(struct bpf_tracer *t)
{
	struct bpf_link **links[2 * TRACER_SYSCALLS + 3];
	size_t n = 0;

	if (!t->skel)
		return;
	for (int i = 0; i < 2 * TRACER_SYSCALLS + 3; i++) {
		struct bpf_link **l = i == 0 ? &t->skel->links.ma_rss_stat :
				      i == 1 ? &t->skel->links.ma_fault_user :
				      i == 2 ? &t->skel->links.ma_fault_kernel : &t->syscall_links[i - 3];

		if (*l)
			links[n++] = l;
	}
	parallel_for(n, destroy_link, links);
	t->global_on = false;
}

void tracer_close(struct bpf_tracer *t)
{
	if (t->watching)
		close(t->epfd);
	t->watching = false;
	ring_buffer__free(t->rb);
	t->rb = NULL;
	if (t->skel)
		destroy_links(t);
	memattr_bpf__destroy(t->skel);	/* the maps and programs (the links are gone) */
	t->skel = NULL;
}

int tracer_flush_runs(struct bpf_tracer *t)
{
	char buf[64];
	ssize_t n;
	int fd;

	if (!t->skel->links.ma_flush_runs)
		return 0;	/* sampled attribution: no runs */
	/* The iterator's program writes nothing: reading it runs it over every task. */
	fd = bpf_iter_create(bpf_link__fd(t->skel->links.ma_flush_runs));
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

uint16_t tracer_step_epoch(struct bpf_tracer *t, pid_t tgid)
{
	__u16 *e = &t->skel->bss->fault_epoch[(__u32)tgid % FAULT_EPOCH_SLOTS];

	/* A full barrier: the read that follows cannot come before the step. */
	return __atomic_add_fetch(e, 1, __ATOMIC_SEQ_CST);
}

/*
 * The kernel side's fast exit tests two bits per tgid (traced_bits, in the
 * object's .bss, mapped here): TB_ACCOUNTED mirrors TRACED_ACCOUNT in the
 * traced map, set after the entry is in, cleared before it goes, so a
 * program that sees the bit finds the entry. TB_QUIET is cleared first:
 * a process user space adds is followed at once, never left quiet by a
 * stale bit.
 */
static __u64 *bits_word(struct bpf_tracer *t, pid_t tgid, unsigned int *shift)
{
	*shift = ((uint32_t)tgid % 32) * 2;
	return &t->skel->bss->traced_bits[((uint32_t)tgid / 32) % TRACED_BITS_WORDS];
}

static void set_accounted(struct bpf_tracer *t, pid_t tgid, bool on)
{
	unsigned int shift;
	__u64 *w = bits_word(t, tgid, &shift);

	__atomic_fetch_and(w, ~((__u64)TB_QUIET << shift), __ATOMIC_SEQ_CST);
	if (on)
		__atomic_fetch_or(w, (__u64)TB_ACCOUNTED << shift, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(w, ~((__u64)TB_ACCOUNTED << shift), __ATOMIC_SEQ_CST);
}

void tracer_follow_changes(struct bpf_tracer *t, pid_t tgid)
{
	unsigned int shift;
	__u64 *w = bits_word(t, tgid, &shift);

	__atomic_fetch_and(w, ~((__u64)TB_QUIET << shift), __ATOMIC_SEQ_CST);
}

int tracer_add_process(struct bpf_tracer *t, pid_t tgid, uint32_t job, uint32_t flags)
{
	struct traced_proc tp = { .job = job, .flags = flags };
	__u32 key = tgid;
	int ret;

	if (!(flags & TRACED_ACCOUNT))
		set_accounted(t, tgid, false);
	ret = bpf_map__update_elem(t->skel->maps.traced, &key, sizeof(key), &tp,
				   sizeof(tp), BPF_ANY);
	if (!ret && (flags & TRACED_ACCOUNT))
		set_accounted(t, tgid, true);
	return ret;
}

int tracer_remove_process(struct bpf_tracer *t, pid_t tgid)
{
	__u32 key = tgid;

	set_accounted(t, tgid, false);
	return bpf_map__delete_elem(t->skel->maps.traced, &key, sizeof(key), 0);
}

bool tracer_has_process(struct bpf_tracer *t, pid_t tgid)
{
	struct traced_proc tp;
	__u32 key = tgid;

	return bpf_map__lookup_elem(t->skel->maps.traced, &key, sizeof(key), &tp, sizeof(tp), 0) == 0;
}

int tracer_watch_exec(struct bpf_tracer *t, bool on)
{
	if (on && !t->skel->rodata->exec_filter)
		return -EINVAL;
	t->skel->bss->watch_exec = on;
	return 0;
}

/* Entries in one of the object's hash maps now, and its capacity. */
int tracer_map_fill(struct bpf_tracer *t, const char *name, uint64_t *entries, uint64_t *max)
{
	struct bpf_map *m = bpf_object__find_map_by_name(t->skel->obj, name);
	__u64 key, next;	/* the maps counted have 4- or 8-byte keys */
	void *prev = NULL;
	uint64_t n = 0;
	size_t ksz;

	if (!m)
		return -ENOENT;
	ksz = bpf_map__key_size(m);
	if (ksz > sizeof(key))
		return -EINVAL;
	*max = bpf_map__max_entries(m);
	while (!bpf_map__get_next_key(m, prev, &next, ksz) && n < *max) {
		memcpy(&key, &next, ksz);
		prev = &key;
		n++;
	}
	*entries = n;
	return 0;
}

int tracer_poll(struct bpf_tracer *t, int timeout_ms, int budget_ms)
{
	struct epoll_event ev[2];
	int n;

	ring_budget_start(&t->budget, budget_ms);
	if (!t->watching)
		return ring_budget_result(&t->budget, ring_buffer__poll(t->rb, timeout_ms));
	n = epoll_wait(t->epfd, ev, 2, timeout_ms);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (t->watched_fd < 0 || ev[i].data.fd != t->watched_fd)
			continue;
		/* Readable for good (an exited process's pidfd): watched once. */
		epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->watched_fd, NULL);
		t->watched_fd = -1;
		t->watch_fired = true;
	}
	return ring_budget_result(&t->budget, ring_buffer__consume(t->rb));
}

/*
 * libbpf's own epoll set may hold nothing but its rings (it takes every
 * event's data as a ring's index), so the watched fd and the ring
 * buffer's set go into one of ours.
 */
int tracer_watch_fd(struct bpf_tracer *t, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	if (t->watching)
		return -EBUSY;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0)
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(t->rb);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto fail;
	ev.data.fd = fd;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	t->watched_fd = fd;
	t->watching = true;
	return 0;
fail:
	ret = -errno;
	close(t->epfd);
	return ret;
}

bool tracer_watch_fired(struct bpf_tracer *t)
{
	bool fired = t->watch_fired;

	t->watch_fired = false;
	return fired;
}

int tracer_drain(struct bpf_tracer *t, int budget_ms)
{
	ring_budget_start(&t->budget, budget_ms);
	return ring_budget_result(&t->budget, ring_buffer__consume(t->rb));
}

bool tracer_backlog(const struct bpf_tracer *t)
{
	return t->budget.cut;
}

uint64_t tracer_job_drops(struct bpf_tracer *t, uint32_t job)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 vals[ncpu > 0 ? ncpu : 1];
	__u32 slot = job & (JOB_DROP_SLOTS - 1);
	uint64_t n = 0;

	if (ncpu <= 0 || bpf_map__lookup_elem(t->skel->maps.job_drops, &slot, sizeof(slot),
					      vals, sizeof(vals), 0))
		return 0;
	for (int c = 0; c < ncpu; c++)
		n += vals[c];
	return n;
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

int tracer_attach_uprobes(struct bpf_tracer *t, enum uprobe_prog which, pid_t pid,
			  const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  size_t cnt)
{
	struct uprobe_multi_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = bpf_program__fd(uprobe_prog(t, which));
	attr.attach_type = ATTACH_UPROBE_MULTI;
	attr.path = (__u64)(uintptr_t)path;
	attr.offsets = (__u64)(uintptr_t)offsets;
	attr.cookies = (__u64)(uintptr_t)cookies;
	attr.cnt = (__u32)cnt;
	attr.multi_flags = which == UPROBE_MPI_EXIT || which == UPROBE_HEAP_EXIT ?
			   UPROBE_MULTI_RETURN : 0;
	attr.pid = (__u32)pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

uint64_t tracer_mpi_calls(struct bpf_tracer *t, pid_t tgid, uint32_t fn)
{
	struct mpi_call_key key = { .tgid = tgid, .fn = fn };
	__u64 calls = 0;

	bpf_map__lookup_elem(t->skel->maps.mpi_calls, &key, sizeof(key), &calls, sizeof(calls), 0);
	return calls;
}

/* Delete every key of map whose leading __u32 is tgid (keys start with the tgid). */
static void forget_tgid(struct bpf_map *map, size_t key_size, pid_t tgid)
{
	unsigned char kept[32], cur[32];
	bool have_kept = false;
	__u32 owner;

	/* The walk resumes after the last key kept, so deleting never restarts it. */
	while (!bpf_map__get_next_key(map, have_kept ? kept : NULL, cur, key_size)) {
		memcpy(&owner, cur, sizeof(owner));
		if (owner == (__u32)tgid && !bpf_map__delete_elem(map, cur, key_size, 0))
			continue;
		memcpy(kept, cur, key_size);
		have_kept = true;
	}
}

void tracer_heap_sites(struct bpf_tracer *t, pid_t tgid, site_fn fn, void *ctx)
{
	struct bpf_map *sites = t->skel->maps.heap_sites;
	struct site_key key, next;
	struct site_stats st;
	bool started = false;

	while (!bpf_map__get_next_key(sites, started ? &key : NULL, &next, sizeof(next))) {
		key = next;
		started = true;
		if ((tgid && key.tgid != (__u32)tgid) ||
		    bpf_map__lookup_elem(sites, &key, sizeof(key), &st, sizeof(st), 0))
			continue;
		fn(ctx, (pid_t)key.tgid, key.site, &st);
	}
}

int tracer_take_oom_mark(struct bpf_tracer *t, pid_t tgid, uint64_t *boot_ns)
{
	__u32 key = (__u32)tgid;
	__u64 ns;

	/* Closed (tracker_finish ends its sessions after): no note left to read. */
	if (!t->skel || !t->oom_watched ||
	    bpf_map__lookup_elem(t->skel->maps.oom_marks, &key, sizeof(key), &ns, sizeof(ns), 0))
		return 0;
	bpf_map__delete_elem(t->skel->maps.oom_marks, &key, sizeof(key), 0);
	*boot_ns = ns;
	return 1;
}

void tracer_forget_process(struct bpf_tracer *t, pid_t tgid)
{
	/* Its live blocks were dropped in the kernel when it exited (ma_exit). */
	forget_tgid(t->skel->maps.heap_sites, sizeof(struct site_key), tgid);
	forget_tgid(t->skel->maps.mpi_calls, sizeof(struct mpi_call_key), tgid);
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
