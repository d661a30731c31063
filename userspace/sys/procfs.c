// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /proc/PID readers. The text comes from processes we do not control (a
 * comm or a file name is whatever the user chose), so every parser checks
 * bounds and reports malformed input instead of trusting the layout.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "memattr.h"

#define DELETED_SUFFIX	" (deleted)"
#define SMALL_FILE_MAX	4096

static const char *root_proc = "/proc", *root_cgroup = "/sys/fs/cgroup";

const char *procfs_root(void)
{
	return root_proc;
}

const char *procfs_cgroup_root(void)
{
	return root_cgroup;
}

void procfs_set_roots(const char *proc, const char *cgroup)
{
	root_proc = proc ? proc : "/proc";
	root_cgroup = cgroup ? cgroup : "/sys/fs/cgroup";
}

/* ---- helpers ---- */

/* s's first len bytes without the kernel's " (deleted)" suffix: the new length; *deleted says if it was there. */
static size_t without_deleted(const char *s, size_t len, bool *deleted)
{
	size_t slen = sizeof(DELETED_SUFFIX) - 1;

	*deleted = len >= slen && !memcmp(s + len - slen, DELETED_SUFFIX, slen);
	return *deleted ? len - slen : len;
}

static int open_proc(pid_t pid, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", root_proc, (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Read up to max bytes from fd. Returns the count or -errno. */
static ssize_t read_full(int fd, char *buf, size_t max)
{
	size_t got = 0;

	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Small text file into buf, NUL-terminated. 0 or -errno. */
static int read_small(pid_t pid, const char *name, char *buf, size_t size)
{
	int fd = open_proc(pid, name);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read_full(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

/* Unsigned number in base 10 or 16 at *p, advancing *p. False on no digits or overflow. */
static bool parse_u64(const char **p, int base, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	bool any = false;

	for (;; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + d;
		any = true;
	}
	if (!any)
		return false;
	*p = s;
	*out = v;
	return true;
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* ---- environ ---- */

#define ENVIRON_FIRST	(16 << 10)	/* most environments fit; larger ones double up to max */

int procfs_read_environ_fd(int fd, struct environ_buf *env, size_t max)
{
	size_t cap = max < ENVIRON_FIRST ? max : ENVIRON_FIRST;
	char probe, *grown;
	ssize_t n;

	env->len = 0;
	/* One spare byte: data[len] is always '\0', see environ_get(). */
	env->data = malloc(cap + 1);
	if (!env->data)
		return -ENOMEM;
	for (;;) {
		n = read_full(fd, env->data + env->len, cap - env->len);
		if (n < 0) {
			environ_free(env);
			return (int)n;
		}
		env->len += (size_t)n;
		if (env->len < cap || cap == max)
			break;
		cap = cap * 2 < max ? cap * 2 : max;
		grown = realloc(env->data, cap + 1);
		if (!grown) {
			environ_free(env);
			return -ENOMEM;
		}
		env->data = grown;
	}
	/*
	 * Cut at max: drop the partial last entry, or "PMIX_RANK=12" could be
	 * read as rank 1.
	 */
	if (env->len == max && read_full(fd, &probe, 1) == 1) {
		while (env->len && env->data[env->len - 1] != '\0')
			env->len--;
	}
	env->data[env->len] = '\0';
	return 0;
}

int procfs_read_environ(pid_t pid, struct environ_buf *env, size_t max)
{
	int fd, ret;

	env->data = NULL;
	env->len = 0;
	fd = open_proc(pid, "environ");
	if (fd < 0)
		return fd;
	ret = procfs_read_environ_fd(fd, env, max);
	close(fd);
	return ret;
}

void environ_free(struct environ_buf *env)
{
	free(env->data);
	env->data = NULL;
	env->len = 0;
}

/*
 * Entries are scanned within [0, len) only. The last one may lack its NUL
 * (a process can overwrite its environment block); procfs_read_environ
 * leaves data[len] == '\0', so its value is still a terminated string.
 * Buffers built by hand must keep that invariant.
 */
const char *environ_get(const struct environ_buf *env, const char *key)
{
	size_t klen, pos = 0;

	if (!env || !env->data || !key || !key[0])
		return NULL;
	klen = strlen(key);
	while (pos < env->len) {
		const char *entry = env->data + pos;
		size_t left = env->len - pos;
		const char *nul = memchr(entry, '\0', left);
		size_t elen = nul ? (size_t)(nul - entry) : left;

		if (elen > klen && entry[klen] == '=' && !memcmp(entry, key, klen))
			return entry + klen + 1;
		pos += elen + 1;
	}
	return NULL;
}

static int parse_rank(const char *s)
{
	uint64_t v;

	if (!s || !parse_u64(&s, 10, &v) || *s || v > INT_MAX)
		return -1;
	return (int)v;
}

int environ_rank(const struct environ_buf *env, const char *const *keys, size_t nkeys)
{
	for (size_t i = 0; keys && i < nkeys; i++) {
		int rank = parse_rank(environ_get(env, keys[i]));

		if (rank >= 0)
			return rank;
	}
	return -1;
}

#define JOB_KEY_NAME(k)	#k,
/* The kernel's exec filter reads the same list (MEMATTR_JOB_KEYS, bpf/memattr.h). */
static const char *const job_keys[] = { MEMATTR_JOB_KEYS(JOB_KEY_NAME) };

const char *environ_job_id(const struct environ_buf *env)
{
	for (size_t i = 0; i < sizeof(job_keys) / sizeof(job_keys[0]); i++) {
		const char *v = environ_get(env, job_keys[i]);

		if (v && v[0])
			return v;
	}
	return NULL;
}

bool environ_matches_job(const struct environ_buf *env, const char *jobid)
{
	size_t jlen;

	if (!jobid || !jobid[0])
		return false;
	jlen = strlen(jobid);
	for (size_t i = 0; i < sizeof(job_keys) / sizeof(job_keys[0]); i++) {
		const char *v = environ_get(env, job_keys[i]);

		if (!v)
			continue;
		if (!strcmp(v, jobid))
			return true;
		/* PBS qualifies the number with its server: "1234.server". */
		if (!strcmp(job_keys[i], "PBS_JOBID") && !strncmp(v, jobid, jlen) &&
		    v[jlen] == '.')
			return true;
	}
	return false;
}

/* ---- Slurm's cgroups ---- */

/* The component of path at p (up to '/' or the end of line) in out. */
static const char *next_component(const char *p, char *out, size_t size)
{
	size_t n = 0;

	while (*p == '/')
		p++;
	while (*p && *p != '/' && *p != '\n') {
		if (n + 1 < size)
			out[n++] = *p;
		p++;
	}
	out[n] = '\0';
	return p;
}

/* "job_<digits>" -> the number. */
static bool parse_job_component(const char *c, uint64_t *job)
{
	const char *p = c + 4;

	return !strncmp(c, "job_", 4) && parse_u64(&p, 10, job) && !*p;
}

/* One cgroup line's path ("hierarchy:controllers:path"). */
static int parse_slurm_path(const char *path, struct slurm_cgroup *out)
{
	char comp[64], prev[64] = "";
	bool under_slurm = false, have_job = false;
	const char *p = path;

	while (*p && *p != '\n') {
		p = next_component(p, comp, sizeof(comp));
		if (!comp[0])
			break;
		/*
		 * v1: slurm or slurm_<node>; v2: slurmstepd.scope, or
		 * <node>_slurmstepd.scope with several slurmd on one host.
		 */
		if (!under_slurm && (!strncmp(comp, "slurm", 5) || strstr(comp, "_slurmstepd.scope"))) {
			under_slurm = true;
			snprintf(out->anchor, sizeof(out->anchor), "%.*s", (int)(p - path), path);
		}
		if (under_slurm && parse_job_component(comp, &out->job)) {
			have_job = true;
		} else if (have_job && !strncmp(comp, "step_", 5) && comp[5] &&
			   parse_job_component(prev, &out->job)) {
			snprintf(out->step, sizeof(out->step), "%s", comp + 5);
			return 0;
		}
		snprintf(prev, sizeof(prev), "%s", comp);
	}
	return -ENOENT;
}

int procfs_parse_slurm_cgroup(const char *text, struct slurm_cgroup *out)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *eol = strchr(line, '\n');

		if (!c2 || (eol && c2 > eol))
			continue;
		/*
		 * A v1 hierarchy with a name and no controller (name=systemd):
		 * Slurm never puts a job there, and the exec filter
		 * (bpf/exec_filter.h) reaches a task's cgroups by controller.
		 */
		if (!strncmp(c1 + 1, "name=", 5) && !memchr(c1 + 1, ',', c2 - c1 - 1))
			continue;
		memset(out, 0, sizeof(*out));
		if (!parse_slurm_path(c2 + 1, out)) {
			snprintf(out->controllers, sizeof(out->controllers), "%.*s",
				 (int)(c2 - c1 - 1), c1 + 1);
			return 0;
		}
	}
	return -ENOENT;
}

/* Each directory from dirfd down path, opened without following links, root's? */
static int dirs_owned_by_root(int dirfd, const char *path)
{
	char comp[256];
	struct stat st;
	int fd = dup(dirfd), next;

	if (fd < 0)
		return -errno;
	for (const char *p = path; fd >= 0;) {
		if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0)
			break;
		p = next_component(p, comp, sizeof(comp));
		if (!comp[0]) {
			close(fd);
			return 0;
		}
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	if (fd >= 0)
		close(fd);
	return -EPERM;
}

int procfs_slurm_cgroup_trusted(const char *cgroup_root, const struct slurm_cgroup *sc)
{
	/* v2: the unified mount (or the hybrid's "unified"); v1: the hierarchy's own mount. */
	const char *v2[] = { "", "unified" };
	const char *v1[] = { strncmp(sc->controllers, "name=", 5) ? sc->controllers : sc->controllers + 5 };
	const char **sub = sc->controllers[0] ? v1 : v2;
	size_t n = sc->controllers[0] ? 1 : 2;
	char dir[PATH_MAX];
	int root, ret;

	if (!cgroup_root)
		cgroup_root = procfs_cgroup_root();
	for (size_t i = 0; i < n; i++) {
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", cgroup_root, sub[i]) >= sizeof(dir))
			continue;
		/* The mount point may be a link (cpu -> cpu,cpuacct); nothing below it may. */
		root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			continue;
		ret = faccessat(root, sc->anchor + (sc->anchor[0] == '/'), F_OK, AT_SYMLINK_NOFOLLOW) ?
		      -ENOENT : dirs_owned_by_root(root, sc->anchor);
		close(root);
		if (ret != -ENOENT)
			return ret;
	}
	return -EPERM;
}

int procfs_read_slurm_cgroup(pid_t pid, struct slurm_cgroup *out)
{
	char buf[4096];
	int ret = read_small(pid, "cgroup", buf, sizeof(buf));

	if (ret)
		return ret;
	ret = procfs_parse_slurm_cgroup(buf, out);
	return ret ? ret : procfs_slurm_cgroup_trusted(NULL, out);
}

/* ---- maps and smaps ---- */

static bool valid_perms(const char *p)
{
	return (p[0] == 'r' || p[0] == '-') && (p[1] == 'w' || p[1] == '-') &&
	       (p[2] == 'x' || p[2] == '-') && (p[3] == 'p' || p[3] == 's');
}

/*
 * "start-end perms offset major:minor inode   path". The path is the rest
 * of the line and may hold spaces; the kernel escapes only '\n' in it.
 */
static int parse_vma_header(const char *line, struct vma_info *v)
{
	const char *p = line;
	uint64_t dev;
	size_t len;

	memset(v, 0, sizeof(*v));
	if (!parse_u64(&p, 16, &v->start) || *p++ != '-' ||
	    !parse_u64(&p, 16, &v->end) || *p++ != ' ' || v->start > v->end)
		return -EINVAL;
	if (strnlen(p, 5) < 5 || !valid_perms(p) || p[4] != ' ')
		return -EINVAL;
	memcpy(v->perms, p, 4);
	v->perms[4] = '\0';
	p += 5;
	if (!parse_u64(&p, 16, &v->offset) || *p++ != ' ' ||
	    !parse_u64(&p, 16, &dev) || *p++ != ':' || !parse_u64(&p, 16, &dev) ||
	    *p++ != ' ' || !parse_u64(&p, 10, &v->inode))
		return -EINVAL;
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	p = skip_blanks(p);
	len = strlen(p);
	if (len && p[len - 1] == '\n')
		len--;
	len = without_deleted(p, len, &v->deleted);
	/* The kernel never prints more than PATH_MAX; hostile input is cut. */
	if (len >= sizeof(v->path))
		len = sizeof(v->path) - 1;
	memcpy(v->path, p, len);
	v->path[len] = '\0';
	return 0;
}

/* A header starts with hex digits and a '-'; field lines start with "Name:". */
static bool is_vma_header(const char *line)
{
	const char *p = line;

	while (isxdigit((unsigned char)*p))
		p++;
	return p != line && *p == '-';
}

static const struct {
	const char *key;
	size_t off;
} smaps_fields[] = {
	{ "Rss",		offsetof(struct vma_info, rss) },
	{ "Pss",		offsetof(struct vma_info, pss) },
	{ "Shared_Clean",	offsetof(struct vma_info, shared_clean) },
	{ "Shared_Dirty",	offsetof(struct vma_info, shared_dirty) },
	{ "Private_Clean",	offsetof(struct vma_info, private_clean) },
	{ "Private_Dirty",	offsetof(struct vma_info, private_dirty) },
	{ "Anonymous",		offsetof(struct vma_info, anonymous) },
	{ "Swap",		offsetof(struct vma_info, swap) },
};

/* "   1234 kB" -> bytes. */
static int parse_kb(const char *p, uint64_t *bytes)
{
	uint64_t kb;

	p = skip_blanks(p);
	if (!parse_u64(&p, 10, &kb) || kb > UINT64_MAX / 1024)
		return -EINVAL;
	p = skip_blanks(p);
	if (strncmp(p, "kB", 2))
		return -EINVAL;
	p = skip_blanks(p + 2);
	if (*p && *p != '\n')
		return -EINVAL;
	*bytes = kb * 1024;
	return 0;
}

/*
 * "Key:   value..." of an smaps entry. Fields we do not use are checked only
 * for their shape (VmFlags, THPeligible and ProtectionKey are not in kB).
 */
static int parse_smaps_field(const char *line, struct vma_info *v)
{
	const char *colon = strchr(line, ':');
	size_t klen;

	if (!colon || colon == line)
		return -EINVAL;
	klen = (size_t)(colon - line);
	for (const char *p = line; p < colon; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return -EINVAL;
	for (size_t i = 0; i < sizeof(smaps_fields) / sizeof(smaps_fields[0]); i++) {
		if (strlen(smaps_fields[i].key) == klen &&
		    !memcmp(smaps_fields[i].key, line, klen))
			return parse_kb(colon + 1,
					(uint64_t *)((char *)v + smaps_fields[i].off));
	}
	return 0;
}

int procfs_parse_maps(FILE *f, bool with_smaps, vma_cb cb, void *arg)
{
	struct vma_info *v;
	bool pending = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	/* struct vma_info holds PATH_MAX bytes: too big for a deep stack. */
	v = malloc(sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (;;) {
		errno = 0;
		len = getline(&line, &cap, f);
		if (len < 0)
			break;
		if (strlen(line) != (size_t)len) {
			ret = -EINVAL;
			break;
		}
		if (is_vma_header(line)) {
			if (pending) {
				ret = cb(v, arg);
				pending = false;
				if (ret)
					break;
			}
			ret = parse_vma_header(line, v);
			if (ret)
				break;
			if (!with_smaps) {
				ret = cb(v, arg);
				if (ret)
					break;
				continue;
			}
			pending = true;
		} else if (with_smaps && pending) {
			ret = parse_smaps_field(line, v);
			if (ret)
				break;
		} else {
			ret = -EINVAL;
			break;
		}
	}
	/* A read error (the process exited mid-read) is not malformed text. */
	if (!ret && ferror(f))
		ret = errno ? -errno : -EIO;
	if (!ret && pending)
		ret = cb(v, arg);
	free(line);
	free(v);
	return ret;
}

int procfs_read_maps(pid_t pid, bool with_smaps, vma_cb cb, void *arg)
{
	int fd = open_proc(pid, with_smaps ? "smaps" : "maps");
	FILE *f;
	int ret;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = procfs_parse_maps(f, with_smaps, cb, arg);
	fclose(f);
	return ret;
}

/* ---- small files ---- */

int procfs_parse_statm(const char *text, long page_size, uint64_t *rss_bytes)
{
	const char *p = text;
	uint64_t size, resident;

	if (!text || page_size <= 0)
		return -EINVAL;
	p = skip_blanks(p);
	if (!parse_u64(&p, 10, &size) || *p != ' ')
		return -EINVAL;
	p = skip_blanks(p);
	if (!parse_u64(&p, 10, &resident) || (*p && *p != ' ' && *p != '\n'))
		return -EINVAL;
	if (resident > UINT64_MAX / (uint64_t)page_size)
		return -EINVAL;
	*rss_bytes = resident * (uint64_t)page_size;
	return 0;
}

int procfs_read_rss(pid_t pid, uint64_t *rss_bytes)
{
	char buf[256];
	int ret = read_small(pid, "statm", buf, sizeof(buf));

	if (ret)
		return ret;
	return procfs_parse_statm(buf, sysconf(_SC_PAGESIZE), rss_bytes);
}

int procfs_parse_hwm(const char *status, uint64_t *bytes)
{
	for (const char *p = status; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "VmHWM:", 6))
			return parse_kb(p + 6, bytes) ? -EINVAL : 0;
	return -EINVAL;
}

int procfs_read_hwm(pid_t pid, uint64_t *bytes)
{
	char buf[SMALL_FILE_MAX];
	int ret = read_small(pid, "status", buf, sizeof(buf));

	return ret ? ret : procfs_parse_hwm(buf, bytes);
}

int procfs_read_pss(pid_t pid, uint64_t *pss_bytes)
{
	char buf[SMALL_FILE_MAX];
	const char *p;
	int ret = read_small(pid, "smaps_rollup", buf, sizeof(buf));

	if (ret)
		return ret;
	/* Whole-line match: "Pss_Anon:" and friends follow "Pss:". */
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "Pss:", 4))
			return parse_kb(p + 4, pss_bytes) ? -EINVAL : 0;
	}
	return -EINVAL;
}

/* Skip n space-separated fields, leaving p at the start of the next one. */
static const char *skip_fields(const char *p, int n)
{
	while (n-- > 0) {
		while (*p && *p != ' ')
			p++;
		if (*p != ' ')
			return NULL;
		p++;
	}
	return p;
}

/*
 * "pid (comm) state ppid ... starttime ...": comm may hold anything,
 * including ") ", so it ends at the last ')' of the text.
 */
int procfs_parse_stat(const char *text, struct proc_stat *st)
{
	const char *open, *close, *p = text;
	uint64_t pid, ppid, flags, start;
	size_t clen;

	if (!text)
		return -EINVAL;
	if (!parse_u64(&p, 10, &pid) || pid > INT_MAX || strncmp(p, " (", 2))
		return -EINVAL;
	open = p + 2;
	close = strrchr(open, ')');
	if (!close || close[1] != ' ' || !close[2] || close[3] != ' ')
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	clen = (size_t)(close - open);
	if (clen >= sizeof(st->comm))
		clen = sizeof(st->comm) - 1;
	memcpy(st->comm, open, clen);
	st->comm[clen] = '\0';
	st->state = close[2];
	p = close + 4;			/* field 4, ppid */
	if (!parse_u64(&p, 10, &ppid) || ppid > INT_MAX)
		return -EINVAL;
	p = skip_fields(p, 5);		/* fields 5..8 and the rest of 4 */
	if (!p || !parse_u64(&p, 10, &flags) || flags > UINT_MAX)
		return -EINVAL;
	p = skip_fields(p, 13);		/* fields 10..21 and the rest of 9 */
	if (!p || !parse_u64(&p, 10, &start) || (*p && *p != ' ' && *p != '\n'))
		return -EINVAL;
	st->flags = (unsigned int)flags;
	st->pid = (pid_t)pid;
	st->ppid = (pid_t)ppid;
	st->starttime = start;
	return 0;
}

int procfs_read_stat(pid_t pid, struct proc_stat *st)
{
	char buf[SMALL_FILE_MAX];
	int ret = read_small(pid, "stat", buf, sizeof(buf));

	if (ret)
		return ret;
	return procfs_parse_stat(buf, st);
}

/*
 * Like maps paths, " (deleted)" is removed so the result compares equal to
 * the executable's mapping in procfs_parse_maps output.
 */
int procfs_read_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	bool deleted;
	ssize_t n;

	if (!buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len);
	if (n < 0) {
		n = -errno;
		buf[0] = '\0';
		return (int)n;
	}
	if ((size_t)n >= len) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	buf[n] = '\0';
	buf[without_deleted(buf, (size_t)n, &deleted)] = '\0';
	return 0;
}

