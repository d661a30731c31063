// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "num_arg.h"

#define MAX_DIGITS	18	/* fits an unsigned long with room: no overflow to check */
#define MAX_FRACTION	9

/* Leading digits of s: how many, at most limit+1 (more is refused by the caller). */
static size_t digits(const char *s, size_t limit)
{
	size_t n = 0;

	while (n <= limit && s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

int num_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	size_t n;

	if (!s)
		return -1;
	n = digits(s, MAX_DIGITS);
	if (!n || n > MAX_DIGITS || s[n])
		return -1;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int num_parse_positive(const char *s, double max, double *out)
{
	size_t n, f = 0;
	double v;

	if (!s)
		return -1;
	n = digits(s, MAX_DIGITS);
	if (!n || n > MAX_DIGITS)
		return -1;
	if (s[n] == '.') {
		f = digits(s + n + 1, MAX_FRACTION);
		if (!f || f > MAX_FRACTION)
			return -1;
	}
	if (s[n + (f ? f + 1 : 0)])
		return -1;
	/* Only digits and one dot are left: strtod reads them exactly as written. */
	errno = 0;
	v = strtod(s, NULL);
	if (errno || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}
