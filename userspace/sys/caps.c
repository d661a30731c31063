// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

int caps_check(char *err, size_t errlen)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	const char *missing = NULL;

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d)) {
		snprintf(err, errlen, "cannot read this process's capabilities");
		return -1;
	}
	if (!has_cap(d, CAP_SYS_ADMIN) && !(has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON)))
		missing = has_cap(d, CAP_BPF) ? "CAP_PERFMON (or CAP_SYS_ADMIN)"
					      : "CAP_BPF (or CAP_SYS_ADMIN)";
	else if (!has_cap(d, CAP_SYS_PTRACE))
		missing = "CAP_SYS_PTRACE";
	if (!missing)
		return 0;
	snprintf(err, errlen, "missing capability %s: run as root (sudo memattr-bpf ...)", missing);
	return -1;
}
