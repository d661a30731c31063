// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>

#include "cmd_args.h"

void cmd_args_reset(void)
{
	optind = 0;	/* glibc: start afresh */
	opterr = 0;
}

void cmd_args_unknown(char **argv, char *err, size_t errlen)
{
	snprintf(err, errlen, "unknown option or missing value: %s (see --help)", argv[optind - 1]);
}

int cmd_args_name(const char *opt, const char *what, const char *val, const char **out, char *err,
		  size_t errlen)
{
	if (!val[0]) {
		snprintf(err, errlen, "%s: empty %s name", opt, what);
		return -1;
	}
	*out = val;
	return 0;
}

int cmd_args_done(const char *cmd, int r, const char *err, void (*usage)(FILE *f))
{
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "memattr-bpf %s: %s\n", cmd, err);
		return CMD_EXIT_USAGE;
	}
	return -1;
}

int cmd_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "memattr-bpf %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAILURE;
}
