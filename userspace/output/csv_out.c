// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Output directory and CSV files.
 *
 * The tool runs as root and writes where the user points it, which may be a
 * directory other users can write. So: the directory itself is opened once,
 * without following a symlink, and every file is reached through that fd
 * with O_NOFOLLOW; a file that is there already must be a regular file with
 * one link (not a hard link to something else) owned by root or by the user
 * we write for, and is only truncated after those checks; a FIFO cannot
 * block the open. Symlinks in the parent components of the path are
 * followed: the path is the invoking user's choice.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv_out.h"

static void set_err(char *err, size_t errlen, const char *fmt, const char *path,
		    const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, path, why);
}

/* Why open(path, O_DIRECTORY | O_NOFOLLOW) failed, in words. */
static const char *open_dir_reason(const char *path, int saved)
{
	struct stat st;

	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return "is a symlink, refusing to follow it";
		if (!S_ISDIR(st.st_mode))
			return "exists and is not a directory";
	}
	return strerror(saved);
}

/* Can we create a file here? Root passes access(2) checks, so try it. */
static int probe_writable(int dirfd)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), ".memattr-probe.%d", (int)getpid());
	/* A leftover of a run with our pid, or a planted link: remove the name, not its target. */
	unlinkat(dirfd, name, 0);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return unlinkat(dirfd, name, 0);
}

int outdir_open(struct output_dir *od, const char *path, uid_t uid, gid_t gid,
		char *err, size_t errlen)
{
	bool created = false;
	size_t len;
	int fd, saved;

	od->dirfd = -1;
	od->failed = NULL;
	od->nfailed = 0;
	od->uid = uid;
	od->gid = gid;
	od->path[0] = '\0';
	if (!path || !*path) {
		set_err(err, errlen, "output directory %s: %s", "\"\"", "empty path");
		return -1;
	}
	len = strlen(path);
	if (len >= sizeof(od->path)) {
		set_err(err, errlen, "output directory %.64s...: %s", path, "path too long");
		return -1;
	}
	memcpy(od->path, path, len + 1);
	/* "link/" would resolve through the symlink despite O_NOFOLLOW. */
	while (len > 1 && od->path[len - 1] == '/')
		od->path[--len] = '\0';

	if (mkdir(od->path, 0750) == 0) {
		created = true;
	} else if (errno != EEXIST) {
		set_err(err, errlen, "output directory %s: cannot create it: %s", od->path,
			strerror(errno));
		return -1;
	}
	fd = open(od->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		set_err(err, errlen, "output directory %s: %s", od->path,
			open_dir_reason(od->path, saved));
		return -1;
	}
	if (created) {
		/* Exactly 0750 whatever the umask, and the user's, not root's. */
		if (fchmod(fd, 0750) ||
		    ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid))) {
			set_err(err, errlen, "output directory %s: cannot set its mode or owner: %s",
				od->path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (probe_writable(fd)) {
		set_err(err, errlen, "output directory %s: not writable: %s", od->path,
			strerror(errno));
		close(fd);
		return -1;
	}
	od->dirfd = fd;
	return 0;
}

void outdir_close(struct output_dir *od)
{
	if (od->dirfd >= 0)
		close(od->dirfd);
	od->dirfd = -1;
	for (size_t i = 0; i < od->nfailed; i++)
		free(od->failed[i]);
	free(od->failed);
	od->failed = NULL;
	od->nfailed = 0;
}

void outdir_write_failed(struct output_dir *od, const char *name, int err, const char *detail)
{
	char **v;

	for (size_t i = 0; i < od->nfailed; i++)
		if (!strcmp(od->failed[i], name))
			return;		/* said once: a full disk would repeat it every sample */
	fprintf(stderr, "memattr-bpf: cannot write %s/%s: %s%s%s\n", od->path, name,
		strerror(err), detail ? ": " : "", detail ? detail : "");
	v = realloc(od->failed, (od->nfailed + 1) * sizeof(*v));
	if (!v)
		return;
	od->failed = v;
	/* Counted even when the name cannot be kept: a failure is never lost. */
	od->failed[od->nfailed] = strdup(name);
	if (od->failed[od->nfailed])
		od->nfailed++;
}

/* A plain file name: no directory part, nothing that walks out. */
static bool name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/*
 * Finish a file we hold open for writing: it must be ours to write (see the
 * top of the file), then emptied, 0640, given to the user, and blocking.
 */
static FILE *adopt(struct output_dir *od, int fd)
{
	struct stat st;
	FILE *f;
	int saved;

	if (fstat(fd, &st))
		goto fail;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (st.st_uid != geteuid() && (od->uid == (uid_t)-1 || st.st_uid != od->uid))) {
		errno = EPERM;
		goto fail;
	}
	if (ftruncate(fd, 0) || fchmod(fd, 0640))
		goto fail;
	if ((od->uid != (uid_t)-1 || od->gid != (gid_t)-1) && fchown(fd, od->uid, od->gid))
		goto fail;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		goto fail;
	f = fdopen(fd, "w");
	if (f)
		return f;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return NULL;
}

