// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel side of memattr-bpf: watch the memory of traced processes.
 *
 * The kernel's own RSS counters (kmem:rss_stat) are the source of truth. Each
 * change is charged to what the thread was doing when it happened: a page
 * fault at an address, or a memory syscall over a range. User space owns the
 * address -> library table and turns these records into components. A
 * thread's one-page faults on consecutive pages go out as one record, a run
 * (see fault_epoch and fault_into_run).
 *
 * Everything is filtered here to the traced processes (map "traced", keyed
 * by tgid, mirrored in the bitmap traced_bits for the fast exit); children
 * of traced processes join at fork. The fault and RSS programs are raw BTF
 * tracepoints: a process the tool does not trace pays one test of its bits per
 * event, and the kernel assembles no event for it (the classic kmem:rss_stat tracepoint
 * would sum every CPU's counter slot under a lock, for every process).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memattr.h"
#include "arch.h"

#define READ_ONCE(x)		(*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

#define PF_EXITING	0x00000004

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __weak __ksym;

/*
 * Whether the kernel has bpf_rdonly_cast (Linux 6.2), set by the loader
 * from its BTF before load (bpf_loader.c, probe_kernel). A constant to the
 * verifier: it walks only the branch that holds, so the kfunc may appear in
 * the branch it drops (a kfunc's address cannot be tested in the program
 * itself, bpf_ksym_exists, before Linux 6.3). The test stays in the
 * program (a load): hot paths test it last.
 */
const volatile bool have_rdonly_cast = true;

/*
 * The task iterator kfuncs came with their state's type (Linux 6.7): a
 * CO-RE constant, which the verifier removes with the branch it decides.
 */
#define have_task_iter()	bpf_core_type_exists(struct bpf_iter_task)

/*
 * Before Linux 6.2 an mm's RSS counters are atomic longs in struct
 * mm_rss_stat, not percpu counters; a thread's own faults add to a cache
 * in its task (SPLIT_RSS_COUNTING) that reaches the mm, and rss_stat, every
 * 64 faults. The layout CO-RE matches there; its presence is resolved at
 * load (bpf_core_type_exists), so each kernel runs only its own branch.
 */
struct mm_rss_stat___old {
	atomic_long_t count[MEMATTR_NR_MEMBERS];
};

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

#define old_rss_counters()	bpf_core_type_exists(struct mm_rss_stat___old)

/*
 * Faults on consecutive pages go out as runs only where every run can be
 * ended at once (a task iterator) and a change is a page (percpu counters).
 */
#define runs_possible()		(have_task_iter() && !old_rss_counters())

/*
 * The same kernel object, to read from only. A pointer loaded through a
 * trusted one (a tracepoint's task, the current task) is checked against
 * the kernel's lists of fields safe to trust, searches of the whole kernel
 * BTF by name, on every path the verifier walks that load on: loaded this
 * way instead, the programs take the verifier far less time (the figures:
 * docs/benchmark-history.md, "Figures once in code comments"). Pointers
 * read only for their fields or as keys need no trust. The cast leaves
 * three register moves in the program: ma_rss_stat, on every page fault
 * of the node, keeps its trusted loads (they cost it no verification
 * time). Before Linux 6.2 (no such kfunc) p is read as it is: p must then
 * be a pointer the verifier knows the type of.
 */
#define read_only(p, type)	(have_rdonly_cast ?						\
				 (type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)) :	\
				 (type *)(p))

/* task's mm (NULL for a kernel thread), as a pointer to read through or a key. */
static __always_inline struct mm_struct *mm_of(struct task_struct *task)
{
	return read_only(task, struct task_struct)->mm;
}

