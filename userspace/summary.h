/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* End-of-run figures: summary.csv and the terminal summary. */
#ifndef MEMATTR_SUMMARY_H
#define MEMATTR_SUMMARY_H

#include <stdio.h>

struct tracker;

/* Replace DIR/summary.csv atomically with the figures so far. */
int summary_write_csv(struct tracker *t);

/* Per rank: peak total and when, the top components at the peak, MPI's share. */
void summary_print(struct tracker *t, FILE *f);

#endif
