/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one number syntax of every option and setting (the command line, the
 * daemon's options and its config file): plain decimal digits, a fraction
 * only where the option takes one, nothing before or after -- no sign, no
 * space, no "0x", no exponent, no unit -- and within the option's range.
 * strtoul/strtod alone accepted " 5", "0x10" and "1e3", so `--duration 0x10`
 * ran 16 s while `--interval 0x10` was refused.
 */
#ifndef MEMATTR_NUM_ARG_H
#define MEMATTR_NUM_ARG_H

/* A whole number in [min, max]. 0, or -1 (out untouched). */
int num_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* "D[.D]" (digits, an optional fraction of at most 9 digits) in (0, max]. 0, or -1. */
int num_parse_positive(const char *s, double max, double *out);

#endif
