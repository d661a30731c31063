// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcg.h"

/* The first line of root/rel/name starting with key (key "" : the first line), after key. */
static int read_key(const char *dir, const char *name, const char *key, char *out, size_t len)
{
	char path[2 * MEMCG_PATH_LEN + 64], line[512];
	size_t klen = strlen(key);
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line + klen);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* A decimal count; "max" (v2's none) and anything else are -1. */
static int64_t parse_count(const char *s)
{
	char *end;
	unsigned long long v;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || (*end && *end != ' ') || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

/* An absolute path that fits and never climbs (the walk up strips components). */
static bool usable(const char *cg)
{
	size_t n = strlen(cg);

	return *cg == '/' && n < MEMCG_PATH_LEN && !strstr(cg, "/../") &&
	       !(n >= 3 && !strcmp(cg + n - 3, "/.."));
}

int memcg_of(const char *root, pid_t pid, struct memcg_ref *ref)
{
	char path[MEMCG_PATH_LEN + 64], line[MEMCG_PATH_LEN + 64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%d/cgroup", root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(ref, 0, sizeof(*ref));
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;
		bool v1;

		if (!cg)
			continue;
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		ctl++;
		/* v1: "4:memory:/path" (or "4:cpu,memory:/path"); v2: "0::/path". */
		v1 = !strcmp(ctl, "memory") || strstr(ctl, ",memory") || !strncmp(ctl, "memory,", 7);
		if (!v1 && (*ctl || found))
			continue;
		if (!usable(cg))
			continue;
		ref->v1 = v1;
		memcpy(ref->path, cg, strlen(cg) + 1);
		found = true;
		if (v1)
			break;
	}
	fclose(f);
	return found ? 0 : -EINVAL;
}

static int node_memory(const char *root, uint64_t *bytes)
{
	char dir[MEMCG_PATH_LEN], val[64];
	int64_t kb;
	int ret;

	snprintf(dir, sizeof(dir), "%s/proc", root);
	ret = read_key(dir, "meminfo", "MemTotal:", val, sizeof(val));
	if (ret)
		return ret;
	kb = parse_count(val);
	if (kb <= 0)
		return -EINVAL;
	*bytes = (uint64_t)kb * 1024;
	return 0;
}

/* A count in file name at dir (key: its line), -1 when unreadable. */
static int64_t count_in(const char *dir, const char *name, const char *key)
{
	char val[64];

	return read_key(dir, name, key, val, sizeof(val)) ? -1 : parse_count(val);
}

/*
 * Whether the cgroup at dir says its limit of lim bytes was reached. v1's
 * failure counts are not kept by every kernel (6.18 kept none where the
 * charge failed on memory+swap), so its high-water mark near the limit
 * says it too: within the largest charge that can fail, a transparent
 * huge page (2 MiB), as a rank's last charge often is.
 */
#define LARGEST_CHARGE	(2 << 20)

static bool reached(const char *dir, bool v1, int64_t lim)
{
	int64_t max_usage;

	if (!v1)
		return count_in(dir, "memory.events", "oom ") > 0;
	if (count_in(dir, "memory.failcnt", "") > 0 || count_in(dir, "memory.memsw.failcnt", "") > 0)
		return true;
	max_usage = count_in(dir, "memory.max_usage_in_bytes", "");
	return max_usage > 0 && max_usage + LARGEST_CHARGE > lim;
}

int memcg_limit(const char *root, const struct memcg_ref *ref, struct memcg_limit *out)
{
	char base[MEMCG_PATH_LEN], dir[2 * MEMCG_PATH_LEN], rel[MEMCG_PATH_LEN], val[64];
	uint64_t node, best = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = node_memory(root, &node);
	if (ret)
		return ret;
	out->limit_bytes = node;
	if (!ref)
		return 0;
	snprintf(base, sizeof(base), "%s/sys/fs/cgroup%s", root, ref->v1 ? "/memory" : "");
	snprintf(rel, sizeof(rel), "%s", ref->path);
	for (;;) {
		char *slash = strrchr(rel, '/');
		int64_t lim;

		snprintf(dir, sizeof(dir), "%s%s", base, rel);
		if (!read_key(dir, ref->v1 ? "memory.limit_in_bytes" : "memory.max", "", val, sizeof(val))) {
			lim = parse_count(val);
			/* v1 says none with a huge number; any limit at or above the node's is none too. */
			if (lim > 0 && (uint64_t)lim < node && (!best || (uint64_t)lim < best) &&
			    reached(dir, ref->v1, lim)) {
				best = (uint64_t)lim;
				snprintf(out->dir, sizeof(out->dir), "%s", *rel ? rel : "/");
			}
		}
		if (!slash || !*rel)
			break;
		*slash = '\0';
	}
	if (best) {
		out->limit_bytes = best;
		out->cgroup = true;
	}
	return 0;
}

const char *memcg_oom_kind(const struct memcg_limit *l)
{
	return l->cgroup ? "cgroup" : "global";
}
