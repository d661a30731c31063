/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the BPF programs read that differs by architecture: a syscall's
 * arguments and the user stack pointer in its registers, the registers an
 * unwinder starts from, the top of user space, and a uprobe's return
 * address at a function's entry. The syscall numbers are in memattr.h
 * (user space decodes them too). Built with -D__TARGET_ARCH_x86 or
 * -D__TARGET_ARCH_arm64 (Makefile, ARCH=).
 */
#ifndef MEMATTR_ARCH_H
#define MEMATTR_ARCH_H

#if defined(__TARGET_ARCH_x86)

/* 4-level page tables. */
#define USER_ADDR_END	(1ULL << 47)

/* A system call's own function (its fentry/fexit target): __x64_sys_mmap. */
#define SYSCALL_FN(name)	"__x64_sys_" #name

/* The syscall's arguments as it was made (syscall_get_arguments). */
static __always_inline void syscall_args(__u64 *args, const struct pt_regs *regs, int nargs)
{
	args[0] = regs->di;
	args[1] = nargs > 1 ? regs->si : 0;
	args[2] = nargs > 2 ? regs->dx : 0;
	args[3] = nargs > 3 ? regs->r10 : 0;
	args[4] = nargs > 4 ? regs->r8 : 0;
	args[5] = nargs > 5 ? regs->r9 : 0;
}

static __always_inline __u64 user_sp(const struct pt_regs *regs)
{
	return regs->sp;
}

/*
 * The registers a CFI unwinder starts from. A syscall changes none of them
 * (only rax, rcx, r11), so reading them at exit gives the values at entry.
 */
static __always_inline void unwind_regs(struct ev_regs *r, const struct pt_regs *regs)
{
	r->ip = regs->ip;
	r->sp = regs->sp;
	r->bp = regs->bp;
	r->bx = regs->bx;
	r->r12 = regs->r12;
	r->r13 = regs->r13;
	r->r14 = regs->r14;
	r->r15 = regs->r15;
}

/* At a function's entry (before any push) the return address is at the stack pointer. */
static __always_inline __u64 entry_return_address(struct pt_regs *ctx)
{
	__u64 ra = 0;

	bpf_probe_read_user(&ra, sizeof(ra), (void *)PT_REGS_SP(ctx));
	return ra;
}

#elif defined(__TARGET_ARCH_arm64)

/* 48-bit virtual addresses (Debian's arm64 kernels: ARM64_VA_BITS_48). */
#define USER_ADDR_END	(1ULL << 48)

/* A system call's own function (its fentry/fexit target): __arm64_sys_mmap. */
#define SYSCALL_FN(name)	"__arm64_sys_" #name

/* x0 is the return value by the exit: the first argument is kept in orig_x0. */
static __always_inline void syscall_args(__u64 *args, const struct pt_regs *regs, int nargs)
{
	args[0] = regs->orig_x0;
	for (int i = 1; i < 6; i++)
		args[i] = nargs > i ? regs->regs[i] : 0;
}

static __always_inline __u64 user_sp(const struct pt_regs *regs)
{
	return regs->sp;
}

/*
 * ev_regs is laid out for x86-64's unwinder: here the pc, sp and frame
 * pointer (x29); the link register (x30) goes in bx. User space's CFI
 * unwinder is x86-64 only (docs/operations.md, arm64).
 */
static __always_inline void unwind_regs(struct ev_regs *r, const struct pt_regs *regs)
{
	r->ip = regs->pc;
	r->sp = regs->sp;
	r->bp = regs->regs[29];
	r->bx = regs->regs[30];
	r->r12 = 0;
	r->r13 = 0;
	r->r14 = 0;
	r->r15 = 0;
}

/* At a function's entry the return address is in the link register. */
static __always_inline __u64 entry_return_address(struct pt_regs *ctx)
{
	return PT_REGS_RET(ctx);
}

#else
#error "memattr-bpf: build with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64"
#endif

#endif
