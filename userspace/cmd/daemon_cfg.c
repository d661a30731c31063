// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_cfg.h"
#include "num_arg.h"
#include "options.h"
#include "safe_open.h"

#define CFG_MAX_BYTES	(64 << 10)

static const char *const keys[DK_NR] = {
	[DK_SPOOL] = "spool", [DK_LISTEN] = "listen", [DK_TEXTFILE] = "textfile",
	[DK_INTERVAL] = "interval", [DK_PSS_INTERVAL] = "pss-interval", [DK_RETAIN] = "retain",
	[DK_MAX_JOBS] = "max-jobs", [DK_MAX_PROCS] = "max-procs", [DK_SOCKET] = "socket",
	[DK_MAX_USER_JOBS] = "max-jobs-per-user", [DK_MAX_USER_SPOOL] = "max-spool-dirs-per-user",
	[DK_ATTRIBUTION] = "attribution", [DK_METRICS_DETAIL] = "metrics-detail",
	[DK_METRICS_MAX_RANKS] = "metrics-max-ranks", [DK_DETACH_AFTER] = "detach-after",
};

void daemon_usage(FILE *f)
{
	fputs("usage: memattr-bpf daemon [options]   trace every job on this node (as root)\n"
	      "  --config FILE       settings file, same keys as the options (key = value); SIGHUP re-reads it\n"
	      "  --spool DIR         per-job output: DIR/<job>/ (default " DAEMON_DEFAULT_SPOOL ")\n"
	      "  --listen ADDR:PORT  metrics endpoint (default " DAEMON_DEFAULT_LISTEN "; \"none\": off)\n"
	      "  --socket PATH       where users' own --job ID asks (default " DAEMON_DEFAULT_SOCKET "; \"none\": off)\n"
	      "  --textfile DIR      also write DIR/memattr.prom (node_exporter's textfile collector)\n"
	      "  --interval MS       sample period (default 1000)\n"
	      "  --pss-interval MS   shortest period between smaps reads (default 10000)\n"
	      "  --retain DAYS       remove job directories older than DAYS (default 0: keep)\n"
	      "  --max-jobs N        jobs traced at once; more are refused and counted (default 64)\n"
	      "  --max-jobs-per-user N  jobs of one user traced at once (default 32): one user's\n"
	      "                      jobs (or fake job IDs) cannot take every slot\n"
	      "  --max-procs N       processes traced at once; jobs past it are refused (default 8192)\n"
	      "  --attribution MODE  sampled (default): no program at any page fault, pages counted at\n"
	      "                      samples where the components drift from the kernel's total;\n"
	      "                      exact: every page fault's owner as it happens (docs/attribution.md)\n"
	      "  --exact             the same as --attribution exact\n"
	      "  --max-spool-dirs-per-user N  job directories one user may have in the spool\n"
	      "                      (default 1000); past it their jobs are traced without one\n"
	      "  --metrics-detail job|rank  job (default): per-job series only; rank: per-rank\n"
	      "                      series too, for the largest --metrics-max-ranks ranks of a job\n"
	      "  --metrics-max-ranks N  rank series per job with --metrics-detail rank (default 32);\n"
	      "                      smaller ranks are summed under rank=\"other\"\n"
	      "  --detach-after S    the node-wide programs (the memory syscalls' tracepoints, which\n"
	      "                      slow every syscall of the node while attached) are attached while\n"
	      "                      a process is traced and detached S seconds after the last one\n"
	      "                      ends (default 10; \"never\": attached from start to end)\n"
	      "  --verbose, --help\n", f);
}

void daemon_cfg_defaults(struct daemon_cfg *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->spool, sizeof(c->spool), "%s", DAEMON_DEFAULT_SPOOL);
	snprintf(c->listen, sizeof(c->listen), "%s", DAEMON_DEFAULT_LISTEN);
	snprintf(c->socket, sizeof(c->socket), "%s", DAEMON_DEFAULT_SOCKET);
	c->interval_ms = 1000;
	c->pss_interval_ms = 10000;
	c->max_jobs = 64;
	c->max_procs = 8192;
	c->max_user_jobs = 32;	/* half of --max-jobs' default: one user cannot take every slot */
	c->max_user_spool = 1000;
	c->metrics_detail = MX_DETAIL_JOB;
	c->metrics_max_ranks = METRICS_DEFAULT_MAX_RANKS;
	c->detach_after_s = DAEMON_DEFAULT_DETACH_AFTER;
	/* A service left on under every job: no program at every fault of the node (issue 34). */
	c->sampled = true;
}

