// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A running thread's registers, read in a ptrace stop (thread_stop.h). */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "thread_stop.h"

static void take_regs(const struct user_regs_struct *u, struct thread_gprs *out)
{
#if defined(__x86_64__)
	const uint64_t r[] = { u->rax, u->rbx, u->rcx, u->rdx, u->rsi, u->rdi, u->rbp,
			       u->r8, u->r9, u->r10, u->r11, u->r12, u->r13, u->r14, u->r15 };
	unsigned int n = sizeof(r) / sizeof(r[0]);

	out->sp = u->rsp;
	out->pc = u->rip;
#elif defined(__aarch64__)
	const void *r = u->regs;	/* unsigned long long[31]: 8 bytes each, as uint64_t */
	unsigned int n = 31;

	out->sp = u->sp;
	out->pc = u->pc;
#else
#error "thread_stop.c: the registers of this architecture are not spelled out"
#endif
	out->n = n < THREAD_GPRS ? n : THREAD_GPRS;
	memcpy(out->r, r, out->n * sizeof(out->r[0]));
}

/*
 * Wait for the stop the interrupt asked for. A signal that arrives first
 * stops the thread too (signal-delivery-stop): the registers are read
 * there, and the signal is handed back on detach.
 */
static int wait_stop(pid_t tid, int *resend)
{
	int st;

	*resend = 0;
	for (;;) {
		if (waitpid(tid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == 0)
			*resend = WSTOPSIG(st);	/* not our interrupt: a signal's */
		return 0;
	}
}

int thread_stop_read(pid_t tid, struct thread_gprs *out)
{
	struct user_regs_struct u;
	struct iovec io = { &u, sizeof(u) };
	int resend, ret;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		ret = -errno;
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return ret;
	}
	ret = wait_stop(tid, &resend);
	if (ret)
		return ret;	/* gone: nothing to detach from */
	ret = ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &io) ? -errno : 0;
	if (!ret)
		take_regs(&u, out);
	ptrace(PTRACE_DETACH, tid, 0, (void *)(long)resend);
	return ret;
}
