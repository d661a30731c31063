/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Records shared by the BPF programs (bpf/memattr.bpf.c) and the user-space
 * loader. Every record starts with struct ev_header so user space can switch
 * on the type before it knows the size.
 */
#ifndef MEMATTR_H
#define MEMATTR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* user space; BPF gets the types from vmlinux.h */
#include <stddef.h>
#endif

#define MEMATTR_NR_MEMBERS	4	/* MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES */
#define MEMATTR_STACK_CHUNK	512	/* the stack is copied chunk by chunk ... */
#define MEMATTR_STACK_CHUNKS	16	/* ... up to this many: the requester and the MPI entry */
#define MEMATTR_STACK_BYTES	(MEMATTR_STACK_CHUNK * MEMATTR_STACK_CHUNKS)
#define MEMATTR_MAX_HIJACKED	4	/* uretprobe-hijacked return addresses sent along */

/*
 * The environment variables a process names its job by, in the order user
 * space believes them (sys/procfs.c, job_keys[]). The kernel's exec filter
 * (bpf/exec_filter.h) reports an untraced exec only when its environment
 * holds one of them or its cgroup names a Slurm job: one list for both
 * sides, so the filter never drops an exec user space would have taken.
 */
#define MEMATTR_JOB_KEYS(X)	X(SLURM_JOB_ID) X(PBS_JOBID) X(LSB_JOBID) X(FLUX_JOB_ID) X(PMIX_NAMESPACE)

/*
 * The numbers of the memory syscalls followed (both sides use them), per
 * architecture: the BPF side is built with __TARGET_ARCH_<arch>, user
 * space sees its compiler's. shmat's record puts the segment's length in
 * args[1] of both calls (in place of its requested address, unused: the
 * call returns where it mapped it); SysV segments are MPICH's UCX's.
 */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define NR_MMAP		222	/* the generic table (asm-generic/unistd.h) */
#define NR_MPROTECT	226
#define NR_MUNMAP	215
#define NR_BRK		214
#define NR_MREMAP	216
#define NR_MADVISE	233
#define NR_MLOCK	228
#define NR_MLOCKALL	230
#define NR_MLOCK2	284
#define NR_SHMAT	196
#define NR_SHMDT	197
#elif defined(__x86_64__) || defined(__TARGET_ARCH_x86)
#define NR_MMAP		9
#define NR_MPROTECT	10
#define NR_MUNMAP	11
#define NR_BRK		12
#define NR_MREMAP	25
#define NR_MADVISE	28
#define NR_MLOCK	149
#define NR_MLOCKALL	151
#define NR_MLOCK2	325
#define NR_SHMAT	30
#define NR_SHMDT	67
#else
#error "memattr.h: the memory syscalls' numbers are known for x86-64 and arm64"
#endif

/*
 * ev_syscall.flags. A private mmap of a shared object (the loader mapping a
 * library) by a command a rank runs (TRACED_UNDER_RANK) comes without its
 * stack: the file's path names its owner, as it would overrule whoever
 * asked, and the stack copy is most of what the loader's requests cost a
 * job whose ranks run many short commands. A rank's own keep theirs: a
 * plugin MPI_Init loads is MPI_Init's growth, found on that stack.
 */
#define EV_SYSCALL_SHARED_OBJECT	1
/*
 * Not the call's record but what it has moved so far: a memory call still
 * in progress at a sample (a heap trim preempted on its way out), reported
 * by ma_flush_runs. Its own record still comes at its exit.
 */
#define EV_SYSCALL_IN_FLIGHT		2

enum ev_type {
	EV_RSS = 1,	/* one kmem:rss_stat change, charged to an address */
	EV_SYSCALL,	/* a memory syscall finished, with the RSS it moved */
	EV_FORK,	/* a traced process created a new process */
	EV_EXEC,	/* a traced process called execve */
	EV_EXIT,	/* the last thread of a traced process exited */
	EV_RUN,		/* a thread's faults on consecutive pages, one page each */
	EV_OOM,		/* the OOM killer chose a traced process (oom:mark_victim) */
};

/* What the thread was doing when the RSS counter moved. */
enum rss_ctx {
	CTX_NONE = 0,	/* no known cause (reclaim, another task, GUP in an untracked syscall) */
	CTX_FAULT,	/* a page fault at ev_rss.addr */
	CTX_SYSCALL,	/* inside a tracked memory syscall: folded into EV_SYSCALL */
	CTX_OTHER_SYSCALL, /* inside some other syscall: cause unknown */
};

