/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The report's OOM post-mortem, from run_info.csv's oom_* keys. */
#ifndef MEMATTR_REPORT_OOM_H
#define MEMATTR_REPORT_OOM_H

#include <stdio.h>

#include "report.h"

/* A box for each kill the run recorded (none: nothing is written). */
void rp_oom_html(FILE *f, const struct rp_run *run);

#endif
