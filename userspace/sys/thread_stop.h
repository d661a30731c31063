/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The registers of a thread that is running, read by stopping it for the
 * read alone: PTRACE_SEIZE, PTRACE_INTERRUPT, the general registers,
 * PTRACE_DETACH. The thread was in user space (not in a syscall, which
 * /proc/PID/task/TID/syscall answers without a stop), so nothing it waits
 * on is interrupted; a signal that arrived meanwhile is handed back on
 * detach. Used once per thread when the tool attaches to a running job.
 */
#ifndef MEMATTR_THREAD_STOP_H
#define MEMATTR_THREAD_STOP_H

#include <stdint.h>
#include <sys/types.h>

#define THREAD_GPRS	31	/* general registers kept: x0-x30 on arm64, 16 on x86-64 */

struct thread_gprs {
	uint64_t sp, pc;
	uint64_t r[THREAD_GPRS];	/* general registers, sp and pc excepted */
	unsigned int n;
};

/*
 * Stop thread tid (of any process) just long enough to read its
 * registers. 0, or -errno: EPERM where ptrace is not allowed (Yama's
 * ptrace_scope 3, a seccomp filter, another tracer), ESRCH when it is gone.
 */
int thread_stop_read(pid_t tid, struct thread_gprs *out);

#endif