struct ev_header {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 job;	/* traced_proc.job of tgid: user space routes the event by it */
	__u64 ts_ns;
};

/*
 * npages page faults of one thread, each adding one page of member, on the
 * pages [addr, addr + npages pages): one record for a loop that touches a
 * fresh array. No timestamp of its own: the faults all came within one
 * epoch of the process's slot in fault_epoch (see there), which says where
 * they stand against user space's reads of /proc.
 */
struct ev_run {
	struct ev_header h;	/* ts_ns: when the record was written */
	__u64 addr;
	__u32 npages;
	__u32 member;
	__u32 epoch;		/* FAULT_EPOCH_BITS bits */
	__u32 pad;
};

/*
 * The fault epochs: one counter per slot of tgids (tgid % FAULT_EPOCH_SLOTS),
 * stepped by user space around each read of a process's /proc figures: odd
 * while it reads. See fault_epoch in memattr.bpf.c.
 */
#define FAULT_EPOCH_SLOTS	(1 << 16)
#define FAULT_EPOCH_BITS	12
/* The epochs a memory call's changes are kept apart by (ev_syscall.by_read): a power of two. */
#define MEMATTR_READ_SLOTS	4

/*
 * Address spaces the kernel side follows at once (each traced process's
 * mm): ids in its per-mm arrays. A power of two.
 */
#define MM_IDS			4096

struct ev_rss {
	struct ev_header h;
	__u64 addr;	/* fault address, 0 when ctx != CTX_FAULT */
	__s64 delta;	/* bytes */
	__u32 member;
	__u32 ctx;	/* enum rss_ctx */
	__u32 mpi_fn;	/* --mpi-calls: the MPI call the thread is in (spec index + 1), 0: none */
	__u32 pad;
};

/* User registers of a memory request, for the unwinder. */
struct ev_regs {
	__u64 ip, sp, bp, bx, r12, r13, r14, r15;
};

struct ev_syscall {
	struct ev_header h;
	__u64 nr;
	__u64 args[6];
	__s64 ret;
	__s64 delta[MEMATTR_NR_MEMBERS];	/* bytes moved while inside the call */
	/*
	 * Boot time of the call's last counter change, 0: none. A call that
	 * outlives a read of the process's VmRSS (preempted on its way out)
	 * is placed against the read by its changes, not by its exit.
	 */
	__u64 changed_ns;
	/*
	 * A long call (a 64 MiB zap takes milliseconds) can straddle reads of
	 * its process's /proc figures, each while the process's fault epoch
	 * is odd (fault_epoch in memattr.bpf.c). What it moved at each of its
	 * last MEMATTR_READ_SLOTS epochs is by_read[i], at epoch
	 * read_epoch[i]; the rest of delta came before them, and after
	 * first_epoch, the epoch at the call's entry. User space places each
	 * part against its reads.
	 */
	__s64 by_read[MEMATTR_READ_SLOTS];
	__u16 read_epoch[MEMATTR_READ_SLOTS];
	__u16 first_epoch;
	__u16 pad2[3];
	__u64 user_sp;
	/*
	 * Return addresses any uretprobe (ours or another tracer's) replaced
	 * with the kernel's trampoline: the stack slot and the real address,
	 * innermost first. User space puts them back before scanning.
	 */
	__u64 ret_slot[MEMATTR_MAX_HIJACKED];
	__u64 ret_addr[MEMATTR_MAX_HIJACKED];
	__u32 nret;
	__u32 flags;				/* EV_SYSCALL_* */
	__u32 stack_len;			/* valid bytes in stack[] */
	__u32 mpi_fn;				/* as in ev_rss */
	/*
	 * Only for the calls that request memory (mmap, brk, mprotect): the
	 * record ends here for the others. The user registers at the call
	 * (those a CFI unwinder starts from: the callee-saved ones, ip, sp),
	 * then the top of the user stack at entry.
	 */
	struct ev_regs regs;
	__u8 stack[MEMATTR_STACK_BYTES];
};

#define EV_SYSCALL_NOSTACK_SIZE	offsetof(struct ev_syscall, regs)

