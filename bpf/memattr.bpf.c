// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel side of memattr-bpf: watch the memory of traced processes.
 *
 * The kernel's own RSS counters (kmem:rss_stat) are the source of truth. Each
 * change is charged to what the thread was doing when it happened: a page
 * fault at an address, or a memory syscall over a range. User space owns the
 * address -> library table and turns these records into components.
 *
 * Everything is filtered here to the traced processes (map "traced", keyed
 * by tgid); children of traced processes join at fork. Only raw BTF
 * tracepoints are used, except rss_stat, whose "size" field (the exact
 * per-CPU sum) exists only in the classic tracepoint.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memattr.h"

#define PF_EXITING	0x00000004

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Per thread: what it is doing now, so an RSS change can be charged. */
struct thread_ctx {
	__u32 kind;		/* enum rss_ctx */
	__u32 pad;
	__u64 addr;		/* CTX_FAULT: fault address */
	__u64 nr;		/* CTX_SYSCALL: syscall number and arguments */
	__u64 args[6];
	__u64 user_sp;
	__s64 delta[MEMATTR_NR_MEMBERS];
	__u32 mpi_fn;		/* --mpi-calls: outermost MPI call in progress, 0: none */
	__u32 mpi_depth;	/* nesting of probed MPI calls */
	__u32 heap_kind;	/* --heap: outermost malloc-family call in progress (enum heap_kind) */
	__u32 heap_depth;	/* nesting: glibc's realloc(NULL, n) and memalign tail-call malloc */
	__u64 heap_site, heap_size, heap_old, heap_memptr;
};

/* Last seen counter values of one mm, to turn rss_stat sizes into deltas. */
struct mm_counters {
	__u32 tgid;
	__u32 known;		/* bit per member: last[] holds a real value */
	__u64 mm;		/* the mm itself: rss_stat's mm_id is only a hash of it */
	__s64 last[MEMATTR_NR_MEMBERS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct traced_proc);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_ctx);
} thread_ctxs SEC(".maps");

/* Keyed by rss_stat's mm_id; LRU so address spaces that died age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct mm_counters);
} mm_counters SEC(".maps");

/* --mpi-calls: call counts. User space sizes the heap maps down to 1 entry when --heap is off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct mpi_call_key);
	__type(value, __u64);
} mpi_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct heap_key);
	__type(value, struct heap_block);
} heap_blocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct site_key);
	__type(value, struct site_stats);
} heap_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* user space may resize before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Set by the node service: an exec of a process not traced yet is reported
 * too (job slot 0), so user space can read its environment and start or
 * join its job's session. Execs are rare; the rest stays per traced process.
 */
__u32 watch_exec = 0;

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

static __always_inline void fill_header(struct ev_header *h, __u32 type, __u32 tgid)
{
	struct traced_proc *tp = bpf_map_lookup_elem(&traced, &tgid);

	h->type = type;
	h->tgid = tgid;
	h->tid = (__u32)bpf_get_current_pid_tgid();
	h->job = tp ? tp->job : 0;
	h->ts_ns = bpf_ktime_get_boot_ns();
}

static __always_inline bool is_tracked_syscall(long id)
{
	switch (id) {
	case NR_MMAP: case NR_MPROTECT: case NR_MUNMAP: case NR_BRK: case NR_MREMAP:
	case NR_MADVISE: case NR_MLOCK: case NR_MLOCKALL: case NR_MLOCK2:
		return true;
	}
	return false;
}

static __always_inline struct traced_proc *traced_current(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return bpf_map_lookup_elem(&traced, &tgid);
}

/* Thread context of current, created only for threads of traced processes. */
static __always_inline struct thread_ctx *ctx_get(bool create)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_ctx *c = bpf_task_storage_get(&thread_ctxs, task, 0, 0);

	if (c || !create)
		return c;
	if (!traced_current())
		return NULL;
	return bpf_task_storage_get(&thread_ctxs, task, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ma_sys_enter, struct pt_regs *regs, long id)
{
	bool tracked = is_tracked_syscall(id);
	struct thread_ctx *c;

	/* Untraced threads have no storage: one lookup and out. */
	c = ctx_get(tracked);
	if (!c)
		return 0;
	if (!tracked) {
		/* A stale fault address must not absorb what this call does. */
		c->kind = CTX_OTHER_SYSCALL;
		return 0;
	}
	c->kind = CTX_SYSCALL;
	c->nr = id;
	c->args[0] = regs->di;
	c->args[1] = regs->si;
	c->args[2] = regs->dx;
	c->args[3] = regs->r10;
	c->args[4] = regs->r8;
	c->args[5] = regs->r9;
	c->user_sp = regs->sp;
	__builtin_memset(c->delta, 0, sizeof(c->delta));
	return 0;
}