int procfs_pagemap_open(pid_t pid)
{
	return open_proc(pid, "pagemap");
}

int procfs_mem_open(pid_t pid)
{
	return open_proc(pid, "mem");
}

int procfs_pagemap_present(int fd, uint64_t start, size_t npages, bool *present)
{
	uint64_t buf[512], page = start / 4096;
	size_t done = 0;

	while (done < npages) {
		size_t want = npages - done < 512 ? npages - done : 512;
		ssize_t n = pread(fd, buf, want * 8, (off_t)((page + done) * 8));

		if (n <= 0 || n % 8)
			return n < 0 ? -errno : -EIO;
		for (ssize_t i = 0; i < n / 8; i++)
			present[done + (size_t)i] = buf[i] >> 63;
		done += (size_t)n / 8;
	}
	return 0;
}

int procfs_parse_thread_regs(const char *text, uint64_t *sp, uint64_t *pc)
{
	unsigned long long v[9];
	long long nr = 0;
	int n;

	if (!strncmp(text, "running", 7))
		return -EAGAIN;
	n = sscanf(text, "%lld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n == 9) {
		*sp = v[6];
		*pc = v[7];
		return 0;
	}
	if (n == 3 && nr == -1) {
		*sp = v[0];
		*pc = v[1];
		return 0;
	}
	return -EINVAL;
}

