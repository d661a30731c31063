// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>

#include "columns.h"
#include "sock_proto.h"

static bool valid_job(const char *job, size_t n)
{
	if (!n || n > JSP_JOB_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (job[i] <= ' ' || job[i] > '~')
			return false;
	return true;
}

/* The line without its '\n'; the length, or -1 when it holds another '\n' or a NUL short of it. */
static long line_len(const char *line)
{
	size_t n = strcspn(line, "\n");

	if (line[n] == '\n' && line[n + 1])
		return -1;
	return (long)n;
}

int jsp_format_request(char *buf, size_t len, const char *job, uid_t uid)
{
	int n;

	if (!valid_job(job, strlen(job)))
		return -1;
	if (uid == JSP_ANY_UID)
		n = snprintf(buf, len, JSP_VERSION " JOB %s\n", job);
	else
		n = snprintf(buf, len, JSP_VERSION " JOB %s UID %u\n", job, (unsigned int)uid);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* " UID <decimal>" ending the request: the uid named, the ID's length cut to before it. */
static int parse_uid_suffix(const char *line, long *n, uid_t *uid)
{
	const char *sp = memchr(line, ' ', (size_t)*n);
	unsigned long v = 0;
	long digits;

	*uid = JSP_ANY_UID;
	if (!sp)
		return 0;
	if (strncmp(sp, " UID ", 5))
		return -1;
	digits = *n - (sp + 5 - line);
	if (digits < 1 || digits > 10)
		return -1;
	for (long i = 0; i < digits; i++) {
		if (sp[5 + i] < '0' || sp[5 + i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(sp[5 + i] - '0');
	}
	if (v >= (unsigned long)JSP_ANY_UID)
		return -1;
	*uid = (uid_t)v;
	*n = sp - line;
	return 0;
}

int jsp_parse_request(const char *line, char *job, size_t joblen, uid_t *uid, char *err,
		      size_t errlen)
{
	static const char prefix[] = JSP_VERSION " JOB ";
	long n = line_len(line);

	if (n < 0 || strncmp(line, "MEMATTR/", 8)) {
		snprintf(err, errlen, "ERR bad not a memattr-bpf request\n");
		return -1;
	}
	if (strncmp(line, prefix, sizeof(prefix) - 1)) {
		snprintf(err, errlen, "ERR bad unsupported request or version (this daemon speaks " JSP_VERSION ")\n");
		return -1;
	}
	n -= (long)sizeof(prefix) - 1;
	line += sizeof(prefix) - 1;
	if (parse_uid_suffix(line, &n, uid) || !valid_job(line, (size_t)n) || (size_t)n >= joblen) {
		snprintf(err, errlen, "ERR bad not a job ID\n");
		return -1;
	}
	memcpy(job, line, (size_t)n);
	job[n] = '\0';
	return 0;
}

int jsp_parse_reply(const char *line, struct jsp_reply *r)
{
	long n = line_len(line);
	const char *sp;

	memset(r, 0, sizeof(*r));
	if (n < 0)
		return -1;
	if (n == 3 && !strncmp(line, "END", 3)) {
		r->kind = JSP_END;
		return 0;
	}
	if ((n == 11 && !strncmp(line, "JOB running", 11)) || (n == 9 && !strncmp(line, "JOB ended", 9))) {
		r->kind = JSP_JOB;
		r->ended = n == 9;
		return 0;
	}
	if (n > 5 && !strncmp(line, "FILE ", 5)) {
		r->kind = JSP_FILE;
		memcpy(r->text, line + 5, (size_t)n - 5);
		r->text[n - 5] = '\0';
		return jsp_file_served(r->text) ? 0 : -1;
	}
	if (n > 4 && !strncmp(line, "ERR ", 4)) {
		line += 4;
		n -= 4;
		sp = memchr(line, ' ', (size_t)n);
		if (!sp || sp == line || (size_t)(sp - line) >= sizeof(r->code) || sp + 1 == line + n)
			return -1;
		r->kind = JSP_ERR;
		memcpy(r->code, line, (size_t)(sp - line));
		n -= sp + 1 - line;
		memcpy(r->text, sp + 1, (size_t)n);
		r->text[n] = '\0';
		return 0;
	}
	return -1;
}

int jsp_format_denied(char *buf, size_t len, const char *job)
{
	return snprintf(buf, len, "ERR denied job %s belongs to another user\n", job);
}

int jsp_format_ambiguous(char *buf, size_t len, const char *job)
{
	return snprintf(buf, len, "ERR ambiguous processes of several users carry job ID %s (no batch system vouches for it): name whose with --job-user USER\n",
			job);
}

int jsp_format_busy(char *buf, size_t len, const char *why)
{
	return snprintf(buf, len, "ERR busy %s\n", why);
}

int jsp_format_nojob(char *buf, size_t len, const char *job)
{
	return snprintf(buf, len, "ERR nojob no job %s is traced by the daemon on this node\n", job);
}

/* "rank-" or "pid-", a decimal number, then suffix (csv_file_name's names). */
static bool timeline_name(const char *name, const char *suffix)
{
	size_t digits;

	if (!strncmp(name, "rank-", 5))
		name += 5;
	else if (!strncmp(name, "pid-", 4))
		name += 4;
	else
		return false;
	digits = strspn(name, "0123456789");
	return digits && digits <= 10 && !strcmp(name + digits, suffix);
}

int jsp_whole_file(const char *name)
{
	static const char *const whole[JSP_NWHOLE] = {
		FILE_SUMMARY, FILE_RUN_INFO, FILE_MPI_CALLS, FILE_ALLOC_STACKS,
	};

	for (int i = 0; i < JSP_NWHOLE; i++)
		if (!strcmp(name, whole[i]))
			return i;
	return -1;
}

bool jsp_file_served(const char *name)
{
	if (strlen(name) >= JSP_NAME_MAX)
		return false;
	return jsp_whole_file(name) >= 0 || timeline_name(name, ".csv.gz");
}

int jsp_local_name(const char *name, bool compress, char *out, size_t outlen)
{
	size_t n = strlen(name);

	if (!jsp_file_served(name) || n >= outlen)
		return -1;
	memcpy(out, name, n + 1);
	if (!compress && timeline_name(name, ".csv.gz"))
		out[n - 3] = '\0';
	return 0;
}