/* Calls whose requester user space looks for on the stack. */
/*
 * The calls whose record carries the stack: memory requests, and mremap
 * (realloc's growth): when an smaps read overtakes its record, the moved
 * mapping's old owner is gone from the region table and only the stack
 * can say whose it is.
 */
static __always_inline bool requests_memory(__u64 nr)
{
	return nr == NR_MMAP || nr == NR_BRK || nr == NR_MPROTECT || nr == NR_MREMAP;
}

/*
 * Copy the top of the user stack chunk by chunk, so a stack shallower than
 * the whole copy (a thread near its top) still gives what it has.
 */
static __always_inline void copy_stack(struct ev_syscall *e, __u64 sp)
{
	e->stack_len = 0;
	for (int i = 0; i < MEMATTR_STACK_CHUNKS; i++) {
		if (bpf_probe_read_user(e->stack + i * MEMATTR_STACK_CHUNK,
					MEMATTR_STACK_CHUNK,
					(void *)(sp + i * MEMATTR_STACK_CHUNK)))
			break;
		e->stack_len = (i + 1) * MEMATTR_STACK_CHUNK;
	}
	if (!e->stack_len) {
		if (!bpf_probe_read_user(e->stack, 8, (void *)sp))
			e->stack_len = 8;
		else
			count(STAT_STACK_READ_FAIL);
	}
}

/*
 * The registers a CFI unwinder starts from. A syscall changes none of them
 * (only rax, rcx, r11), so reading them at exit gives the values at entry
 * without carrying them in every thread's context.
 */
static __always_inline void copy_regs(struct ev_syscall *e, struct pt_regs *regs)
{
	e->regs.ip = regs->ip;
	e->regs.sp = regs->sp;
	e->regs.bp = regs->bp;
	e->regs.bx = regs->bx;
	e->regs.r12 = regs->r12;
	e->regs.r13 = regs->r13;
	e->regs.r14 = regs->r14;
	e->regs.r15 = regs->r15;
}

/*
 * A pending uretprobe has replaced a return address on this stack with the
 * kernel's trampoline; the real one is in the task's return instances.
 */