int procfs_read_thread_regs(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], text[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	text[n] = '\0';
	return procfs_parse_thread_regs(text, sp, pc);
}

int procfs_maps_open(pid_t pid)
{
	return open_proc(pid, "maps");
}

/*
 * PROCMAP_QUERY (Linux 6.11), spelled out: Debian 12's UAPI headers predate
 * it. The layout is the kernel's struct procmap_query (include/uapi/linux/fs.h).
 */
struct procmap_query_ {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};

#define PROCMAP_QUERY_		_IOWR('f', 17, struct procmap_query_)
#define PMQ_READABLE		0x01
#define PMQ_WRITABLE		0x02
#define PMQ_EXECUTABLE		0x04
#define PMQ_SHARED		0x08
#define PMQ_COVERING_OR_NEXT	0x10
#define PMQ_FILE_BACKED		0x20

int procfs_query_file(int maps_fd, uint64_t addr, enum vma_query how, struct vma_info *v)
{
	struct procmap_query_ q = {
		.size = sizeof(q),
		.query_flags = how == QUERY_CODE_AT ? PMQ_EXECUTABLE | PMQ_FILE_BACKED :
						      PMQ_COVERING_OR_NEXT | PMQ_FILE_BACKED,
		.query_addr = addr,
		.vma_name_addr = (uintptr_t)v->path,
		.vma_name_size = sizeof(v->path),
	};

	if (ioctl(maps_fd, PROCMAP_QUERY_, &q))
		return errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP : -errno;
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->offset = q.vma_offset;
	v->inode = q.inode;
	v->perms[0] = q.vma_flags & PMQ_READABLE ? 'r' : '-';
	v->perms[1] = q.vma_flags & PMQ_WRITABLE ? 'w' : '-';
	v->perms[2] = q.vma_flags & PMQ_EXECUTABLE ? 'x' : '-';
	v->perms[3] = q.vma_flags & PMQ_SHARED ? 's' : 'p';
	v->perms[4] = '\0';
	if (!q.vma_name_size)
		v->path[0] = '\0';
	v->path[without_deleted(v->path, strlen(v->path), &v->deleted)] = '\0';
	v->rss = v->pss = v->shared_clean = v->shared_dirty = 0;
	v->private_clean = v->private_dirty = v->anonymous = v->swap = 0;
	return 0;
}

int64_t procfs_pagemap_resident(int fd, uint64_t start, uint64_t end)
{
	uint64_t buf[512], page, last = end / 4096, count = 0;

	for (page = start / 4096; page < last;) {
		size_t want = last - page < 512 ? (size_t)(last - page) : 512;
		ssize_t n = pread(fd, buf, want * 8, (off_t)(page * 8));

		if (n <= 0 || n % 8)
			return n < 0 ? -errno : -EIO;
		for (ssize_t i = 0; i < n / 8; i++)
			count += buf[i] >> 63;	/* bit 63: present in RAM */
		page += (uint64_t)n / 8;
	}
	return (int64_t)(count * 4096);
}