/* The base of task's kernel stack, as a number. */
static __always_inline __u64 stack_of(struct task_struct *task)
{
	return (__u64)read_only(task, struct task_struct)->stack;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Runs a thread keeps at once: a loop often fills several fresh arrays
 * side by side (x[i], y[i], z[i]), and their faults alternate.
 */
#define RUN_SLOTS	8
#define RUN_NO_SLOT	0xff

/* Per thread: what it is doing now, so an RSS change can be charged. */
struct thread_ctx {
	__u32 kind;		/* enum rss_ctx */
	__u32 sys_flags;	/* CTX_SYSCALL: EV_SYSCALL_* of the call in progress */
	__u64 addr;		/* CTX_FAULT: fault address */
	__u64 nr;		/* CTX_SYSCALL: syscall number and arguments */
	__u64 args[6];
	__u64 user_sp;
	__u64 brk_before;	/* NR_BRK: the break when the call began */
	__s64 delta[MEMATTR_NR_MEMBERS];
	__u64 changed_ns;	/* CTX_SYSCALL: when delta last moved, 0: not yet */
	__s64 by_read[MEMATTR_READ_SLOTS];	/* CTX_SYSCALL: as in ev_syscall */
	__u16 read_epoch[MEMATTR_READ_SLOTS];
	__u16 first_epoch;
	__u32 mpi_fn;		/* --mpi-calls: outermost MPI call in progress, 0: none */
	__u32 mpi_depth;	/* nesting of probed MPI calls */
	__u32 heap_kind;	/* --heap: outermost malloc-family call in progress (enum heap_kind) */
	__u32 heap_depth;	/* nesting: glibc's realloc(NULL, n) and memalign tail-call malloc */
	__u64 heap_site, heap_size, heap_old, heap_memptr;
	__u64 runs[RUN_SLOTS];	/* faults on consecutive pages not sent yet (RUN_*), 0: none */
	__u16 run_victim;	/* the slot a new run takes when none is free */
	__u8 free_run, stale_run;	/* fault_into_run's picks (RUN_NO_SLOT: none) */
	__u32 mm_id;		/* mm_key's id (struct mm_anchor) */
	__u64 mm_key;		/* the mm whose id is cached, 0: none */
};

/*
 * The RSS counters of one traced mm, as last seen. A counter is a
 * percpu_counter: a shared count plus one small slot per CPU, and its value
 * is their sum. A change on CPU c moves c's slot, or folds the slot into the
 * count when it grows past the batch. So the change since the last event is
 * (count - last count) + (c's slot - c's last slot): each term telescopes,
 * whatever the interleaving of CPUs, and the deltas sum exactly to the
 * counter's change without ever summing every CPU's slot (O(1) per event,
 * on 2 cores as on 128). The shared part is here; each CPU's last slots are
 * in mm_cpu_slots, a per-CPU array that only that CPU's events write
 * (preemption is off in a tracepoint), after anchor_mm filled every CPU's
 * once.
 *
 * Both are arrays indexed by a small id the mm holds while it is followed
 * (claim_id), and a thread caches its mm's id in its context: a
 * fault then finds them with two inlined array lookups, not two hash
 * lookups, on the path of every fault. mm_anchors maps the
 * mm to its id for everyone else (another task changing the mm, a thread's
 * first change). An entry is 64 bytes, a cache line of its own: the counts
 * of two busy processes never share one.
 */
struct mm_anchor {
	__u64 mm;		/* the mm followed with this id, 0: free, MM_CLAIMED */
	__u32 tgid;		/* the process whose mm it is */
	__u32 pad;
	__s64 count[MEMATTR_NR_MEMBERS];
	__u64 pad2[2];
};

struct mm_slots {
	__s32 slot[MEMATTR_NR_MEMBERS];
};

struct mm_ref {
	__u32 tgid;
	__u32 id;		/* index in mm_counts and mm_cpu_slots */
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

/*
 * The followed mms, MM_IDS at once (each traced process alive on the node,
 * each mm once; mm_cpu_slots costs 16 bytes per id per CPU). This one maps
 * an mm's address to its id; entries go when the mm does (exit, exec).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MM_IDS);
	__type(key, __u64);
	__type(value, struct mm_ref);
} mm_anchors SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MM_IDS);
	__type(key, __u32);
	__type(value, struct mm_anchor);
} mm_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MM_IDS);
	__type(key, __u32);
	__type(value, struct mm_slots);
} mm_cpu_slots SEC(".maps");

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

/*
 * Which processes have state in the opt-in modes' maps: exec and exit walk
 * those maps (a million buckets for heap_blocks) only for these, not for
 * every short-lived command a job runs.
 */
struct mode_owner {
	__s64 blocks;		/* live blocks in heap_blocks */
	__u32 sites;		/* has entries in heap_sites */
	__u32 calls;		/* has entries in mpi_calls */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct mode_owner);
} mode_owners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* user space may resize before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * STAT_RINGBUF_DROPS again, by the job of the process whose record was
 * lost (its traced_proc.job, modulo JOB_DROP_SLOTS): one job's storm fills
 * the ring for every job, and each job's run_info says what it lost.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JOB_DROP_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} job_drops SEC(".maps");

/*
 * Set by the node service: an exec of a process not traced yet is reported
 * too (job slot 0), so user space can read its environment and start or
 * join its job's session. Execs are rare; the rest stays per traced process.
 */
__u32 watch_exec = 0;

/*
 * Whether ma_exec holds that exec filter (exec_filter.h) at all: cleared
 * by user space before load when nothing will set watch_exec (the per-job
 * tool). The verifier then never walks the filter, whose many paths were
 * most of the per-job tool's start, beside busy ranks most of all.
 */
const volatile bool exec_filter = true;

/*
 * Two bits per tgid (TB_*): whether its memory is accounted (traced with
 * TRACED_ACCOUNT), and whether its RSS changes wait for user space's first
 * read. The first test of every program, a plain load with no helper call
 * and no write, so the faulting threads of an untraced process share
 * nothing new. Set and cleared with the traced map, by user space (through
 * the mmap'ed .bss) and at fork, exec and exit here.
 */
__u64 traced_bits[TRACED_BITS_WORDS];

/*
 * Where each CPU's copy of a percpu object is: per_cpu_ptr(p, cpu) is p
 * plus the CPU's area offset. The kernel's own table of offsets is not in
 * kallsyms on every kernel (no KALLSYMS_ALL, as here), so it is measured:
 * the address of CPU c's element of this one-entry per-CPU array, minus the
 * array's percpu pointer (read once from the map itself).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_area SEC(".maps");

__u64 cpu_area_base;	/* cpu_area's percpu pointer, 0 until read */

/*
 * The opt-in modes place probes in a new image and in newly mapped code
 * before it runs far, so user space is woken at once for a fork, an exec,
 * an exit and code mapped. Without them (cleared by user space before load)
 * nothing waits on those records: they wait for the next sample like the
 * rest, since waking the reader (an interrupt on the traced thread's CPU, a
 * VM exit in a virtual machine) for each short-lived command a job runs
 * costs the job more than the records do.
 */
const volatile bool prompt_wakeup = true;

/*
 * The fault epochs. Faults on consecutive pages go out as one run (ev_run),
 * and a run must not straddle a read of its process's /proc figures (smaps
 * or VmRSS): user space must know whether that read counted its pages. So
 * around each read user space steps the process's slot here to odd, then
 * back to even. A run grows only while the slot holds the value it began
 * with, and none begins while the slot is odd: those faults go out one by
 * one with their time, as they did before runs. Every run thus lies wholly
 * between two reads, and its epoch says which. Slots are shared by tgids
 * FAULT_EPOCH_SLOTS apart: another process's read only ends a run early.
 */
__u16 fault_epoch[FAULT_EPOCH_SLOTS];

/* Possible CPUs, set by user space before load: the slots walked when anchoring. */
const volatile __u32 nr_cpus = 1;
/* The counters count pages. */
const volatile __u32 page_shift = 12;
#define MEMATTR_MAX_CPUS	8192

static __always_inline __u64 tgid_bits(__u32 tgid)
{
	return traced_bits[(tgid / 32) & (TRACED_BITS_WORDS - 1)] >> ((tgid & 31) * 2);
}

static __always_inline bool tgid_accounted(__u32 tgid)
{
	return tgid_bits(tgid) & TB_ACCOUNTED;
}

/* Accounted, and its RSS changes followed (not TB_QUIET). */
static __always_inline bool tgid_changes_followed(__u32 tgid)
{
	return (tgid_bits(tgid) & (TB_ACCOUNTED | TB_QUIET)) == TB_ACCOUNTED;
}

static __always_inline void tgid_bits_or(__u32 tgid, __u64 bits)
{
	__sync_fetch_and_or(&traced_bits[(tgid / 32) & (TRACED_BITS_WORDS - 1)],
			    bits << ((tgid & 31) * 2));
}

static __always_inline void tgid_bits_clear(__u32 tgid, __u64 bits)
{
	__sync_fetch_and_and(&traced_bits[(tgid / 32) & (TRACED_BITS_WORDS - 1)],
			     ~(bits << ((tgid & 31) * 2)));
}

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

/* A record of tgid the ring buffer had no room for: counted node-wide and for its job. */
static __always_inline void count_drop(__u32 tgid)
{
	struct traced_proc *tp = bpf_map_lookup_elem(&traced, &tgid);
	__u32 slot;
	__u64 *v;

	count(STAT_RINGBUF_DROPS);
	if (!tp)
		return;
	slot = tp->job & (JOB_DROP_SLOTS - 1);
	v = bpf_map_lookup_elem(&job_drops, &slot);
	if (v)
		(*v)++;
}

/* The process's mode_owner entry, created on first use; NULL when the map is full. */
static __always_inline struct mode_owner *mode_owner_of(__u32 tgid)
{
	struct mode_owner zero = {}, *o = bpf_map_lookup_elem(&mode_owners, &tgid);

	if (o)
		return o;
	bpf_map_update_elem(&mode_owners, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&mode_owners, &tgid);
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

/* mm->rss_stat[member], with a constant offset for the verifier. */
static __always_inline struct percpu_counter *rss_counter(struct mm_struct *mm, int member)
{
	switch (member) {
	case 0: return &mm->rss_stat[0];
	case 1: return &mm->rss_stat[1];
	case 2: return &mm->rss_stat[2];
	default: return &mm->rss_stat[3];
	}
}

/*
 * A pointer as a plain number: the verifier allows no arithmetic between a
 * map pointer and an unknown number, so the bits are copied out.
 */
static __always_inline __u64 ptr_bits(void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/*
 * CPU cpu's area offset (cpu < 0: this CPU's), 0 when it cannot be known.
 * Each CPU's element of cpu_area caches its own, once measured.
 */
static __always_inline __u64 cpu_area_offset(int cpu)
{
	__u32 zero = 0;
	__u64 *off;

	if (cpu < 0)
		off = bpf_map_lookup_elem(&cpu_area, &zero);
	else
		off = bpf_map_lookup_percpu_elem(&cpu_area, &zero, cpu);
	if (!off)
		return 0;
	if (*off)
		return *off;
	if (!cpu_area_base) {
		/* struct bpf_array's pptrs[0], at its CO-RE offset. */
		__u64 pptr = 0;

		bpf_probe_read_kernel(&pptr, sizeof(pptr), (void *)(ptr_bits(&cpu_area) +
				      bpf_core_field_offset(struct bpf_array, pptrs)));
		if (!pptr)
			return 0;
		cpu_area_base = pptr;
	}
	*off = ptr_bits(off) - cpu_area_base;
	return *off;
}

/*
 * CPU cpu's slot of a counter (cpu < 0: this CPU's), 0 when unreadable.
 * The slot is read as the one 4-byte kernel struct at hand (a raw
 * spinlock's word): a load the JIT guards, not a helper call, which took a
 * tenth of ma_rss_stat's time.
 */
static __always_inline __s32 rss_slot(struct percpu_counter *fbc, int cpu)
{
	__u64 off = cpu_area_offset(cpu);
	struct raw_spinlock *word;

	if (!off)
		return 0;
	word = bpf_rdonly_cast((void *)((unsigned long)fbc->counters + off),
			       bpf_core_type_id_kernel(struct raw_spinlock));
	return word->raw_lock.val.counter;
}

struct anchor_walk {
	struct mm_struct *mm;
	__u32 id;
};

/* Before 6.2: counter member of the mm at key, read as the atomic it is. */
/* False when the counter could not be read: a 0 taken for it would be a false delta. */
static __always_inline bool old_rss_count(__u64 key, int member, __s64 *v)
{
	return !bpf_probe_read_kernel(v, sizeof(*v), (void *)(key +
				      bpf_core_field_offset(struct mm_struct___old, rss_stat) +
				      (member & (MEMATTR_NR_MEMBERS - 1)) * sizeof(atomic_long_t)));
}

/* An id being filled by anchor_mm: no mm's address, so no lookup matches it. */
#define MM_CLAIMED	1

__u32 next_mm_id;	/* where the search for a free id starts */

struct id_search {
	__u32 start;
	__u32 id;
	bool found;
};

/* bpf_loop callback: take id start + i if it is free. */
static long claim_one(__u32 i, struct id_search *w)
{
	__u32 id = (w->start + i) & (MM_IDS - 1);
	struct mm_anchor *a = bpf_map_lookup_elem(&mm_counts, &id);

	if (!a || __sync_val_compare_and_swap(&a->mm, 0, MM_CLAIMED))
		return 0;
	w->id = id;
	w->found = true;
	return 1;
}

/*
 * A free id, marked taken (MM_CLAIMED); false when all MM_IDS are in use.
 * Each search starts past the last one's, so with few mms followed (a
 * node's ranks) the first id tried is almost always free.
 */
static __always_inline bool claim_id(__u32 *id)
{
	struct id_search w = { .start = __sync_fetch_and_add(&next_mm_id, 1) };

	bpf_loop(MM_IDS, claim_one, &w, 0);
	*id = w.id;
	return w.found;
}

/* bpf_loop callback: record CPU cpu's slots of a newly anchored mm. */
static long anchor_cpu(__u32 cpu, struct anchor_walk *w)
{
	struct mm_slots *sl = bpf_map_lookup_percpu_elem(&mm_cpu_slots, &w->id, cpu);

	if (!sl)
		return 1;
	for (int m = 0; m < MEMATTR_NR_MEMBERS; m++)
		sl->slot[m] = rss_slot(rss_counter(w->mm, m), cpu);
	return 0;
}

/* An id free again: no lookup matches its entry any more (see mm_of_id). */
static __always_inline void release_id(__u32 id)
{
	struct mm_anchor *a = bpf_map_lookup_elem(&mm_counts, &id);

	if (a)
		WRITE_ONCE(a->mm, 0);
}

/*
 * Start following mm's counters for tgid: the count and every CPU's slots
 * as they are now (once per address space, at fork, exec or its first
 * change). A change made while this runs lands either before a slot's read
 * (then it is in the anchor) or after (then its own event reports it).
 * The mm -> id entry is inserted last: no event computes a delta from
 * slots not yet read. Of two CPUs anchoring one mm at once, one wins, the
 * other gives its id back.
 *
 * A global function, the mm passed as a number: the verifier checks it
 * once, not inside each of the seven programs that may anchor (a sixth of
 * their verification, the start's largest part), and it runs once per
 * address space, so the call costs nothing that matters.
 */
__noinline int anchor_mm(__u64 key, __u32 tgid)
{
	struct anchor_walk w = {};
	struct mm_ref ref = { .tgid = tgid };
	struct mm_anchor *a;

	if (!key || bpf_map_lookup_elem(&mm_anchors, &key))
		return 0;
	if (!claim_id(&w.id)) {
		count(STAT_TRACED_FULL);
		return 0;
	}
	a = bpf_map_lookup_elem(&mm_counts, &w.id);
	if (!a)
		return 0;
	if (old_rss_counters()) {
		for (int m = 0; m < MEMATTR_NR_MEMBERS; m++)
			if (!old_rss_count(key, m, &a->count[m]))
				a->count[m] = 0;
	} else {
		/* Percpu counters came with Linux 6.2, as bpf_rdonly_cast did. */
		w.mm = bpf_rdonly_cast((void *)key, bpf_core_type_id_kernel(struct mm_struct));
		bpf_loop(nr_cpus < MEMATTR_MAX_CPUS ? nr_cpus : MEMATTR_MAX_CPUS, anchor_cpu, &w, 0);
		for (int m = 0; m < MEMATTR_NR_MEMBERS; m++)
			a->count[m] = rss_counter(w.mm, m)->count;
	}
	a->tgid = tgid;
	WRITE_ONCE(a->mm, key);
	ref.id = w.id;
	if (bpf_map_update_elem(&mm_anchors, &key, &ref, BPF_NOEXIST)) {
		/* Another CPU anchored it first, or the map is full: counted. */
		if (!bpf_map_lookup_elem(&mm_anchors, &key))
			count(STAT_TRACED_FULL);
		release_id(w.id);
	}
	return 0;
}

/* Stop following an mm, if it is tgid's (a vfork child shares its parent's). */
static __always_inline void forget_mm(__u64 key, __u32 tgid)
{
	struct mm_ref *ref = bpf_map_lookup_elem(&mm_anchors, &key);
	__u32 id;

	if (!ref || ref->tgid != tgid)
		return;
	id = ref->id;
	/* Of two CPUs forgetting it at once, the one whose delete worked frees the id. */
	if (!bpf_map_delete_elem(&mm_anchors, &key))
		release_id(id);
}

/*
 * mm's entry in mm_counts and its id, NULL when it is not followed. The
 * thread's cached id is tried first; an id is only trusted while its entry
 * names this mm (an mm freed and another allocated at its address gets a
 * new id: release_id clears the entry before the id can be reused).
 */
static __always_inline struct mm_anchor *mm_of_id(struct thread_ctx *c, __u64 key, __u32 *id)
{
	struct mm_anchor *a;
	struct mm_ref *ref;

	if (c && c->mm_key == key) {
		*id = c->mm_id;
		a = bpf_map_lookup_elem(&mm_counts, id);
		if (a && READ_ONCE(a->mm) == key)
			return a;
	}
	ref = bpf_map_lookup_elem(&mm_anchors, &key);
	if (!ref)
		return NULL;
	*id = ref->id;
	a = bpf_map_lookup_elem(&mm_counts, id);
	if (!a || READ_ONCE(a->mm) != key)
		return NULL;
	if (c) {
		c->mm_id = *id;
		c->mm_key = key;
	}
	return a;
}

/*
 * A thread's context, created only for threads of traced processes (the
 * callers test that). A thread's first fault or syscall since it was traced also anchors its
 * mm, before the change it makes: an mm anchored by its first RSS change
 * would lose that change, and on a huge-page fault that is 2 MiB.
 */
static __always_inline struct thread_ctx *task_ctx(struct task_struct *task, bool create)
{
	struct thread_ctx *c = bpf_task_storage_get(&thread_ctxs, task, 0, 0);

	if (!create)
		return c;
	/*
	 * Not anchored while quiet: that mm's counters are not followed.
	 * Once followed, a thread that knew no anchor (its cached mm is not
	 * this one) makes sure of one before its change.
	 */
	if ((!c || c->mm_key != (__u64)mm_of(task)) && tgid_changes_followed(task->tgid))
		anchor_mm(ptr_bits(mm_of(task)), task->tgid);
	if (c)
		return c;
	return bpf_task_storage_get(&thread_ctxs, task, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The same for current, NULL when it is not traced. */
static __always_inline struct thread_ctx *ctx_get(bool create)
{
	struct task_struct *task = bpf_get_current_task_btf();

	/* Untraced: one load, and out. */
	if (!tgid_accounted(task->tgid))
		return NULL;
	return task_ctx(task, create);
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

/*
 * A thread's run in progress, one word of its context (of RUN_SLOTS), so
 * that it is taken whole with one exchange: by the thread itself, or by
 * ma_flush_runs or another thread (end_other_runs) on another CPU.
 *   bits 63..28  its first page number (addresses below 2^48)
 *   bits 27..26  member
 *   bits 25..14  its process's slot in fault_epoch when it began
 *   bits 13..0   pages, at least 1: a run in progress is never 0
 */
#define RUN_PAGE_SHIFT		28
#define RUN_MEMBER_SHIFT	26
#define RUN_EPOCH_SHIFT		14
#define RUN_MAX_PAGES		((1ULL << RUN_EPOCH_SHIFT) - 1)
#define RUN_EPOCH_MASK		((1ULL << FAULT_EPOCH_BITS) - 1)

static __always_inline void emit_run(__u32 tgid, __u32 tid, __u64 run)
{
	struct ev_run *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(tgid);
		return;
	}
	fill_header(&e->h, EV_RUN, tgid);
	e->h.tid = tid;
	e->addr = (run >> RUN_PAGE_SHIFT) << page_shift;
	e->npages = run & RUN_MAX_PAGES;
	e->member = (run >> RUN_MEMBER_SHIFT) & 3;
	e->epoch = (run >> RUN_EPOCH_SHIFT) & RUN_EPOCH_MASK;
	e->pad = 0;
	bpf_ringbuf_submit(e, rss_wakeup());
}

struct runs_walk {
	struct thread_ctx *c;
	__u32 tgid, tid;
};

/* bpf_loop callback: slot i's run, if any, goes out. */
static long end_slot(__u32 i, struct runs_walk *w)
{
	__u64 *slot = &w->c->runs[i & (RUN_SLOTS - 1)];
	__u64 run;

	if (!*slot)
		return 0;
	run = __sync_lock_test_and_set(slot, 0);
	if (run)
		emit_run(w->tgid, w->tid, run);
	return 0;
}

/*
 * The thread's runs, if it has any, go out now. A loop the verifier checks
 * once, not RUN_SLOTS copies in every program that ends runs (most of their
 * load time).
 */
static __always_inline void end_runs(struct thread_ctx *c, __u32 tgid, __u32 tid)
{
	struct runs_walk w = { .c = c, .tgid = tgid, .tid = tid };

	bpf_loop(RUN_SLOTS, end_slot, &w, 0);
}

/* run grown by page (next to it, same member and epoch, not full), else 0. */
static __always_inline __u64 run_grown(__u64 run, __u64 page, __u32 member, __u64 epoch)
{
	__u64 first = run >> RUN_PAGE_SHIFT;

	if (((run >> RUN_EPOCH_SHIFT) & RUN_EPOCH_MASK) != epoch ||
	    ((run >> RUN_MEMBER_SHIFT) & 3) != member || (run & RUN_MAX_PAGES) == RUN_MAX_PAGES)
		return 0;
	if (page == first + (run & RUN_MAX_PAGES))
		return run + 1;					/* the page above */
	if (page + 1 == first)
		return run - (1ULL << RUN_PAGE_SHIFT) + 1;	/* the page below */
	return 0;
}

/*
 * A fault added one page of member at addr: it joins one of the thread's
 * runs if the page is next to it, else it begins one, in a free slot, else
 * in one whose run is of an older epoch, else in the next slot in turn,
 * whose run goes out. False when it cannot be in a run (a read of the
 * process's figures is in progress, an address above 2^48): then it goes
 * out alone.
 */
static __always_inline bool fault_into_run(struct thread_ctx *c, __u32 tgid, __u32 tid,
					   __u32 member, __u64 addr)
{
	__u64 page = addr >> page_shift, epoch, run, grown;
	__u32 slot;

	epoch = fault_epoch[tgid & (FAULT_EPOCH_SLOTS - 1)];
	if ((epoch & 1) || (page >> (64 - RUN_PAGE_SHIFT)))
		return false;
	epoch &= RUN_EPOCH_MASK;
	/*
	 * The picks go to memory, not registers: the verifier does not track
	 * values there, so the loop's paths meet again at each slot instead of
	 * multiplying by every (free, stale) pair (most of ma_rss_stat's
	 * verification time, before).
	 */
	c->free_run = RUN_NO_SLOT;
	c->stale_run = RUN_NO_SLOT;
	for (int i = 0; i < RUN_SLOTS; i++) {
		run = c->runs[i];
		if (!run) {
			c->free_run = i;
			continue;
		}
		grown = run_grown(run, page, member, epoch);
		/* Fails only when a flush took the run meanwhile. */
		if (grown && __sync_val_compare_and_swap(&c->runs[i], run, grown) == run)
			return true;
		if (((run >> RUN_EPOCH_SHIFT) & RUN_EPOCH_MASK) != epoch)
			c->stale_run = i;
	}
	slot = c->free_run;
	if (slot == RUN_NO_SLOT)
		slot = c->stale_run;
	if (slot == RUN_NO_SLOT)
		slot = c->run_victim++;
	run = __sync_lock_test_and_set(&c->runs[slot & (RUN_SLOTS - 1)],
				       page << RUN_PAGE_SHIFT | (__u64)member << RUN_MEMBER_SHIFT |
				       epoch << RUN_EPOCH_SHIFT | 1);
	if (run)
		emit_run(tgid, tid, run);
	return true;
}

/*
 * The memory syscalls, where fentry is refused (this host), each through
 * its own syscalls:sys_enter_<name> and sys_exit_<name> tracepoint: the
 * kernel tests the syscall's bit before it runs any program, so every
 * other syscall of every process on the node pays only the
 * syscall-tracepoint slow path (its cost: BENCHMARKS.md), not a program
 * run at its entry and exit (raw sys_enter/sys_exit). Where fentry loads
 * and attaches, the same bodies run from each call's own function instead
 * (MEMORY_CALL, below), and no syscall pays that slow path.
 *
 * One program serves every entry, and one every exit (user space attaches
 * them to each call's tracepoints): the verifier's time is most of the
 * tool's start, and eleven copies of each cost it eleven times. The record
 * of syscalls:sys_enter_<name> (the kernel's struct syscall_trace_enter)
 * holds the syscall number, then only that syscall's own arguments: a
 * program reading past them is refused at attach (EACCES), so the shared
 * one reads only the number there and the arguments from the registers the
 * syscall came with, as the kernel's own syscall_get_arguments() does.
 */
struct syscall_enter_rec {
	struct trace_entry ent;
	int nr;
};

struct syscall_exit_rec {
	struct trace_entry ent;
	int nr;
	long ret;
};

#define MEMATTR_MAP_FIXED	0x10
#define MEMATTR_SHM_REMAP	040000

/*
 * A call that can take pages away: the runs made before it must be handled
 * before it, or a run could come after its region is gone. Any other call
 * leaves them to grow on (a heap grown by brk, then filled): a run's pages
 * go to the regions that hold them whenever it arrives. brk is the break
 * before the call.
 */
static __always_inline bool takes_memory(long nr, const __u64 *args, __u64 brk)
{
	switch (nr) {
	case NR_MUNMAP:
	case NR_MREMAP:
	case NR_MADVISE:
	case NR_SHMDT:
		return true;
	case NR_BRK:
		return args[0] && args[0] < brk;	/* a trim; 0 only asks */
	case NR_MMAP:
		return args[3] & MEMATTR_MAP_FIXED;	/* placed over what was there */
	case NR_SHMAT:
		return args[2] & MEMATTR_SHM_REMAP;
	}
	return false;
}

#define MEMATTR_MAP_TYPE	0x0f
#define MEMATTR_MAP_PRIVATE	0x02
#define MEMATTR_MAP_ANONYMOUS	0x20
#define NAME_BYTES		96

struct so_search {
	char name[NAME_BYTES];
	bool found;
};

/* bpf_loop callback: does ".so" begin at character i? Stops at the name's end. */
static long so_at(__u32 i, struct so_search *s)
{
	if (i >= NAME_BYTES - 2 || !s->name[i])
		return 1;
	s->found = s->name[i] == '.' && s->name[i + 1] == 's' && s->name[i + 2] == 'o';
	return s->found;
}

/*
 * Whether the file the current task has open as fd is a shared object:
 * ".so" in its name, the test user space classifies paths by (a longer
 * name is not: its stack goes along). A global function, its search a
 * bpf_loop: the verifier walks them once, not each character on every path
 * through ma_sys_enter (a third of its verification).
 */
__noinline int fd_is_shared_object(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct so_search s = {};
	const unsigned char *name;
	struct file *f = NULL;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f)
		return false;
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(s.name, sizeof(s.name), name) <= 0)
		return false;
	bpf_loop(NAME_BYTES, so_at, &s, 0);
	return s.found;
}

/* EV_SYSCALL_* of a call about to run. */
static __always_inline __u32 syscall_flags(struct task_struct *task, long nr, const __u64 *args)
{
	__u32 tgid = task->tgid;
	struct traced_proc *tp;

	if (nr != NR_MMAP || (args[3] & MEMATTR_MAP_ANONYMOUS) ||
	    (args[3] & MEMATTR_MAP_TYPE) != MEMATTR_MAP_PRIVATE)
		return 0;
	tp = bpf_map_lookup_elem(&traced, &tgid);
	if (tp && (tp->flags & TRACED_UNDER_RANK) && fd_is_shared_object((long)(int)args[4]))
		return EV_SYSCALL_SHARED_OBJECT;
	return 0;
}

/* bpf_find_vma callback: where the mapping found ends. */
static long vma_end(struct task_struct *task, struct vm_area_struct *vma, __u64 *end)
{
	*end = vma->vm_end;
	return 0;
}

/* The end of current's mapping at addr; 0 when the mapping lock was busy. */
static __always_inline __u64 mapping_end(__u64 addr)
{
	__u64 end = 0;

	bpf_find_vma(bpf_get_current_task_btf(), addr, vma_end, &end, 0);
	return end;
}

/*
 * A SysV segment's length, which neither call's arguments give: from addr,
 * the segment's start (shmat's result, shmdt's argument), to the end of
 * its mapping. 0 when that could not be read: user space then learns it
 * from its next read of maps.
 */
static __always_inline __u64 segment_length(__u64 addr)
{
	__u64 end = mapping_end(addr);

	return end > addr ? end - addr : 0;
}

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;

/*
 * The runs of the other threads of task's process go out too: one thread
 * may give back what another has just touched (a worker fills a block,
 * the main thread frees it), and a run that came after the region it was
 * made in is gone could not be placed.
 */
static __always_inline void end_other_runs(struct task_struct *task)
{
	struct bpf_iter_task it;
	struct task_struct *t;

	/* Without task iterators no thread keeps runs (runs_possible). */
	if (!have_task_iter() || read_only(task, struct task_struct)->signal->nr_threads < 2)
		return;
	bpf_iter_task_new(&it, task, BPF_TASK_ITER_PROC_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		struct thread_ctx *c = bpf_task_storage_get(&thread_ctxs, t, 0, 0);

		if (c)
			end_runs(c, t->tgid, t->pid);
	}
	bpf_iter_task_destroy(&it);
}

/* How many arguments each call takes: the registers past them are not its. */
static __always_inline int syscall_nargs(long nr)
{
	switch (nr) {
	case NR_MMAP:
		return 6;
	case NR_MREMAP:
		return 5;
	case NR_MPROTECT:
	case NR_MADVISE:
	case NR_MLOCK2:
	case NR_SHMAT:
		return 3;
	case NR_MUNMAP:
	case NR_MLOCK:
		return 2;
	}
	return 1;
}

/*
 * The runs of every thread of the current process go out. A global
 * function: the verifier checks it once, not once for every way of
 * reaching it (each memory syscall's path through ma_sys_enter).
 */
__noinline int end_process_runs(struct thread_ctx *c)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!c)
		return 0;
	end_runs(c, task->tgid, task->pid);
	end_other_runs(task);
	return 0;
}

static __always_inline int syscall_enter(long nr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_ctx *c = ctx_get(true);
	struct pt_regs *regs;

	if (!c)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	c->nr = nr;
	syscall_args(c->args, regs, syscall_nargs(nr));
	/*
	 * Read back from memory, where the verifier does not follow it: the
	 * paths through syscall_nargs's switch, one per number, meet again
	 * here instead of each walking the rest. Not in the fentry programs,
	 * whose number is a constant: the compiler keeps only that call's
	 * path, and the verifier walks only it.
	 */
	if (!__builtin_constant_p(nr))
		nr = READ_ONCE(c->nr);
	if (nr == NR_BRK)
		c->brk_before = BPF_CORE_READ(task, mm, brk);
	if (takes_memory(nr, c->args, c->brk_before))
		end_process_runs(c);
	c->kind = CTX_SYSCALL;
	c->sys_flags = syscall_flags(task, nr, c->args);
	c->user_sp = user_sp(regs);
	if (nr == NR_SHMDT)
		c->args[1] = segment_length(c->args[0]);
	__builtin_memset(c->delta, 0, sizeof(c->delta));
	c->changed_ns = 0;
	__builtin_memset(c->by_read, 0, sizeof(c->by_read));
	c->first_epoch = READ_ONCE(fault_epoch[task->tgid & (FAULT_EPOCH_SLOTS - 1)]);
	return 0;
}

#define MEMATTR_PROT_WRITE	2
#define MEMATTR_PROT_EXEC	4

/*
 * The calls whose record carries the stack, so user space can find the code
 * that asked: memory requests, and mremap (realloc's growth: when an smaps
 * read overtakes its record, the moved mapping's old owner is gone from the
 * region table and only the stack can say whose it is). Not a break that
 * shrank or stayed (glibc trims its heap after frees), nor an mprotect that
 * makes nothing writable, nor a library mapped (EV_SYSCALL_SHARED_OBJECT):
 * user space gives those no owner from the stack, and the stack copy is
 * most of what a request costs.
 */
static __always_inline bool wants_stack(const struct thread_ctx *c, long ret)
{
	if (c->sys_flags & EV_SYSCALL_SHARED_OBJECT)
		return false;
	switch (c->nr) {
	case NR_MMAP:
	case NR_MREMAP:
	case NR_SHMAT:
		return true;
	case NR_BRK:
		return (__u64)ret > c->brk_before;
	case NR_MPROTECT:
		return c->args[2] & MEMATTR_PROT_WRITE;
	}
	return false;
}

/*
 * Code mapped (a library loaded, the uprobes of the opt-in modes to place,
 * classification to redo): user space is woken at once. The rest waits for
 * the next sample, like the RSS records: waking the reader on every request
 * costs the requesting thread an interrupt (a VM exit in a virtual machine).
 */
static __always_inline __u64 syscall_wakeup(const struct thread_ctx *c)
{
	if (prompt_wakeup && (c->nr == NR_MMAP || c->nr == NR_MPROTECT) &&
	    (c->args[2] & MEMATTR_PROT_EXEC))
		return BPF_RB_FORCE_WAKEUP;
	return rss_wakeup();
}

/*
 * Above the process's first stack pointer (mm->start_stack, where argc is)
 * the main stack holds argv, the environment and the auxiliary vector, no
 * frame: _start's own return slot is just below it. A copy stops there.
 */
#define FRAMES_END_SLACK	16

/*
 * Copy the top of the user stack: up to MEMATTR_STACK_BYTES, but not past
 * the end of the stack's mapping, nor on the main stack past its frames
 * (a rank's environment alone is several KiB), in one read. A read that
 * crosses the end fails whole, so without the bound (the mapping lock was
 * busy) the copy goes chunk by chunk, and a stack shallower than the whole
 * copy (a thread near its top) still gives what it has.
 */
static __always_inline void copy_stack(struct ev_syscall *e, __u64 sp)
{
	__u64 end = mapping_end(sp), len;
	__u64 frames_end = mm_of(bpf_get_current_task_btf())->start_stack + FRAMES_END_SLACK;

	/* sp on the main stack (its mapping holds start_stack too): frames only. */
	if (sp < frames_end && frames_end < end)
		end = frames_end;
	e->stack_len = 0;
	if (end > sp) {
		len = end - sp;
		if (len > MEMATTR_STACK_BYTES)
			len = MEMATTR_STACK_BYTES;
		len &= MEMATTR_STACK_BYTES * 2 - 1;	/* a bound the verifier can see */
		if (len && !bpf_probe_read_user(e->stack, len, (void *)sp)) {
			e->stack_len = len;
			return;
		}
	}
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

static __always_inline int syscall_exit(long ret)
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
	if (c->nr == NR_SHMAT)
		c->args[1] = ret < 0 && ret > -4096 ? 0 : segment_length(ret);

	with_stack = wants_stack(c, ret);
	if (with_stack)
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	else
		e = bpf_ringbuf_reserve(&events, EV_SYSCALL_NOSTACK_SIZE, 0);
	if (!e) {
		count_drop(bpf_get_current_pid_tgid() >> 32);
		return 0;
	}
	fill_header(&e->h, EV_SYSCALL, bpf_get_current_pid_tgid() >> 32);
	e->nr = c->nr;
	__builtin_memcpy(e->args, c->args, sizeof(e->args));
	e->ret = ret;
	__builtin_memcpy(e->delta, c->delta, sizeof(e->delta));
	e->changed_ns = c->changed_ns;
	__builtin_memcpy(e->by_read, c->by_read, sizeof(e->by_read));
	__builtin_memcpy(e->read_epoch, c->read_epoch, sizeof(e->read_epoch));
	e->first_epoch = c->first_epoch;
	__builtin_memset(e->pad2, 0, sizeof(e->pad2));
	e->user_sp = c->user_sp;
	e->mpi_fn = c->mpi_fn;
	e->stack_len = 0;
	e->nret = 0;
	e->flags = c->sys_flags;
	/* The code that asked for the memory is on this stack: user space finds it there. */
	if (with_stack) {
		unwind_regs(&e->regs, (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()));
		copy_stack(e, c->user_sp);
		copy_hijacked(e);
	}
	bpf_ringbuf_submit(e, syscall_wakeup(c));
	return 0;
}

/* Attached by user space to the tracepoints of the calls its NR_* handling knows. */
SEC("tracepoint")
int ma_sys_enter(struct syscall_enter_rec *ctx)
{
	return syscall_enter(ctx->nr);
}

SEC("tracepoint")
int ma_sys_exit(struct syscall_exit_rec *ctx)
{
	return syscall_exit(ctx->ret);
}

/*
 * The same two bodies at the memory syscalls' own functions, as fentry and
 * fexit programs where the kernel allows them (BTF trampolines; the loader
 * probes it once at start: bpf_loader.c, syscall_hooks). Then no syscall
 * tracepoint is registered, and no syscall of any process takes the
 * kernel's traced path: a process not traced pays only a trampoline and
 * ctx_get's one test on its own memory calls. A tracing program is bound to
 * its function when it is loaded, so each call has its own pair, passing its
 * number (memattr.h's NR_*, which syscall_enter reads the arguments by).
 * The loader loads either these or ma_sys_enter/ma_sys_exit, never both.
 */
#define MEMORY_CALL(name, nr)						\
SEC("fentry/" SYSCALL_FN(name))						\
int BPF_PROG(ma_fe_##name)						\
{									\
	return syscall_enter(nr);					\
}									\
									\
SEC("fexit/" SYSCALL_FN(name))						\
int BPF_PROG(ma_fx_##name, const struct pt_regs *regs, long ret)	\
{									\
	return syscall_exit(ret);					\
}

/* In the order of bpf_loader.c's memory_syscalls[]. */
MEMORY_CALL(mmap, NR_MMAP)
MEMORY_CALL(mprotect, NR_MPROTECT)
MEMORY_CALL(munmap, NR_MUNMAP)
MEMORY_CALL(brk, NR_BRK)
MEMORY_CALL(mremap, NR_MREMAP)
MEMORY_CALL(madvise, NR_MADVISE)
MEMORY_CALL(mlock, NR_MLOCK)
MEMORY_CALL(mlockall, NR_MLOCKALL)
MEMORY_CALL(mlock2, NR_MLOCK2)
MEMORY_CALL(shmat, NR_SHMAT)
MEMORY_CALL(shmdt, NR_SHMDT)

/*
 * The fault's own address without a program at its entry. Every page fault
 * from user space enters the kernel at the top of its task's stack and
 * reaches the RSS counters through the same frames (exc_page_fault ...
 * __handle_mm_fault), so its struct vm_fault lies at one place in that
 * stack, which user space finds at start (ma_find_fault_frame) and sets
 * here. 0: not found; ma_fault_user then gives the address, as it does on
 * a kernel that lays its frames out otherwise. A change outside a user
 * fault (a kernel fault in a syscall, a stale frame) fails the checks: a
 * mapping of this mm that holds the address, and the page table lock the
 * fault holds while it changes the counter.
 */
__u32 fault_frame_pos;


static __always_inline __u64 frame_fault_addr(struct task_struct *task, struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	struct vm_fault *vmf;
	__u64 addr;

	/* Never set without the cast (the loader does not search then). */
	if (!fault_frame_pos || !have_rdonly_cast)
		return 0;
	vmf = bpf_rdonly_cast((void *)((__u64)task->stack + fault_frame_pos),
			      bpf_core_type_id_kernel(struct vm_fault));
	/*
	 * Words of this stack first: other frames there (a kernel fault's, in
	 * a syscall) are not taken for pointers, whose guarded loads would
	 * fault on garbage.
	 */
	addr = vmf->real_address;
	if (addr >= USER_ADDR_END || vmf->address != (addr & ~((1ULL << page_shift) - 1)))
		return 0;
	vma = vmf->vma;
	if (!vma || vma->vm_mm != mm || addr < vma->vm_start || addr >= vma->vm_end)
		return 0;
	if (!vmf->ptl || !vmf->ptl->rlock.raw_lock.val.counter)
		return 0;
	return addr;
}

/* Set by user space while it finds the frame: its own fault at this address. */
__u32 frame_probe_tgid;
__u64 frame_probe_addr;
__u32 frame_probe_pos;		/* the struct vm_fault found, from the stack's base */
__u32 frame_probe_hits;

struct frame_walk {
	struct mm_struct *mm;
	__u64 base, top;	/* the task's stack, and where its registers are */
};

/*
 * bpf_loop callback: is the word i below the registers the fault's
 * real_address, in a struct vm_fault of this fault (its page address, a
 * mapping of this mm)? Walked only while user space looks for the frame.
 */
static long frame_word(__u32 i, struct frame_walk *w)
{
	__u64 at = w->top - 8 * (i + 1), vmf_at, word = 0;
	struct vm_fault *vmf;

	bpf_probe_read_kernel(&word, sizeof(word), (void *)at);
	if (word != frame_probe_addr)
		return 0;
	vmf_at = at - bpf_core_field_offset(struct vm_fault, real_address);
	if (vmf_at < w->base)
		return 1;
	vmf = bpf_rdonly_cast((void *)vmf_at, bpf_core_type_id_kernel(struct vm_fault));
	if (vmf->address != (frame_probe_addr & ~((1ULL << page_shift) - 1)) ||
	    !vmf->vma || vmf->vma->vm_mm != w->mm)
		return 0;
	frame_probe_pos = vmf_at - w->base;
	frame_probe_hits++;
	return 0;
}

SEC("tp_btf/rss_stat")
int BPF_PROG(ma_find_fault_frame, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct frame_walk w = { .mm = mm };

	if (task->tgid != frame_probe_tgid || !frame_probe_addr || mm_of(task) != mm)
		return 0;
	w.base = stack_of(task);
	w.top = ptr_bits((void *)bpf_task_pt_regs(task));
	if (w.top <= w.base)
		return 0;
	bpf_loop((w.top - w.base) / 8, frame_word, &w, 0);
	return 0;
}

static __always_inline void note_fault(unsigned long address)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_ctx *c;

	/* Untraced or quiet: one load, and out. */
	if (!tgid_changes_followed(task->tgid))
		return;
	c = task_ctx(task, true);

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
	if (address >= USER_ADDR_END)
		return 0;
	note_fault(address);
	return 0;
}

static __always_inline void emit_rss(__u32 tgid, __u64 addr, __s64 delta,
				     __u32 member, __u32 kind, __u32 mpi_fn)
{
	struct ev_rss *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(tgid);
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

/*
 * A memory call moved a counter of its process. A long one (a heap trim
 * zapping 19 MB) can straddle reads of the process's figures: what it
 * moves is kept apart by the process's fault epoch, so user space takes
 * from each read only what came after it.
 */
static __always_inline void syscall_moved(struct thread_ctx *c, __u32 tgid, int member,
					  __s64 delta)
{
	__u32 epoch = READ_ONCE(fault_epoch[tgid & (FAULT_EPOCH_SLOTS - 1)]);
	__u32 i = epoch & (MEMATTR_READ_SLOTS - 1);

	/* A slot of an older epoch: its part joins the rest of delta. */
	if (c->read_epoch[i] != epoch) {
		c->read_epoch[i] = epoch;
		c->by_read[i] = 0;
	}
	c->by_read[i] += delta;
	c->delta[member & 3] += delta;
	c->changed_ns = bpf_ktime_get_boot_ns();
}

/*
 * An RSS counter of mm moved on this CPU. Raw tracepoint: the kernel hands
 * over (mm, member) and nothing else; the change is computed from the
 * counter as described at struct mm_anchor.
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(ma_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_ctx *c = NULL;
	__u64 key = (__u64)mm;
	struct percpu_counter *fbc;
	struct mm_anchor *a;
	struct mm_slots *sl;
	__s64 cnt, delta;
	bool curr = task->mm == mm;	/* trusted: the hot path, no cast's moves */
	__u64 addr;
	__s32 slot;
	__u32 id;

	/* The common case, a process's own change: untraced (or quiet) costs one load. */
	if (curr && !tgid_changes_followed(task->tgid))
		return 0;
	if (member < 0 || member >= MEMATTR_NR_MEMBERS)
		return 0;
	if (curr)
		c = bpf_task_storage_get(&thread_ctxs, task, 0, 0);
	a = mm_of_id(c, key, &id);
	if (!a) {
		/* Learn mm -> process only from the process itself. */
		if (curr)
			anchor_mm(ptr_bits(mm), task->tgid);
		return 0;
	}
	if (!curr && (!tgid_accounted(a->tgid) || task->tgid == a->tgid)) {
		/*
		 * The process is gone, or this is its own old mm torn down by
		 * its exit or exec: that mm is no one's any more.
		 */
		forget_mm(key, a->tgid);
		return 0;
	}
	if (old_rss_counters()) {
		/* One atomic counter: its change since the last event, whoever made it. */
		if (!old_rss_count(key, member, &cnt))
			return 0;
		delta = cnt - __sync_lock_test_and_set(&a->count[member & 3], cnt);
	} else {
		sl = bpf_map_lookup_elem(&mm_cpu_slots, &id);
		if (!sl)
			return 0;
		fbc = rss_counter(mm, member);
		cnt = fbc->count;
		slot = rss_slot(fbc, -1);
		/*
		 * The shared count moves only when a slot is folded into it:
		 * most changes leave it as last seen, and then the exchange, a
		 * write to a line every thread of the process shares, is
		 * skipped (a value another CPU writes meanwhile is caught up by
		 * the next change's exchange).
		 */
		delta = 0;
		if (READ_ONCE(a->count[member & 3]) != cnt)
			delta = cnt - __sync_lock_test_and_set(&a->count[member & 3], cnt);
		delta += slot - sl->slot[member & 3];
		sl->slot[member & 3] = slot;
	}
	if (!delta)
		return 0;
	delta <<= page_shift;
	if (!curr) {
		/* Another task changed this mm: reclaim, fork copying, ... */
		count(STAT_NO_CTX_RSS);
		emit_rss(a->tgid, 0, delta, member, CTX_NONE, 0);
		return 0;
	}
	if (task->flags & PF_EXITING)
		return 0;	/* teardown: the process's last sample stands */
	if (c && c->kind == CTX_SYSCALL) {
		syscall_moved(c, task->tgid, member, delta);
		return 0;
	}
	addr = frame_fault_addr(task, mm);
	/* What a program at a fault's entry noted: a kernel fault's, or every fault's without a frame. */
	if (c && c->kind == CTX_FAULT) {
		if (addr)
			c->kind = CTX_NONE;	/* a user fault's own frame: that note is stale */
		else
			addr = c->addr;
	}
	if (addr) {
		if (!c)
			c = bpf_task_storage_get(&thread_ctxs, task, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
		/* A page at a time, outside an MPI call (--mpi-calls): into a run. */
		if (!c || !runs_possible() || delta != (1LL << page_shift) || c->mpi_fn ||
		    !fault_into_run(c, a->tgid, task->pid, member, addr))
			emit_rss(a->tgid, addr, delta, member, CTX_FAULT, c ? c->mpi_fn : 0);
		return 0;
	}
	count(STAT_NO_CTX_RSS);
	emit_rss(a->tgid, 0, delta, member, c ? c->kind : CTX_NONE, c ? c->mpi_fn : 0);
	return 0;
}

/*
 * The RSS high-water mark of p's process, in bytes, as /proc computes
 * VmHWM: the most of hiwater_rss (raised by the kernel before it unmaps)
 * and the counters now (file, anon, shmem; swap is not resident). Read at
 * the last thread's exit, while p still has its mm (Linux 6.16 on), else
 * the signal's maxrss that do_exit set from the same figures.
 */
static __always_inline __u64 exit_hwm(struct task_struct *p, __u32 *from)
{
	struct mm_struct *mm = mm_of(p);
	__u64 pages = 0, rss = 0;

	if (!mm) {
		*from = HWM_FROM_MAXRSS;
		return (__u64)BPF_CORE_READ(p, signal, maxrss) << page_shift;
	}
	*from = HWM_FROM_MM;
	pages = BPF_CORE_READ(mm, hiwater_rss);
	for (int m = 0; m < MEMATTR_NR_MEMBERS; m++) {
		__s64 v = 0;

		if (m == 2)
			continue;	/* MM_SWAPENTS */
		if (old_rss_counters()) {
			if (!old_rss_count(ptr_bits(mm), m, &v))
				v = 0;
		} else {
			bpf_core_read(&v, sizeof(v), &rss_counter(mm, m)->count);
		}
		if (v > 0)
			rss += v;
	}
	return (rss > pages ? rss : pages) << page_shift;
}

static __always_inline void emit_task(__u32 type, __u32 tgid, struct task_struct *p,
				      __u32 parent, bool prompt)
{
	struct ev_task *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop(tgid);
		return;
	}
	fill_header(&e->h, type, tgid);
	e->child_tgid = type == EV_FORK ? p->tgid : 0;
	e->parent_tgid = parent;
	e->hwm_from = 0;
	e->pad = 0;
	e->hwm = type == EV_EXIT ? exit_hwm(p, &e->hwm_from) : 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	bpf_ringbuf_submit(e, prompt ? BPF_RB_FORCE_WAKEUP : rss_wakeup());
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ma_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct traced_proc *tp, ntp;
	bool quiet;

	if (ctgid == ptgid)
		return 0;	/* a new thread: covered by its tgid */
	tp = bpf_map_lookup_elem(&traced, &ptgid);
	if (!tp || !(tp->flags & TRACED_FOLLOW))
		return 0;
	ntp.job = tp->job;
	ntp.flags = TRACED_FOLLOW | TRACED_ACCOUNT;
	if (tp->flags & (TRACED_RANK | TRACED_UNDER_RANK))
		ntp.flags |= TRACED_UNDER_RANK;
	/*
	 * A rank's command is quiet until user space first reads it; a child
	 * sharing its parent's mm (vfork) is as its parent, since the
	 * changes it makes are to that mm.
	 */
	if (mm_of(child) == mm_of(parent))
		quiet = (tgid_bits(ptgid) & TB_QUIET) != 0;
	else
		quiet = ntp.flags & TRACED_UNDER_RANK;
	if (bpf_map_update_elem(&traced, &ctgid, &ntp, BPF_ANY)) {
		count(STAT_TRACED_FULL);
		return 0;
	}
	tgid_bits_clear(ctgid, TB_ACCOUNTED | TB_QUIET);
	tgid_bits_or(ctgid, TB_ACCOUNTED | (quiet ? TB_QUIET : 0));
	/* Its counters hold what fork copied: the child's deltas start from there. */
	if (!quiet)
		anchor_mm(ptr_bits(mm_of(child)), ctgid);
	emit_task(EV_FORK, ptgid, child, ptgid, prompt_wakeup);
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

/* The runs of p (the current task, or one a task iterator hands over), if any. */
static __always_inline void end_own_runs(struct task_struct *p)
{
	struct thread_ctx *c = bpf_task_storage_get(&thread_ctxs, p, 0, 0);

	if (c)
		end_runs(c, p->tgid, p->pid);
}

/*
 * A memory call of p in progress that has moved its counters already:
 * what it moved so far, for the sample whose VmRSS read came after.
 */
static __always_inline void report_call_in_flight(struct task_struct *p, struct thread_ctx *c)
{
	struct ev_syscall *e;

	if (c->kind != CTX_SYSCALL || !c->changed_ns)
		return;
	e = bpf_ringbuf_reserve(&events, EV_SYSCALL_NOSTACK_SIZE, 0);
	if (!e) {
		count_drop(p->tgid);
		return;
	}
	fill_header(&e->h, EV_SYSCALL, p->tgid);
	e->h.tid = p->pid;
	e->nr = c->nr;
	__builtin_memcpy(e->args, c->args, sizeof(e->args));
	e->ret = 0;
	__builtin_memcpy(e->delta, c->delta, sizeof(e->delta));
	e->changed_ns = c->changed_ns;
	__builtin_memcpy(e->by_read, c->by_read, sizeof(e->by_read));
	__builtin_memcpy(e->read_epoch, c->read_epoch, sizeof(e->read_epoch));
	e->first_epoch = c->first_epoch;
	__builtin_memset(e->pad2, 0, sizeof(e->pad2));
	e->user_sp = 0;
	e->nret = 0;
	e->flags = EV_SYSCALL_IN_FLIGHT;
	e->stack_len = 0;
	e->mpi_fn = 0;
	bpf_ringbuf_submit(e, 0);
}

/*
 * Run by user space (read of an iterator) before it drains the ring buffer
 * for a sample: every thread's run in progress goes out, so that a thread
 * that stopped faulting does not keep its pages from the sample; and so
 * does what a memory call in progress has freed so far.
 */
SEC("iter/task")
int ma_flush_runs(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct thread_ctx *c;

	if (!task || !tgid_accounted(task->tgid))
		return 0;
	c = bpf_task_storage_get(&thread_ctxs, task, 0, 0);
	if (!c)
		return 0;
	end_runs(c, task->tgid, task->pid);
	report_call_in_flight(task, c);
	return 0;
}

/* exec_may_be_job: which untraced execs the node service is told of. */
#include "exec_filter.h"

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ma_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct traced_proc *tp;
	struct mode_owner *o;

	tp = bpf_map_lookup_elem(&traced, &tgid);
	if (!tp) {
		/*
		 * The node service joins it to its job before it forks the
		 * ranks; an exec that cannot be a job's is not its business.
		 */
		if (exec_filter && watch_exec && exec_may_be_job(p))
			emit_task(EV_EXEC, tgid, p, 0, true);
		return 0;
	}
	if (tgid_accounted(tgid)) {
		/* The old image's last faults, before the exec's record. */
		end_own_runs(p);
		emit_task(EV_EXEC, tgid, p, 0, prompt_wakeup);
		/* A rank's command starts quiet (TB_QUIET), its new mm not followed. */
		if (tp->flags & TRACED_UNDER_RANK)
			tgid_bits_or(tgid, TB_QUIET);
		else
			anchor_mm(ptr_bits(mm_of(p)), tgid);
	} else {
		emit_task(EV_EXEC, tgid, p, 0, prompt_wakeup);
	}
	/*
	 * The opt-in modes' state of the old image is not the new program's:
	 * dropped here, before the new program runs a single instruction.
	 */
	o = bpf_map_lookup_elem(&mode_owners, &tgid);
	if (!o)
		return 0;
	if (o->blocks)
		bpf_for_each_map_elem(&heap_blocks, drop_block, &tgid, 0);
	if (o->sites)
		bpf_for_each_map_elem(&heap_sites, drop_site, &tgid, 0);
	if (o->calls)
		bpf_for_each_map_elem(&mpi_calls, drop_calls, &tgid, 0);
	bpf_map_delete_elem(&mode_owners, &tgid);
	return 0;
}

static __always_inline int task_exit(struct task_struct *p, bool group_dead)
{
	__u32 tgid = p->tgid;
	struct mode_owner *o;

	/* Every thread's last faults go out with it. */
	if (tgid_accounted(tgid))
		end_own_runs(p);
	if (!group_dead || !bpf_map_lookup_elem(&traced, &tgid))
		return 0;
	emit_task(EV_EXIT, tgid, p, 0, prompt_wakeup);
	/* Bits first: no program finds them set and the entry gone. */
	tgid_bits_clear(tgid, TB_ACCOUNTED | TB_QUIET);
	bpf_map_delete_elem(&traced, &tgid);
	if (mm_of(p))
		forget_mm((__u64)mm_of(p), tgid);
	/*
	 * --heap: its live blocks die with it (a later process may get its
	 * pid). Its sites and call counts stay for user space to collect.
	 */
	o = bpf_map_lookup_elem(&mode_owners, &tgid);
	if (o && o->blocks)
		bpf_for_each_map_elem(&heap_blocks, drop_block, &tgid, 0);
	if (o)
		bpf_map_delete_elem(&mode_owners, &tgid);
	return 0;
}

/*
 * sched_process_exit passes group_dead on newer kernels (6.18 here, not
 * 6.12): before, the tracepoint has the task alone, and a program reading
 * a second argument is refused. The loader loads the one that fits its
 * kernel (bpf_loader.c, probe_kernel).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ma_exit, struct task_struct *p, bool group_dead)
{
	return task_exit(p, group_dead);
}

/*
 * Without the argument: do_exit has counted the thread out of
 * signal->live before the tracepoint, so none left means the last thread.
 * A thread that reaches it after the last one's count sees none left too:
 * the traced entry is deleted once, by whichever comes first.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ma_exit_task, struct task_struct *p)
{
	return task_exit(p, !BPF_CORE_READ(p, signal, live.counter));
}

/*
 * The OOM killer chose a process. The classic tracepoint, not tp_btf: its
 * record starts with the victim's pid on every kernel (6.1 has nothing
 * else; 6.8 passes the task, which a raw program would have to be two
 * programs for), and it fires once a kill, so the record the kernel builds
 * costs nothing. It runs in the allocating task, often not the victim's.
 */
struct mark_victim_rec {
	struct trace_entry ent;
	int pid;
};

/*
 * The same kills by tgid, the time of each (boot clock): the victim can be
 * reaped, and found gone by a read of user space, before the ring's record
 * of its kill is read; user space then asks here before it retires it.
 * User space deletes what it read; a few kills at once at most are waiting.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} oom_marks SEC(".maps");

SEC("tracepoint")
int ma_oom_victim(struct mark_victim_rec *ctx)
{
	__u32 pid = ctx->pid;
	struct ev_oom *e;
	__u64 now;

	if (!tgid_accounted(pid))
		return 0;
	now = bpf_ktime_get_boot_ns();
	bpf_map_update_elem(&oom_marks, &pid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(pid);
		return 0;
	}
	fill_header(&e->h, EV_OOM, pid);
	e->h.ts_ns = now;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
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
	if (calls) {
		__sync_fetch_and_add(calls, 1);
	} else if (!bpf_map_update_elem(&mpi_calls, &key, &one, BPF_NOEXIST)) {
		struct mode_owner *o = mode_owner_of(key.tgid);

		if (o)
			o->calls = 1;
	}
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
	if (!bpf_map_delete_elem(&heap_blocks, &key)) {
		struct mode_owner *o = bpf_map_lookup_elem(&mode_owners, &tgid);

		if (o)
			__sync_fetch_and_add(&o->blocks, -1);
	}
}

static __always_inline void heap_record(__u32 tgid, __u64 ptr, __u64 size, __u64 site)
{
	struct heap_key key = { .tgid = tgid, .ptr = ptr };
	struct heap_block b = { .size = size, .site = site };
	struct site_key sk = { .tgid = tgid, .site = site };
	struct site_stats zero = {}, *s;
	struct mode_owner *o = mode_owner_of(tgid);

	/* Without its owner entry, exec and exit would not find the block. */
	if (!o || bpf_map_update_elem(&heap_blocks, &key, &b, BPF_NOEXIST)) {
		count(STAT_HEAP_FULL);
		return;
	}
	__sync_fetch_and_add(&o->blocks, 1);
	o->sites = 1;
	s = bpf_map_lookup_elem(&heap_sites, &sk);
	if (!s) {
		bpf_map_update_elem(&heap_sites, &sk, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&heap_sites, &sk);
		if (!s) {
			if (!bpf_map_delete_elem(&heap_blocks, &key))
				__sync_fetch_and_add(&o->blocks, -1);
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
	c->heap_site = entry_return_address(ctx);
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