static __always_inline void copy_hijacked(struct ev_syscall *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri;
	__u32 n = 0;

	e->nret = 0;
	if (!bpf_core_field_exists(task->utask))
		return;
	ri = BPF_CORE_READ(task, utask, return_instances);
	for (int i = 0; i < MEMATTR_MAX_HIJACKED; i++) {
		if (!ri)
			break;
		e->ret_slot[i] = BPF_CORE_READ(ri, stack);
		e->ret_addr[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
		n++;
	}
	e->nret = n;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ma_sys_exit, struct pt_regs *regs, long ret)
{
	struct thread_ctx *c = ctx_get(false);
	struct ev_syscall *e;
	bool with_stack;

	if (!c)
		return 0;
	if (c->kind != CTX_SYSCALL) {
		c->kind = CTX_NONE;
		return 0;
	}
	c->kind = CTX_NONE;

	with_stack = requests_memory(c->nr);
	if (with_stack)
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	else
		e = bpf_ringbuf_reserve(&events, EV_SYSCALL_NOSTACK_SIZE, 0);
	if (!e) {
		count(STAT_RINGBUF_DROPS);
		return 0;
	}
	fill_header(&e->h, EV_SYSCALL, bpf_get_current_pid_tgid() >> 32);
	e->nr = c->nr;
	__builtin_memcpy(e->args, c->args, sizeof(e->args));
	e->ret = ret;
	__builtin_memcpy(e->delta, c->delta, sizeof(e->delta));
	e->user_sp = c->user_sp;
	e->mpi_fn = c->mpi_fn;
	e->stack_len = 0;
	e->nret = 0;
	e->pad = 0;
	/* The code that asked for the memory is on this stack: user space finds it there. */
	if (with_stack) {
		copy_regs(e, regs);
		copy_stack(e, c->user_sp);
		copy_hijacked(e);
	}
	/* Rare, and a new library must be seen at once (probes, classification). */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

static __always_inline void note_fault(unsigned long address)
{
	struct thread_ctx *c = ctx_get(true);

	/* A fault inside a tracked syscall belongs to that syscall. */
	if (!c || c->kind == CTX_SYSCALL)
		return;
	c->kind = CTX_FAULT;
	c->addr = address;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(ma_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	note_fault(address);
	return 0;
}

/* The kernel touching user memory (read() into a fresh buffer, ...). */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(ma_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	if (address >= 0x800000000000UL)
		return 0;
	note_fault(address);
	return 0;
}

/*
 * RSS changes come with every page fault: waking the reader for each would
 * put it on the CPU between the faults of the very ranks it watches. User
 * space drains them at every sample; it is woken early only when a quarter
 * of the buffer is used.
 */
static __always_inline __u64 rss_wakeup(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void emit_rss(__u32 tgid, __u64 addr, __s64 delta,
				     __u32 member, __u32 kind, __u32 mpi_fn)
{
	struct ev_rss *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count(STAT_RINGBUF_DROPS);
		return;
	}
	fill_header(&e->h, EV_RSS, tgid);
	e->addr = addr;
	e->delta = delta;
	e->member = member;
	e->ctx = kind;
	e->mpi_fn = mpi_fn;
	e->pad = 0;
	bpf_ringbuf_submit(e, rss_wakeup());
}

SEC("tp/kmem/rss_stat")
int ma_rss_stat(struct trace_event_raw_rss_stat *args)
{
	__u32 mm_id = args->mm_id, member = args->member;
	struct mm_counters *mc, fresh = {};
	struct task_struct *task;
	struct thread_ctx *c;
	__s64 size = args->size, delta;
	__u32 tgid;

	if (member >= MEMATTR_NR_MEMBERS)
		return 0;
	mc = bpf_map_lookup_elem(&mm_counters, &mm_id);
	if (!mc) {
		/* Learn mm -> process only from the process itself. */
		struct traced_proc *tp;

		if (!args->curr)
			return 0;
		tp = traced_current();
		if (!tp || !(tp->flags & TRACED_ACCOUNT))
			return 0;
		fresh.tgid = bpf_get_current_pid_tgid() >> 32;
		fresh.mm = (__u64)bpf_get_current_task_btf()->mm;
		fresh.known = 1 << member;
		fresh.last[member] = size;
		bpf_map_update_elem(&mm_counters, &mm_id, &fresh, BPF_NOEXIST);
		return 0;
	}
	tgid = mc->tgid;
	/*
	 * rss_stat names an mm by a hash of its address: after a traced
	 * process exits, a new process's mm can get the same id. A change made
	 * through the mm itself shows which mm it is (a vfork child shares
	 * its parent's mm: the same one, rightly).
	 */
	if (args->curr && (__u64)bpf_get_current_task_btf()->mm != mc->mm) {
		bpf_map_delete_elem(&mm_counters, &mm_id);
		return 0;
	}
	/*
	 * Threads of one process fault on several CPUs at once: the exchange
	 * makes the deltas add up exactly to the counter's change, whatever
	 * the interleaving.
	 */
	if (!(mc->known & (1 << member))) {
		__sync_fetch_and_or(&mc->known, 1 << member);
		__sync_lock_test_and_set(&mc->last[member], size);
		return 0;
	}
	delta = size - __sync_lock_test_and_set(&mc->last[member], size);
	if (!delta)
		return 0;

	if (!args->curr) {
		/*
		 * The process is gone (its mm id may now name another process's
		 * mm), or this is its own old mm torn down by its exec: that mm
		 * is no one's any more. Forget it, rather than send every change.
		 */
		if (!bpf_map_lookup_elem(&traced, &tgid) ||
		    (__u32)(bpf_get_current_pid_tgid() >> 32) == tgid) {
			bpf_map_delete_elem(&mm_counters, &mm_id);
			return 0;
		}
		/* Another task changed this mm: reclaim, fork copying, ... */
		count(STAT_NO_CTX_RSS);
		emit_rss(tgid, 0, delta, member, CTX_NONE, 0);
		return 0;
	}
	task = bpf_get_current_task_btf();
	if (task->flags & PF_EXITING)
		return 0;	/* teardown: the process's last sample stands */
	c = bpf_task_storage_get(&thread_ctxs, task, 0, 0);
	if (c && c->kind == CTX_SYSCALL) {
		c->delta[member] += delta;
		return 0;
	}
	if (c && c->kind == CTX_FAULT) {
		emit_rss(tgid, c->addr, delta, member, CTX_FAULT, c->mpi_fn);
		return 0;
	}
	count(STAT_NO_CTX_RSS);
	emit_rss(tgid, 0, delta, member, c ? c->kind : CTX_NONE, c ? c->mpi_fn : 0);
	return 0;
}

static __always_inline void emit_task(__u32 type, __u32 tgid, struct task_struct *p,
				      __u32 parent)
{
	struct ev_task *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count(STAT_RINGBUF_DROPS);
		return;
	}
	fill_header(&e->h, type, tgid);
	e->child_tgid = type == EV_FORK ? p->tgid : 0;
	e->parent_tgid = parent;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	/* A fork or exec must be handled before the new program gets far. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ma_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct traced_proc *tp, ntp;

	if (ctgid == ptgid)
		return 0;	/* a new thread: covered by its tgid */
	tp = bpf_map_lookup_elem(&traced, &ptgid);
	if (!tp || !(tp->flags & TRACED_FOLLOW))
		return 0;
	ntp.job = tp->job;
	ntp.flags = TRACED_FOLLOW | TRACED_ACCOUNT;
	if (bpf_map_update_elem(&traced, &ctgid, &ntp, BPF_ANY)) {
		count(STAT_TRACED_FULL);
		return 0;
	}
	emit_task(EV_FORK, ptgid, child, ptgid);
	return 0;
}

/* bpf_for_each_map_elem callback: drop one live block of a process that exits or execs. */
static long drop_block(void *map, struct heap_key *key, struct heap_block *b, __u32 *tgid)
{
	if (key->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

static long drop_site(void *map, struct site_key *key, struct site_stats *st, __u32 *tgid)
{
	if (key->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

static long drop_calls(void *map, struct mpi_call_key *key, __u64 *calls, __u32 *tgid)
{
	if (key->tgid == *tgid)
		bpf_map_delete_elem(map, key);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ma_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	if (!bpf_map_lookup_elem(&traced, &tgid)) {
		if (watch_exec)
			emit_task(EV_EXEC, tgid, p, 0);
		return 0;
	}
	emit_task(EV_EXEC, tgid, p, 0);
	/*
	 * The opt-in modes' state of the old image is not the new program's:
	 * dropped here, before the new program runs a single instruction.
	 */
	bpf_for_each_map_elem(&heap_blocks, drop_block, &tgid, 0);
	bpf_for_each_map_elem(&heap_sites, drop_site, &tgid, 0);
	bpf_for_each_map_elem(&mpi_calls, drop_calls, &tgid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ma_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;

	if (!group_dead || !bpf_map_lookup_elem(&traced, &tgid))
		return 0;
	emit_task(EV_EXIT, tgid, p, 0);
	bpf_map_delete_elem(&traced, &tgid);
	/* --heap: its live blocks die with it (a later process may get its pid). */
	bpf_for_each_map_elem(&heap_blocks, drop_block, &tgid, 0);
	return 0;
}

/*
 * --mpi-calls: uprobe and uretprobe on the MPI entry points the spec lists,
 * per traced process; the cookie is the function's index + 1. Only the
 * outermost call counts (MPI functions may call each other). A uretprobe
 * fires only for a call whose entry was probed, so a call in progress at
 * attach never produces an unmatched return.
 */
SEC("uprobe")
int BPF_KPROBE(ma_mpi_enter)
{
	struct thread_ctx *c = ctx_get(true);
	struct mpi_call_key key;
	__u64 one = 1, *calls;

	/* Every entry counts toward the depth, so every return finds its own. */
	if (!c || c->mpi_depth++)
		return 0;
	c->mpi_fn = bpf_get_attach_cookie(ctx);
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.fn = c->mpi_fn;
	calls = bpf_map_lookup_elem(&mpi_calls, &key);
	if (calls)
		__sync_fetch_and_add(calls, 1);
	else
		bpf_map_update_elem(&mpi_calls, &key, &one, BPF_NOEXIST);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ma_mpi_exit)
{
	struct thread_ctx *c = ctx_get(false);

	if (!c || !c->mpi_depth)
		return 0;
	if (!--c->mpi_depth)
		c->mpi_fn = 0;
	return 0;
}

/* --heap: a block was freed (or replaced by realloc). */
static __always_inline void heap_forget(__u32 tgid, __u64 ptr)
{
	struct heap_key key = { .tgid = tgid, .ptr = ptr };
	struct heap_block *b = bpf_map_lookup_elem(&heap_blocks, &key);
	struct site_key sk = { .tgid = tgid };
	struct site_stats *s;

	if (!b)
		return;		/* allocated before we attached */
	sk.site = b->site;
	s = bpf_map_lookup_elem(&heap_sites, &sk);
	if (s) {
		__sync_fetch_and_add(&s->live_bytes, -(__s64)b->size);
		__sync_fetch_and_add(&s->frees, 1);
	}
	bpf_map_delete_elem(&heap_blocks, &key);
}

static __always_inline void heap_record(__u32 tgid, __u64 ptr, __u64 size, __u64 site)
{
	struct heap_key key = { .tgid = tgid, .ptr = ptr };
	struct heap_block b = { .size = size, .site = site };
	struct site_key sk = { .tgid = tgid, .site = site };
	struct site_stats zero = {}, *s;

	if (bpf_map_update_elem(&heap_blocks, &key, &b, BPF_NOEXIST)) {
		count(STAT_HEAP_FULL);
		return;
	}
	s = bpf_map_lookup_elem(&heap_sites, &sk);
	if (!s) {
		bpf_map_update_elem(&heap_sites, &sk, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&heap_sites, &sk);
		if (!s) {
			bpf_map_delete_elem(&heap_blocks, &key);
			count(STAT_HEAP_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&s->calls, 1);
	__sync_fetch_and_add(&s->total_bytes, size);
	__sync_fetch_and_add(&s->live_bytes, size);
	/* Racy between threads of one process at worst by one block: documented. */
	if (s->live_bytes > s->peak_bytes)
		s->peak_bytes = s->live_bytes;
}

SEC("uprobe")
int BPF_KPROBE(ma_heap_enter)
{
	__u32 kind = bpf_get_attach_cookie(ctx), tgid = bpf_get_current_pid_tgid() >> 32;
	struct thread_ctx *c;

	if (kind == HEAP_FREE) {
		if (PT_REGS_PARM1(ctx))
			heap_forget(tgid, PT_REGS_PARM1(ctx));
		return 0;
	}
	c = ctx_get(true);
	if (!c)
		return 0;
	/*
	 * Only the outermost call is the program's: an inner one (malloc
	 * entered from realloc) would see the outer return probe's trampoline
	 * as its caller.
	 */
	if (c->heap_depth++)
		return 0;
	c->heap_kind = kind;
	c->heap_old = 0;
	c->heap_memptr = 0;
	/* At the entry (or before any push) the return address is at the stack pointer. */
	if (bpf_probe_read_user(&c->heap_site, sizeof(c->heap_site), (void *)PT_REGS_SP(ctx)))
		c->heap_site = 0;
	switch (kind) {
	case HEAP_CALLOC:
		c->heap_size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
		break;
	case HEAP_REALLOC:
		c->heap_old = PT_REGS_PARM1(ctx);
		c->heap_size = PT_REGS_PARM2(ctx);
		break;
	case HEAP_REALLOCARRAY:
		c->heap_old = PT_REGS_PARM1(ctx);
		c->heap_size = PT_REGS_PARM2(ctx) * PT_REGS_PARM3(ctx);
		break;
	case HEAP_MEMALIGN:
		c->heap_size = PT_REGS_PARM2(ctx);
		break;
	case HEAP_POSIX_MEMALIGN:
		c->heap_memptr = PT_REGS_PARM1(ctx);
		c->heap_size = PT_REGS_PARM3(ctx);
		break;
	default:
		c->heap_size = PT_REGS_PARM1(ctx);
		break;
	}
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ma_heap_exit, long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct thread_ctx *c = ctx_get(false);
	__u64 ptr = ret;
	__u32 kind;

	if (!c || !c->heap_depth)
		return 0;
	if (--c->heap_depth || !c->heap_kind)
		return 0;
	kind = c->heap_kind;
	c->heap_kind = HEAP_NONE;
	if (kind == HEAP_POSIX_MEMALIGN) {
		if (ret || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)c->heap_memptr))
			return 0;
	}
	/* realloc: the old block is gone when a new one came back, or when asked for 0 bytes. */
	if ((kind == HEAP_REALLOC || kind == HEAP_REALLOCARRAY) && c->heap_old &&
	    (ptr || !c->heap_size))
		heap_forget(tgid, c->heap_old);
	if (ptr)
		heap_record(tgid, ptr, c->heap_size, c->heap_site);
	return 0;
}
