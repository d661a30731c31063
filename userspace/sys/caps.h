/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef MEMATTR_CAPS_H
#define MEMATTR_CAPS_H

#include <stddef.h>

/*
 * Check the effective capabilities the tool needs: loading BPF (CAP_BPF and
 * CAP_PERFMON, or CAP_SYS_ADMIN), reading other users' /proc/PID/smaps and
 * environ (CAP_SYS_PTRACE). Returns 0, or -1 naming what is missing.
 */
int caps_check(char *err, size_t errlen);

#endif
