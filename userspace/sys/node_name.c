// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* This node's name for datasets and output paths (see node_name.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "node_name.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

bool node_name_valid(const char *s)
{
	size_t len = strlen(s);

	if (!len || len >= NODE_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

void node_name(char *buf, size_t len)
{
	const char *slurm = getenv("SLURMD_NODENAME");
	struct utsname u;
	size_t i;

	if (slurm && slurm[0])
		snprintf(buf, len, "%s", slurm);
	else if (!uname(&u) && u.nodename[0])
		snprintf(buf, len, "%s", u.nodename);
	else
		snprintf(buf, len, "localhost");
	if (len > NODE_NAME_MAX)
		buf[NODE_NAME_MAX - 1] = '\0';
	for (i = 0; buf[i]; i++)
		if (!name_char(buf[i]))
			buf[i] = '_';
	/* "." and ".." are not names a path may take. */
	if (!strcmp(buf, ".") || !strcmp(buf, ".."))
		buf[0] = '_';
}

int node_expand_path(const char *path, const char *node, const char *job, char *out, size_t outlen)
{
	size_t o = 0;

	for (const char *p = path; *p; p++) {
		const char *put = NULL;
		char one[2] = { *p, '\0' };

		if (*p != '%') {
			put = one;
		} else {
			switch (*++p) {
			case 'n':
				put = node;
				break;
			case 'j':
				put = job ? job : "";
				break;
			case '%':
				put = "%";
				break;
			default:
				return -1;
			}
		}
		if (o + strlen(put) >= outlen)
			return -1;
		memcpy(out + o, put, strlen(put));
		o += strlen(put);
	}
	if (!outlen)
		return -1;
	out[o] = '\0';
	return 0;
}