struct ev_task {
	struct ev_header h;
	__u32 child_tgid;	/* EV_FORK */
	__u32 parent_tgid;	/* EV_FORK */
	char comm[16];
	/*
	 * EV_EXIT: the kernel's high-water mark of the process's RSS, bytes
	 * (0: not read), read as /proc's VmHWM is computed: the most of the
	 * mm's hiwater_rss and its counters now (HWM_FROM_MM). Where the
	 * tracepoint comes after the mm is released (before Linux 6.16:
	 * 6.1, 6.12), the signal's maxrss instead (HWM_FROM_MAXRSS): the
	 * same figure taken by do_exit, but the most of every image the
	 * process had (getrusage's ru_maxrss), those before an exec too.
	 */
	__u64 hwm;
	__u32 hwm_from;
	__u32 pad;
};

#define HWM_FROM_MM		1
#define HWM_FROM_MAXRSS		2

/*
 * EV_OOM: the header alone. h.tgid is the victim (the thread the kernel
 * names, its process's leader but for a leader gone before it), h.tid the
 * thread whose allocation made the kernel choose it, h.ts_ns the choice.
 */
struct ev_oom {
	struct ev_header h;
};

/* Per traced process, kept in the kernel. */
struct traced_proc {
	__u32 job;		/* job slot, so several jobs can share one BPF object */
	__u32 flags;		/* TRACED_* */
};

/* traced_bits: two bits per tgid (TB_*), sized for PID_MAX_LIMIT on 64-bit. */
#define TRACED_BITS_WORDS	((1 << 22) / 32)
#define TB_ACCOUNTED	1	/* TRACED_ACCOUNT: its memory events are sent */
/*
 * ... but not yet its RSS changes: a command a rank runs, until user space
 * first reads its smaps (which counts every page faulted before). Most
 * such commands are gone before that, and their faults were most of what
 * tracing them cost.
 */
#define TB_QUIET	2

#define TRACED_ACCOUNT	1	/* send its memory events */
#define TRACED_FOLLOW	2	/* children it forks become traced */
#define TRACED_RANK	4	/* an MPI rank */
/*
 * Started by a rank, or by a process so started: the commands a rank runs
 * (system(), popen()). Its libraries are mapped without a stack copy
 * (EV_SYSCALL_SHARED_OBJECT): no MPI call is on its stack to find.
 */
#define TRACED_UNDER_RANK	8

/*
 * --heap: the malloc family, told apart by the uprobe's cookie. What each
 * takes: the size (and, for realloc, the block it replaces).
 */
enum heap_kind {
	HEAP_NONE = 0,
	HEAP_MALLOC,		/* malloc(size), valloc(size), pvalloc(size) */
	HEAP_CALLOC,		/* calloc(n, size) */
	HEAP_REALLOC,		/* realloc(old, size) */
	HEAP_REALLOCARRAY,	/* reallocarray(old, n, size) */
	HEAP_MEMALIGN,		/* memalign(align, size), aligned_alloc(align, size) */
	HEAP_POSIX_MEMALIGN,	/* posix_memalign(&ptr, align, size) */
	HEAP_FREE,		/* free(ptr) */
};

/* A live heap block of a traced process. */
struct heap_key {
	__u32 tgid;
	__u32 pad;
	__u64 ptr;
};

struct heap_block {
	__u64 size;
	__u64 site;		/* return address of the malloc call */
};

/* One call site of the malloc family in one process. */
struct site_key {
	__u32 tgid;
	__u32 pad;
	__u64 site;
};

struct site_stats {
	__u64 calls;		/* allocations made here */
	__u64 frees;		/* of them, freed */
	__u64 total_bytes;	/* bytes ever asked for here */
	__s64 live_bytes;	/* asked for here and not freed */
	__s64 peak_bytes;	/* the most live_bytes has been */
};

/* --mpi-calls: outermost MPI calls per process and function. */
struct mpi_call_key {
	__u32 tgid;
	__u32 fn;		/* spec index + 1 */
};

/*
 * Records lost per job (job_drops in memattr.bpf.c), at the job slot
 * modulo this: user space reads a session's slot against what it held when
 * the session began, so a slot used again after this many jobs still
 * counts from 0. A power of two.
 */
#define JOB_DROP_SLOTS		1024

/* Counters user space reads for the summary: lost events are reported, never hidden. */
enum stat_idx {
	STAT_RINGBUF_DROPS = 0,
	STAT_STACK_READ_FAIL,
	STAT_NO_CTX_RSS,
	STAT_TRACED_FULL,
	STAT_HEAP_FULL,		/* live blocks not tracked: heap_blocks map full */
	STAT_EXEC_SKIPPED,	/* untraced execs with no job evidence: not reported */
	STAT_EXEC_UNDECIDED,	/* untraced execs the filter could not judge: reported */
	STAT_NR,
};

#endif
