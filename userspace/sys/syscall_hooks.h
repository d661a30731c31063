/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How the memory syscalls' programs reach the calls on this kernel:
 * fentry/fexit on each call's own function where the kernel loads and
 * attaches them, else the per-call syscall tracepoints. Any syscall
 * tracepoint registered makes every syscall of every process on the node
 * take the kernel's traced path; fentry costs only the memory calls
 * themselves. Decided once per process (the kernel does not change under
 * it), at the first question.
 */
#ifndef MEMATTR_SYSCALL_HOOKS_H
#define MEMATTR_SYSCALL_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

/* The memory syscalls followed (memattr.h's NR_*). */
#define MEMORY_SYSCALLS		11

/*
 * Their names, as in their tracepoints (syscalls:sys_enter_mmap) and
 * functions (SYSCALL_FN_PREFIX "mmap"); memattr.bpf.c's MEMORY_CALL list
 * is in the same order.
 */
extern const char *const memory_syscalls[MEMORY_SYSCALLS];

#if defined(__x86_64__)
#define SYSCALL_FN_PREFIX	"__x64_sys_"	/* as bpf/arch.h's SYSCALL_FN */
#elif defined(__aarch64__)
#define SYSCALL_FN_PREFIX	"__arm64_sys_"
#else
#error "memattr-bpf: x86-64 or arm64 only (bpf/arch.h)"
#endif

/*
 * MEMATTR_SYSCALL_HOOKS is unset, "auto" or "tracepoints": 0; else -1
 * with err.
 */
int syscall_hooks_check(char *err, size_t errlen);

/* Whether the memory calls go through fentry/fexit (probed at the first call). */
bool syscall_hooks_fentry(void);

/*
 * The probe passed but the real fentry/fexit programs did not load (a
 * verifier that refuses what it accepted elsewhere), or their links did
 * not attach: the memory calls go through the tracepoints from now on, and
 * why says so.
 */
void syscall_hooks_fall_back(const char *why);

/*
 * Test only (tools/vmtest/vm_fentry_unattachable.sh): with
 * MEMATTR_TEST_FENTRY_UNATTACHABLE set, block(true) fills the last memory
 * call's fentry trampoline with empty programs of its own until the kernel
 * refuses one more link (E2BIG, its limit per function), as other tools'
 * programs could: the tool's own programs have loaded, the first calls'
 * links attach, that call's do not. block(false) releases them. Without
 * the variable: nothing.
 */
void syscall_hooks_test_block(bool on);

/*
 * The same in words for the user: "fentry/fexit on __x64_sys_*" (no
 * syscall tracepoint is registered) or "syscall tracepoints (<why fentry
 * is not used>)".
 */
const char *tracer_syscall_hooks(void);

#endif