/* The options' number syntax (num_arg.h), into the settings' unsigned ints. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned int *out)
{
	unsigned long v;

	if (num_parse_uint(s, min, max, &v))
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* A count or period setting; err names the key, the value and what it must be. */
static int set_uint(const char *key, const char *v, unsigned long min, unsigned long max,
		    unsigned int *out, const char *what, char *err, size_t errlen)
{
	if (!parse_uint(v, min, max, out))
		return 0;
	snprintf(err, errlen, "%s: '%s' is not %s", key, v, what);
	return -1;
}

static int set_path(char *dst, size_t len, const char *key, const char *v, char *err, size_t errlen)
{
	if (v[0] != '/' || strlen(v) >= len) {
		snprintf(err, errlen, "%s: '%s' must be an absolute path", key, v);
		return -1;
	}
	snprintf(dst, len, "%s", v);
	return 0;
}

/*
 * exact or sampled. The command line naming both (--exact with
 * --attribution sampled) is refused rather than settled by order: which
 * one the admin meant is not known.
 */
static int set_attribution(struct daemon_cfg *c, const char *v, bool again, char *err, size_t errlen)
{
	bool sampled;

	if (attribution_parse(v, &sampled)) {
		snprintf(err, errlen, "attribution: '%s' is not exact or sampled", v);
		return -1;
	}
	if (again && sampled != c->sampled) {
		snprintf(err, errlen, "daemon: --attribution given as both exact and sampled (--exact is --attribution exact)");
		return -1;
	}
	c->sampled = sampled;
	return 0;
}

int daemon_cfg_set(struct daemon_cfg *c, const char *key, const char *v, bool from_cli,
		   char *err, size_t errlen)
{
	bool again;
	int k;

	for (k = 0; k < DK_NR && strcmp(keys[k], key); k++)
		;
	if (k == DK_NR) {
		snprintf(err, errlen, "unknown setting '%s'", key);
		return -1;
	}
	if (!from_cli && c->set_by_cli[k])
		return 0;	/* the command line wins */
	again = from_cli && c->set_by_cli[k];
	if (from_cli)
		c->set_by_cli[k] = true;
	switch (k) {
	case DK_SPOOL:
		return set_path(c->spool, sizeof(c->spool), key, v, err, errlen);
	case DK_TEXTFILE:
		return set_path(c->textfile, sizeof(c->textfile), key, v, err, errlen);
	case DK_SOCKET:
		if (!strcmp(v, "none")) {
			snprintf(c->socket, sizeof(c->socket), "none");
			return 0;
		}
		return set_path(c->socket, sizeof(c->socket), key, v, err, errlen);
	case DK_LISTEN:
		if (!v[0] || strlen(v) >= sizeof(c->listen) || strpbrk(v, " \t")) {
			snprintf(err, errlen, "listen: '%s' is not ADDR:PORT or none", v);
			return -1;
		}
		snprintf(c->listen, sizeof(c->listen), "%s", v);
		return 0;
	case DK_INTERVAL:
		return set_uint(key, v, 10, 3600000, &c->interval_ms,
				"a period in ms between 10 and 3600000", err, errlen);
	case DK_PSS_INTERVAL:
		return set_uint(key, v, 10, 3600000, &c->pss_interval_ms,
				"a period in ms between 10 and 3600000", err, errlen);
	case DK_RETAIN:
		return set_uint(key, v, 0, 36500, &c->retain_days,
				"a number of days (0: keep forever)", err, errlen);
	case DK_MAX_JOBS:
		return set_uint(key, v, 1, 1000000, &c->max_jobs,
				"a count between 1 and 1000000", err, errlen);
	case DK_MAX_USER_JOBS:
		return set_uint(key, v, 1, 1000000, &c->max_user_jobs,
				"a count between 1 and 1000000", err, errlen);
	case DK_MAX_USER_SPOOL:
		return set_uint(key, v, 1, 1000000, &c->max_user_spool,
				"a count between 1 and 1000000", err, errlen);
	case DK_ATTRIBUTION:
		return set_attribution(c, v, again, err, errlen);
	case DK_METRICS_DETAIL:
		if (!metrics_detail_parse(v, &c->metrics_detail))
			return 0;
		snprintf(err, errlen, "metrics-detail: '%s' is not job or rank", v);
		return -1;
	case DK_METRICS_MAX_RANKS:
		return set_uint(key, v, 1, 100000, &c->metrics_max_ranks,
				"a count between 1 and 100000", err, errlen);
	case DK_DETACH_AFTER: {
		unsigned int s;

		if (!strcmp(v, "never")) {
			c->detach_after_s = -1;
			return 0;
		}
		if (set_uint(key, v, 0, 86400, &s, "a number of seconds up to 86400, or never", err, errlen))
			return -1;
		c->detach_after_s = (int)s;
		return 0;
	}
	case DK_MAX_PROCS:
		return set_uint(key, v, 1, 1000000, &c->max_procs,
				"a count between 1 and 1000000", err, errlen);
	}
	return -1;
}

