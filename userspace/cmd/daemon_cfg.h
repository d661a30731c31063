/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node service's settings: command-line options and a configuration
 * file with the same keys ("spool = /var/lib/memattr-bpf", '#' comments).
 * Options given on the command line win over the file, which SIGHUP
 * re-reads. Pure: unit-tested.
 */
#ifndef MEMATTR_DAEMON_CFG_H
#define MEMATTR_DAEMON_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "metrics.h"

#define DAEMON_DEFAULT_SPOOL	"/var/lib/memattr-bpf"
#define DAEMON_DEFAULT_LISTEN	"127.0.0.1:9466"
#define DAEMON_DEFAULT_SOCKET	"/run/memattr-bpf/memattr.sock"
/*
 * Seconds the node-wide programs stay attached after the last traced
 * process ended: a batch script's job steps follow each other within
 * seconds and pay one attach, and an idle node pays for at most this long.
 */
#define DAEMON_DEFAULT_DETACH_AFTER	10

enum daemon_key {
	DK_SPOOL, DK_LISTEN, DK_TEXTFILE, DK_INTERVAL, DK_PSS_INTERVAL, DK_RETAIN,
	DK_MAX_JOBS, DK_MAX_PROCS, DK_SOCKET, DK_MAX_USER_JOBS, DK_MAX_USER_SPOOL, DK_ATTRIBUTION,
	DK_METRICS_DETAIL, DK_METRICS_MAX_RANKS, DK_DETACH_AFTER, DK_NR,
};

struct daemon_cfg {
	char spool[4096];
	char listen[256];		/* "none": no endpoint */
	char textfile[4096];		/* "": none */
	char socket[108];		/* the user socket (sun_path), "none": off */
	unsigned int interval_ms, pss_interval_ms;
	unsigned int retain_days;	/* 0: keep forever */
	unsigned int max_jobs, max_procs;
	unsigned int max_user_jobs;	/* jobs of one user traced at once */
	unsigned int max_user_spool;	/* spool directories of one user */
	bool sampled;			/* attribution: sampled (the default) or exact (options.h) */
	enum mx_detail metrics_detail;	/* per-job series only, or per-rank ones too */
	unsigned int metrics_max_ranks;	/* rank series per job (metrics.h) */
	int detach_after_s;		/* node-wide programs kept after the last traced process; < 0: never detached */
	bool verbose;
	char config[4096];		/* --config, "": none */
	bool set_by_cli[DK_NR];		/* the file does not override these */
};

void daemon_cfg_defaults(struct daemon_cfg *c);

/* argv after "daemon". 0, 1 (--help printed), or -1 with one line in err. */
int daemon_cfg_parse_args(struct daemon_cfg *c, int argc, char **argv, char *err, size_t errlen);

/* One setting, from either source. 0, or -1 with one line in err. */
int daemon_cfg_set(struct daemon_cfg *c, const char *key, const char *value, bool from_cli,
		   char *err, size_t errlen);

/* The file's text (NUL-terminated); name is for messages. 0, or -1 with err "name:line: why". */
int daemon_cfg_parse_text(struct daemon_cfg *c, const char *text, const char *name,
			  char *err, size_t errlen);

/* Read and apply c->config (if any). 0, or -1 with err. */
int daemon_cfg_load(struct daemon_cfg *c, char *err, size_t errlen);

void daemon_usage(FILE *f);

#endif
