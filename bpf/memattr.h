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
#define MEMATTR_STACK_CHUNKS	8	/* ... up to this many: the first caller outside libc */
#define MEMATTR_STACK_BYTES	(MEMATTR_STACK_CHUNK * MEMATTR_STACK_CHUNKS)

enum ev_type {
	EV_RSS = 1,	/* one kmem:rss_stat change, charged to an address */
	EV_SYSCALL,	/* a memory syscall finished, with the RSS it moved */
	EV_FORK,	/* a traced process created a new process */
	EV_EXEC,	/* a traced process called execve */
	EV_EXIT,	/* the last thread of a traced process exited */
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
	__u32 pad;
	__u64 ts_ns;
};

struct ev_rss {
	struct ev_header h;
	__u64 addr;	/* fault address, 0 when ctx != CTX_FAULT */
	__s64 delta;	/* bytes */
	__u32 member;
	__u32 ctx;	/* enum rss_ctx */
};

struct ev_syscall {
	struct ev_header h;
	__u64 nr;
	__u64 args[6];
	__s64 ret;
	__s64 delta[MEMATTR_NR_MEMBERS];	/* bytes moved while inside the call */
	__u64 user_sp;
	__u32 stack_len;			/* valid bytes in stack[] */
	__u32 pad;
	/*
	 * Top of the user stack at entry, only for the calls that request
	 * memory (mmap, brk, mprotect): the record ends here for the others.
	 */
	__u8 stack[MEMATTR_STACK_BYTES];
};

#define EV_SYSCALL_NOSTACK_SIZE	offsetof(struct ev_syscall, stack)

struct ev_task {
	struct ev_header h;
	__u32 child_tgid;	/* EV_FORK */
	__u32 parent_tgid;	/* EV_FORK */
	__u64 start_ns;		/* task start_time (boot-based ns) of the process */
	char comm[16];
};

/* Per traced process, kept in the kernel. */
struct traced_proc {
	__u32 job;		/* job slot, so several jobs can share one BPF object */
	__u32 flags;		/* TRACED_* */
};

#define TRACED_ACCOUNT	1	/* send its memory events */
#define TRACED_FOLLOW	2	/* children it forks become traced */

/* Counters user space reads for the summary: lost events are reported, never hidden. */
enum stat_idx {
	STAT_RINGBUF_DROPS = 0,
	STAT_STACK_READ_FAIL,
	STAT_NO_CTX_RSS,
	STAT_TRACED_FULL,
	STAT_NR,
};

#endif