int daemon_cfg_parse_args(struct daemon_cfg *c, int argc, char **argv, char *err, size_t errlen)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			daemon_usage(stdout);
			return 1;
		}
		if (!strcmp(a, "--verbose")) {
			c->verbose = true;
			continue;
		}
		if (!strcmp(a, "--exact")) {
			if (daemon_cfg_set(c, "attribution", "exact", true, err, errlen))
				return -1;
			continue;
		}
		if (strncmp(a, "--", 2)) {
			snprintf(err, errlen, "daemon: unexpected argument '%s' (see memattr-bpf daemon --help)", a);
			return -1;
		}
		v = strchr(a, '=');
		if (!v && i + 1 >= argc) {
			snprintf(err, errlen, "daemon: %s needs a value", a);
			return -1;
		}
		{
			char key[64];
			size_t n = v ? (size_t)(v - a - 2) : strlen(a + 2);

			if (n >= sizeof(key)) {
				snprintf(err, errlen, "daemon: unknown option '%s'", a);
				return -1;
			}
			memcpy(key, a + 2, n);
			key[n] = '\0';
			v = v ? v + 1 : argv[++i];
			if (!strcmp(key, "config")) {
				if (set_path(c->config, sizeof(c->config), "--config", v, err, errlen))
					return -1;
				continue;
			}
			if (daemon_cfg_set(c, key, v, true, err, errlen)) {
				if (!strncmp(err, "unknown setting", 15))
					snprintf(err, errlen, "daemon: unknown option '--%s' (see memattr-bpf daemon --help)", key);
				return -1;
			}
		}
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int daemon_cfg_parse_text(struct daemon_cfg *c, const char *text, const char *name,
			  char *err, size_t errlen)
{
	char *copy = strdup(text), *line, *save = NULL;
	int lineno = 0, ret = 0;

	if (!copy) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	/* strtok_r would skip empty lines and miscount: split by hand. */
	for (line = copy; line && !ret; line = save) {
		char *eq, *key, *val, why[512];

		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value'", name, lineno);
			ret = -1;
			break;
		}
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		if (daemon_cfg_set(c, key, val, false, why, sizeof(why))) {
			snprintf(err, errlen, "%s:%d: %s", name, lineno, why);
			ret = -1;
		}
	}
	free(copy);
	return ret;
}

int daemon_cfg_load(struct daemon_cfg *c, char *err, size_t errlen)
{
	char *buf;
	size_t n;
	FILE *f;
	int ret;

	if (!c->config[0])
		return 0;
	/* Read as root: a regular file only, never a device or a fifo. */
	f = safe_fopenat(AT_FDCWD, c->config, SAFE_FOLLOW, CFG_MAX_BYTES);
	if (!f) {
		snprintf(err, errlen, "--config %s: %s", c->config, safe_open_strerror(errno));
		return -1;
	}
	buf = malloc(CFG_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	n = fread(buf, 1, CFG_MAX_BYTES, f);
	fclose(f);
	buf[n] = '\0';
	if (memchr(buf, '\0', n)) {
		snprintf(err, errlen, "--config %s: not a text file", c->config);
		free(buf);
		return -1;
	}
	ret = daemon_cfg_parse_text(c, buf, c->config, err, errlen);
	free(buf);
	return ret;
}