FILE *outdir_create(struct output_dir *od, const char *name)
{
	int fd;

	if (od->dirfd < 0 || !name_ok(name)) {
		errno = EINVAL;
		return NULL;
	}
	/* No O_TRUNC: a file is emptied only once adopt() has vetted it. */
	fd = openat(od->dirfd, name,
		    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0640);
	if (fd < 0)
		return NULL;
	return adopt(od, fd);
}

/* What sits on name that we will not write, in words; NULL: nothing there. */
static const char *planted(struct output_dir *od, const char *name)
{
	struct stat st;

	if (fstatat(od->dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return NULL;
	if (S_ISLNK(st.st_mode))
		return "a symlink";
	if (S_ISFIFO(st.st_mode))
		return "a FIFO";
	if (S_ISDIR(st.st_mode))
		return "a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (st.st_nlink != 1)
		return "a hard link";
	return "another user's file";
}

#define BESIDE_MAX	100	/* rank-3.1.csv ... rank-3.99.csv */

FILE *outdir_create_beside(struct output_dir *od, const char *name, char *used, size_t usedlen,
			   const char **why)
{
	const char *ext;
	FILE *f;
	int fd, n, saved;

	*why = NULL;
	snprintf(used, usedlen, "%s", name);
	f = outdir_create(od, name);
	if (f || od->dirfd < 0 || !name_ok(name))
		return f;
	saved = errno;
	*why = planted(od, name);
	if (!*why) {
		errno = saved;		/* nothing planted: a real failure (no space, ...) */
		return NULL;
	}
	/* "rank-3" + ".1" + ".csv.gz": the number goes before the first extension. */
	ext = strchr(name, '.');
	if (!ext)
		ext = name + strlen(name);
	for (int i = 1; i < BESIDE_MAX; i++) {
		n = snprintf(used, usedlen, "%.*s.%d%s", (int)(ext - name), name, i, ext);
		if (n < 0 || (size_t)n >= usedlen) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		fd = openat(od->dirfd, used,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0640);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return NULL;
		f = adopt(od, fd);
		if (!f) {
			saved = errno;
			unlinkat(od->dirfd, used, 0);	/* ours: O_EXCL made it */
			errno = saved;
		}
		return f;
	}
	errno = EEXIST;
	return NULL;
}

FILE *outdir_begin_replace(struct output_dir *od, const char *name, char *tmpname, size_t tmplen)
{
	int n, fd, saved;
	FILE *f;

	if (od->dirfd < 0 || !name_ok(name) || !tmpname) {
		errno = EINVAL;
		return NULL;
	}
	n = snprintf(tmpname, tmplen, ".%s.tmp.%d", name, (int)getpid());
	if (n < 0 || (size_t)n >= tmplen) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	/* Always a fresh file: whatever sits on the name (a stale temp, a link) goes. */
	if (unlinkat(od->dirfd, tmpname, 0) && errno != ENOENT)
		return NULL;
	fd = openat(od->dirfd, tmpname,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0640);
	if (fd < 0)
		return NULL;
	f = adopt(od, fd);
	if (!f) {
		saved = errno;
		unlinkat(od->dirfd, tmpname, 0);	/* ours: O_EXCL made it */
		errno = saved;
	}
	return f;
}

void outdir_abort(struct output_dir *od, FILE *f, const char *tmpname)
{
	int saved = errno;

	if (f)
		fclose(f);
	if (od->dirfd >= 0 && tmpname)
		unlinkat(od->dirfd, tmpname, 0);
	errno = saved;
}

int outdir_commit_as(struct output_dir *od, FILE *f, const char *tmpname, const char *name,
		     bool durable)
{
	int bad, saved;

	if (!f)
		return -1;
	/*
	 * The rename alone makes the replacement atomic for readers and
	 * across a crash of the tool: name is the old file or the new one,
	 * whole. The fsyncs only add survival of a crash of the node, which
	 * a file rewritten every few seconds does not need at every rewrite
	 * (its next one follows, and the timelines beside it are not synced
	 * either); the last one, at the job's end, is synced.
	 */
	bad = fflush(f) || ferror(f) || (durable && fsync(fileno(f)));
	saved = errno;
	if (fclose(f) && !bad) {
		bad = 1;
		saved = errno;
	}
	if (!bad && (!name_ok(name) || od->dirfd < 0)) {
		bad = 1;
		saved = EINVAL;
	}
	/* renameat replaces a symlink on name itself; it never writes through it. */
	if (!bad && renameat(od->dirfd, tmpname, od->dirfd, name)) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		unlinkat(od->dirfd, tmpname, 0);
		errno = saved;
		return -1;
	}
	/* The rename itself is durable once the directory is synced. */
	if (durable)
		fsync(od->dirfd);
	return 0;
}

int outdir_commit(struct output_dir *od, FILE *f, const char *tmpname, const char *name)
{
	return outdir_commit_as(od, f, tmpname, name, true);
}

void csv_file_name(int rank, pid_t pid, char *out, size_t outlen)
{
	if (rank >= 0)
		snprintf(out, outlen, "rank-%d.csv", rank);
	else
		snprintf(out, outlen, "pid-%d.csv", (int)pid);
}

static int put(FILE *f, const char *s, size_t len)
{
	if (len && fwrite(s, 1, len, f) != len)
		return -1;
	return ferror(f) ? -1 : 0;
}

static int put_str(FILE *f, const char *s)
{
	return put(f, s, strlen(s));
}

/* RFC 4180: quote a field holding a comma, quote or line break; double quotes inside. */
static int put_field(FILE *f, const char *s)
{
	if (!s)
		return 0;
	if (!strpbrk(s, ",\"\r\n"))
		return put_str(f, s);
	if (put(f, "\"", 1))
		return -1;
	for (const char *q; (q = strchr(s, '"')); s = q + 1)
		if (put(f, s, (size_t)(q - s) + 1) || put(f, "\"", 1))
			return -1;
	if (put_str(f, s) || put(f, "\"", 1))
		return -1;
	return 0;
}

/* Formatted text, written with its length checked. */
static int putf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(FILE *f, const char *fmt, ...)
{
	char buf[1024];		/* room for any double in %.3f */
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return put(f, buf, (size_t)n);
}

/* "<rank>,<pid>," with the rank left empty for a process that is not one. */
static int put_rank_pid(FILE *f, int rank, pid_t pid)
{
	if (rank >= 0)
		return putf(f, "%d,%d,", rank, (int)pid);
	return putf(f, ",%d,", (int)pid);
}

int csv_put_rank_pid(FILE *f, int rank, pid_t pid)
{
	return put_rank_pid(f, rank, pid);
}

int csv_put_field(FILE *f, const char *s)
{
	return put_field(f, s);
}

int csv_write_header(FILE *f)
{
	return put_str(f, CSV_HEADER "\n");
}

/* ",<node>\n", or just the line break when there is no node column. */
static int put_node_end(FILE *f, const char *node)
{
	if (node && (put(f, ",", 1) || put_field(f, node)))
		return -1;
	return put(f, "\n", 1);
}

int csv_write_node_row(FILE *f, double time_s, int rank, pid_t pid,
		       const char *component, int64_t rss, int64_t pss, const char *node)
{
	if (putf(f, "%.3f,", time_s) || put_rank_pid(f, rank, pid) ||
	    put_field(f, component) ||
	    putf(f, ",%" PRId64 ",%" PRId64, rss, pss) || put_node_end(f, node))
		return -1;
	return 0;
}

int csv_write_row(FILE *f, double time_s, int rank, pid_t pid,
		  const char *component, int64_t rss, int64_t pss)
{
	return csv_write_node_row(f, time_s, rank, pid, component, rss, pss, NULL);
}

int summary_write_header(FILE *f)
{
	return put_str(f, SUMMARY_HEADER "\n");
}

int summary_write_row(FILE *f, const struct summary_row *row)
{
	if (put_rank_pid(f, row->rank, row->pid) || put_field(f, row->component) ||
	    putf(f, ",%" PRId64 ",%.3f,%" PRId64 ",%.3f,%" PRId64 ",%" PRId64,
		 row->peak_rss, row->peak_rss_time, row->peak_pss, row->peak_pss_time,
		 row->final_rss, row->final_pss))
		return -1;
	if (row->oom ? putf(f, ",%.3f,%" PRId64, row->oom_time, row->oom_growth) : put_str(f, ",,"))
		return -1;
	if (!row->peak_source ? put_str(f, ",,,") :
	    put_str(f, ",") || put_field(f, row->peak_source) ||
	    (row->kernel_hwm >= 0 ? putf(f, ",%" PRId64 ",%d", row->kernel_hwm,
					 row->hwm_before_attach ? 1 : 0) : put_str(f, ",,")))
		return -1;
	if (put_node_end(f, row->node))
		return -1;
	return 0;
}
