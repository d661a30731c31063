// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /proc parsers against fixtures captured from a real Open MPI rank
 * (fixtures/ompi_rank.*, pid 4751 of a 2-rank job, SLURM_JOB_ID=4242
 * passed with -x) and hand-written hostile input; the readers against this
 * process and children it starts. Expected values come from the fixture
 * text itself (awk over the same files), so a parser that drifts fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "procfs.h"
#include "spec.h"

#define KB(x)	((uint64_t)(x) * 1024)

/* ---- helpers ---- */

struct collect {
	int n;
	int stop_at;		/* return 42 from this callback (1-based), 0: never */
	struct vma_info first, last;
	struct vma_info heap, vader0, mpi_text;
	uint64_t rss, pss, shared_clean, shared_dirty, private_clean,
		 private_dirty, anonymous, swap;
	struct vma_info all[16];	/* the first 16, for line-by-line checks */
};

static int collect_cb(const struct vma_info *v, void *arg)
{
	struct collect *c = arg;

	if (!c->n)
		c->first = *v;
	c->last = *v;
	if (c->n < 16)
		c->all[c->n] = *v;
	c->n++;
	if (!strcmp(v->path, "[heap]"))
		c->heap = *v;
	if (!strcmp(v->path, "/dev/shm/vader_segment.vm.0.7e740001.0"))
		c->vader0 = *v;
	if (!strcmp(v->path, "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4") &&
	    !strcmp(v->perms, "r-xp"))
		c->mpi_text = *v;
	c->rss += v->rss;
	c->pss += v->pss;
	c->shared_clean += v->shared_clean;
	c->shared_dirty += v->shared_dirty;
	c->private_clean += v->private_clean;
	c->private_dirty += v->private_dirty;
	c->anonymous += v->anonymous;
	c->swap += v->swap;
	return c->n == c->stop_at ? 42 : 0;
}

static struct collect *parse_file(const char *path, bool smaps, int *ret)
{
	struct collect *c = calloc(1, sizeof(*c));
	FILE *f = fopen(path, "r");

	assert_non_null(c);
	assert_non_null(f);
	*ret = procfs_parse_maps(f, smaps, collect_cb, c);
	fclose(f);
	return c;
}

static struct collect *parse_text(const char *text, bool smaps, int *ret)
{
	struct collect *c = calloc(1, sizeof(*c));
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(c);
	assert_non_null(f);
	*ret = procfs_parse_maps(f, smaps, collect_cb, c);
	fclose(f);
	return c;
}

/* An environ_buf as procfs_read_environ builds it: data[len] == '\0'. */
/*
 * The rank a run reads with the shipped specs (uprobe_specs/): which
 * variables, in which order, are the specs' rank, pmi and task variable
 * lines; procfs only reads them.
 */
static int specs_rank(const char *dir, const char *extra, const struct environ_buf *env)
{
	const char *keys[SPEC_RANK_VARS_MAX];
	struct spec_set s;
	char err[256];
	size_t n;
	int rank;

	spec_init(&s);
	if (dir && spec_load_dir(&s, dir, err, sizeof(err)))
		fail_msg("%s", err);
	if (extra && spec_load_file(&s, extra, err, sizeof(err)))
		fail_msg("%s", err);
	n = spec_rank_variables(&s, true, keys, SPEC_RANK_VARS_MAX);
	rank = environ_rank(env, keys, n);
	spec_free(&s);
	return rank;
}

static int shipped_rank(const struct environ_buf *env)
{
	return specs_rank("../../uprobe_specs", NULL, env);
}

/* A block built by hand, as procfs_read_environ leaves one (data[len] == '\0'). */
static void make_environ(struct environ_buf *env, const char *const *vars)
{
	size_t len = 0;

	for (size_t i = 0; vars[i]; i++)
		len += strlen(vars[i]) + 1;
	env->data = calloc(1, len + 1);
	assert_non_null(env->data);
	env->len = 0;
	for (size_t i = 0; vars[i]; i++) {
		memcpy(env->data + env->len, vars[i], strlen(vars[i]) + 1);
		env->len += strlen(vars[i]) + 1;
	}
}

static void load_environ(const char *path, struct environ_buf *env)
{
	FILE *f = fopen(path, "r");
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	env->data = malloc((size_t)len + 1);
	assert_non_null(env->data);
	assert_int_equal(fread(env->data, 1, (size_t)len, f), (size_t)len);
	env->data[len] = '\0';
	env->len = (size_t)len;
	fclose(f);
}

/* ---- maps and smaps ---- */

static void test_real_smaps(void **state)
{
	struct collect *c;
	int ret;

	(void)state;
	c = parse_file("fixtures/ompi_rank.smaps", true, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->n, 282);
	/* Sums of each field over the file; Rss matches smaps_rollup (11168 kB). */
	assert_int_equal(c->rss, KB(11168));
	assert_int_equal(c->pss, KB(5906));
	assert_int_equal(c->shared_clean, KB(7704));
	assert_int_equal(c->shared_dirty, KB(200));
	assert_int_equal(c->private_clean, KB(52));
	assert_int_equal(c->private_dirty, KB(3212));
	assert_int_equal(c->anonymous, KB(3184));
	assert_int_equal(c->swap, 0);

	assert_int_equal(c->first.start, 0x560b71f3a000ULL);
	assert_int_equal(c->first.end, 0x560b71f3b000ULL);
	assert_string_equal(c->first.path, "/tmp/ompicap/r");
	assert_int_equal(c->first.inode, 10952842);
	assert_int_equal(c->first.rss, KB(4));
	assert_int_equal(c->first.pss, KB(2));
	assert_int_equal(c->first.shared_dirty, KB(4));

	assert_int_equal(c->heap.start, 0x560ba6aeb000ULL);
	assert_int_equal(c->heap.end, 0x560ba6c80000ULL);
	assert_string_equal(c->heap.perms, "rw-p");
	assert_int_equal(c->heap.inode, 0);
	assert_int_equal(c->heap.rss, KB(1596));
	assert_int_equal(c->heap.private_dirty, KB(1596));
	assert_int_equal(c->heap.anonymous, KB(1596));

	assert_string_equal(c->vader0.perms, "rw-s");
	assert_int_equal(c->vader0.start, 0x7f58637ff000ULL);
	assert_int_equal(c->vader0.inode, 11);
	assert_false(c->vader0.deleted);
	assert_int_equal(c->vader0.rss, KB(72));
	assert_int_equal(c->vader0.pss, KB(50));
	assert_int_equal(c->vader0.shared_dirty, KB(44));
	assert_int_equal(c->vader0.private_dirty, KB(28));

	assert_int_equal(c->mpi_text.start, 0x7f586a2d7000ULL);
	assert_int_equal(c->mpi_text.end, 0x7f586a39e000ULL);
	assert_int_equal(c->mpi_text.offset, 0x29000);
	assert_int_equal(c->mpi_text.inode, 14884993);
	assert_int_equal(c->mpi_text.rss, KB(700));
	assert_int_equal(c->mpi_text.pss, KB(350));
	assert_int_equal(c->mpi_text.shared_clean, KB(700));

	assert_string_equal(c->last.path, "[vsyscall]");
	assert_int_equal(c->last.start, 0xffffffffff600000ULL);
	assert_string_equal(c->last.perms, "--xp");
	free(c);
}

static void test_real_maps(void **state)
{
	struct collect *m, *s;
	int ret;

	(void)state;
	m = parse_file("fixtures/ompi_rank.maps", false, &ret);
	assert_int_equal(ret, 0);
	s = parse_file("fixtures/ompi_rank.smaps", true, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(m->n, 282);
	/* maps carries no sizes. */
	assert_int_equal(m->rss + m->pss + m->anonymous + m->swap, 0);
	assert_int_equal(m->heap.rss, 0);
	assert_int_equal(m->heap.start, 0x560ba6aeb000ULL);
	/* Same mappings, same header fields as the smaps capture. */
	for (int i = 0; i < 16; i++) {
		assert_int_equal(m->all[i].start, s->all[i].start);
		assert_int_equal(m->all[i].end, s->all[i].end);
		assert_int_equal(m->all[i].offset, s->all[i].offset);
		assert_int_equal(m->all[i].inode, s->all[i].inode);
		assert_string_equal(m->all[i].perms, s->all[i].perms);
		assert_string_equal(m->all[i].path, s->all[i].path);
	}
	assert_int_equal(m->mpi_text.start, 0x7f586a2d7000ULL);
	assert_string_equal(m->last.path, "[vsyscall]");
	free(m);
	free(s);
}

struct find_vma {
	uint64_t addr;
	struct vma_info found;
	bool ok;
};

static int find_vma_cb(const struct vma_info *v, void *arg)
{
	struct find_vma *f = arg;

	if (f->addr < v->start || f->addr >= v->end)
		return 0;
	f->found = *v;
	f->ok = true;
	return 1;
}

/*
 * PROCMAP_QUERY against the maps text, both from the kernel: this test's
 * own code gives the same mapping either way; anonymous memory gives none
 * (only executable file mappings are asked for).
 */
static void test_query_code_self(void **state)
{
	struct find_vma f = { .addr = (uint64_t)(uintptr_t)test_query_code_self };
	struct vma_info *v = malloc(sizeof(*v));
	size_t len = 1 << 20;
	char *anon;
	int fd, ret;

	(void)state;
	assert_non_null(v);
	fd = procfs_maps_open(getpid());
	assert_true(fd >= 0);
	ret = procfs_query_file(fd, f.addr, QUERY_CODE_AT, v);
	if (ret == -EOPNOTSUPP) {
		close(fd);
		free(v);
		skip();		/* before Linux 6.11: the tool reads maps whole */
	}
	assert_int_equal(ret, 0);
	assert_int_equal(procfs_read_maps(getpid(), false, find_vma_cb, &f), 1);
	assert_true(f.ok);
	assert_int_equal(v->start, f.found.start);
	assert_int_equal(v->end, f.found.end);
	assert_int_equal(v->offset, f.found.offset);
	assert_int_equal(v->inode, f.found.inode);
	assert_string_equal(v->perms, f.found.perms);
	assert_string_equal(v->path, f.found.path);
	assert_false(v->deleted);

	anon = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	assert_int_equal(procfs_query_file(fd, (uint64_t)(uintptr_t)anon, QUERY_CODE_AT, v), -ENOENT);
	munmap(anon, len);
	close(fd);
	free(v);
}

/*
 * The first file mapping at or above an address, as the kernel names it:
 * a file mapped one page above an anonymous page is found from that page,
 * with its own bounds, protection and path; nothing is found above it.
 */
static void test_query_file_from(void **state)
{
	char path[] = "/tmp/memattr-test-query.XXXXXX";
	long pg = sysconf(_SC_PAGESIZE);
	struct vma_info *v = malloc(sizeof(*v));
	char *area, *file;
	int fd, mfd, ret;

	(void)state;
	assert_non_null(v);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 3 * pg), 0);
	area = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	file = mmap(area + pg, 3 * pg, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	assert_true(file == area + pg);
	mfd = procfs_maps_open(getpid());
	assert_true(mfd >= 0);
	ret = procfs_query_file(mfd, (uint64_t)(uintptr_t)area, QUERY_FILE_FROM, v);
	if (ret == -EOPNOTSUPP)
		goto out;	/* before Linux 6.11 */
	assert_int_equal(ret, 0);
	assert_int_equal(v->start, (uint64_t)(uintptr_t)file);
	assert_int_equal(v->end, (uint64_t)(uintptr_t)(file + 3 * pg));
	assert_string_equal(v->perms, "r--p");
	assert_string_equal(v->path, path);
	/* Asked from inside it, the same mapping. */
	assert_int_equal(procfs_query_file(mfd, (uint64_t)(uintptr_t)(file + pg), QUERY_FILE_FROM, v), 0);
	assert_int_equal(v->start, (uint64_t)(uintptr_t)file);
	/* No file is mapped that high. */
	assert_int_equal(procfs_query_file(mfd, 0x7ffffffff000ULL, QUERY_FILE_FROM, v), -ENOENT);
out:
	close(mfd);
	munmap(area, 4 * pg);
	close(fd);
	unlink(path);
	free(v);
	if (ret == -EOPNOTSUPP)
		skip();
}

static void test_smaps_text_is_not_maps(void **state)
{
	struct collect *c;
	int ret;

	(void)state;
	/* Field lines where only headers may be: malformed maps. */
	c = parse_file("fixtures/ompi_rank.smaps", false, &ret);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(c->n, 1);
	free(c);
}

static void test_edge_maps(void **state)
{
	struct collect *c;
	int ret;

	(void)state;
	c = parse_file("fixtures/edge.maps", false, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->n, 11);
	assert_string_equal(c->all[0].path, "/home/u/my app/bin/a.out");
	assert_false(c->all[0].deleted);
	assert_string_equal(c->all[1].perms, "r-xp");
	assert_int_equal(c->all[1].offset, 0x1000);
	assert_int_equal(c->all[1].inode, 1234);
	assert_string_equal(c->all[2].path, "[heap]");
	assert_int_equal(c->all[2].end - c->all[2].start, 0x21000);
	assert_string_equal(c->all[3].path, "/dev/shm/vader_segment.node1.0.7e740001.3");
	assert_true(c->all[3].deleted);
	assert_string_equal(c->all[3].perms, "rw-s");
	/* Anonymous, with a trailing blank after the inode. */
	assert_string_equal(c->all[4].path, "");
	assert_false(c->all[4].deleted);
	/* Only the final " (deleted)" is the kernel's; a 3-digit major parses. */
	assert_string_equal(c->all[5].path, "/opt/x/lib (deleted) keep.so");
	assert_true(c->all[5].deleted);
	assert_int_equal(c->all[5].inode, 99);
	assert_string_equal(c->all[6].path, "[anon:glibc malloc]");
	assert_string_equal(c->all[7].path, "/memfd:jit");
	assert_true(c->all[7].deleted);
	assert_string_equal(c->all[8].path, "[stack]");
	assert_string_equal(c->all[9].path, "[vdso]");
	assert_int_equal(c->all[9].start, 0x7ffd000fe000ULL);
	assert_string_equal(c->all[10].path, "[vsyscall]");
	assert_int_equal(c->all[10].end, 0xffffffffff601000ULL);
	free(c);
}

static void test_truncated(void **state)
{
	struct collect *c;
	int ret;

	(void)state;
	/* Five good lines, then "7f586a2ae000-7f586a2d" and EOF. */
	c = parse_file("fixtures/truncated.maps", false, &ret);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(c->n, 5);
	assert_string_equal(c->last.path, "/tmp/ompicap/r");
	assert_string_equal(c->last.perms, "rw-p");
	free(c);

	/* Two whole entries, then a third cut inside "Rss:   16". */
	c = parse_file("fixtures/truncated.smaps", true, &ret);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->all[0].rss, KB(4));
	assert_int_equal(c->all[1].start, 0x560b71f3b000ULL);
	free(c);
}

static void test_garbage(void **state)
{
	static const struct {
		const char *file;
		bool smaps;
		int calls;
	} cases[] = {
		{ "fixtures/garbage.bin", false, 0 },
		{ "fixtures/garbage.bin", true, 0 },
		{ "fixtures/garbage_field.smaps", true, 0 },
		{ "fixtures/garbage_range.maps", false, 0 },
		{ "fixtures/garbage_orphan.smaps", true, 0 },
		{ "fixtures/garbage_perms.maps", false, 0 },
		{ "fixtures/garbage_nul.maps", false, 1 },
		{ "fixtures/garbage_overflow.smaps", true, 0 },
		{ "fixtures/ompi_rank.environ", false, 0 },
		{ "fixtures/ompi_rank.stat", true, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct collect *c;
		int ret;

		c = parse_file(cases[i].file, cases[i].smaps, &ret);
		if (ret != -EINVAL || c->n != cases[i].calls)
			fail_msg("%s (smaps=%d): ret %d, %d callbacks", cases[i].file,
				 cases[i].smaps, ret, c->n);
		free(c);
	}
}

static void test_hostile_text(void **state)
{
	static const char *const bad[] = {
		"0-1 r-xp 0 fe:00 1\n",			/* ok below, sanity */
		"-1000 r-xp 00000000 fe:00 1\n",
		"1000 r-xp 00000000 fe:00 1\n",
		"1000-2000 r-xp\n",
		"1000-2000 r-xp 00000000 fe:00\n",
		"1000-2000 r-xp 00000000 fe00 1\n",
		"1000-2000 r-xp 0000000g fe:00 1\n",
		"1000-2000 r-x 00000000 fe:00 1\n",
		"1000-2000 r-xpq 00000000 fe:00 1\n",
		"1000-2000 r-xp 00000000 fe:00 1x /a\n",
		"1000-2000 r-xp 00000000 fe:00 99999999999999999999999 /a\n",
		"10000000000000000-20000000000000000 r-xp 0 0:0 0\n",
		"\n",
		"garbage\n",
	};
	struct collect *c;
	char *big;
	int ret;

	(void)state;
	c = parse_text(bad[0], false, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->n, 1);
	free(c);
	for (size_t i = 1; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = parse_text(bad[i], false, &ret);
		if (ret != -EINVAL || c->n)
			fail_msg("accepted %s", bad[i]);
		free(c);
	}

	/* Empty input: no mappings, no error. */
	c = parse_text("", true, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->n, 0);
	free(c);

	/* No final newline; fields we do not use, in any shape, are ignored. */
	c = parse_text("1000-3000 rw-p 00000000 00:00 0 \n"
		       "Rss:  8 kB\nTHPeligible:    0\nVmFlags: rd wr mr\n"
		       "ProtectionKey:  0\nSwap: 4 kB\n"
		       "4000-5000 r--s 00001000 00:05 7 /x", true, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->all[0].rss, KB(8));
	assert_int_equal(c->all[0].swap, KB(4));
	assert_string_equal(c->all[1].path, "/x");
	assert_int_equal(c->all[1].rss, 0);
	free(c);

	/* A field we use, not in kB. */
	c = parse_text("1000-3000 rw-p 00000000 00:00 0\nPss: 8 MB\n", true, &ret);
	assert_int_equal(ret, -EINVAL);
	free(c);
	c = parse_text("1000-3000 rw-p 00000000 00:00 0\nPss: 8 kB extra\n", true, &ret);
	assert_int_equal(ret, -EINVAL);
	free(c);
	c = parse_text("1000-3000 rw-p 00000000 00:00 0\nR ss: 8 kB\n", true, &ret);
	assert_int_equal(ret, -EINVAL);
	free(c);

	/* A path longer than PATH_MAX is cut, never overflowed. */
	big = malloc(PATH_MAX * 2 + 64);
	assert_non_null(big);
	strcpy(big, "1000-2000 r--p 00000000 fe:00 5 /");
	memset(big + strlen(big), 'p', PATH_MAX + 100);
	strcpy(big + strlen("1000-2000 r--p 00000000 fe:00 5 /") + PATH_MAX + 100,
	       " (deleted)\n");
	c = parse_text(big, false, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(c->n, 1);
	assert_int_equal(strlen(c->all[0].path), PATH_MAX - 1);
	assert_true(c->all[0].deleted);
	free(c);
	free(big);
}

static void test_callback_stops(void **state)
{
	struct collect *c = calloc(1, sizeof(*c));
	FILE *f;

	(void)state;
	assert_non_null(c);
	c->stop_at = 3;
	f = fopen("fixtures/ompi_rank.smaps", "r");
	assert_non_null(f);
	assert_int_equal(procfs_parse_maps(f, true, collect_cb, c), 42);
	assert_int_equal(c->n, 3);
	/* The third entry was complete when it was handed over. */
	assert_int_equal(c->last.start, 0x560b71f3c000ULL);
	fclose(f);
	free(c);
}

/* ---- stat, statm ---- */

static void test_parse_stat(void **state)
{
	char text[1024];
	struct proc_stat st;
	FILE *f;
	size_t n;

	(void)state;
	f = fopen("fixtures/ompi_rank.stat", "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_int_equal(procfs_parse_stat(text, &st), 0);
	assert_int_equal(st.pid, 4751);
	assert_int_equal(st.ppid, 4746);
	assert_string_equal(st.comm, "r");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.flags, 4194304);
	assert_int_equal(st.starttime, 970827);

	/* comm with spaces and parentheses: it ends at the last ')'. */
	assert_int_equal(procfs_parse_stat("4751 (a) S 1 (b) x) R 4746 4751 2776 0 -1 "
					   "4194304 1398 0 10 0 1 2 0 0 20 0 3 0 970827 "
					   "182988800 2781\n", &st), 0);
	assert_string_equal(st.comm, "a) S 1 (b) x");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 4746);
	assert_int_equal(st.starttime, 970827);
	assert_int_equal(procfs_parse_stat("7 (my prog 2) Z 0 0 0 0 -1 0 0 0 0 0 0 0 0 0 "
					   "20 0 1 0 5", &st), 0);
	assert_string_equal(st.comm, "my prog 2");
	assert_int_equal(st.ppid, 0);
	assert_int_equal(st.starttime, 5);
	/* Empty and over-long comm (the kernel allows 15 bytes; we keep 16). */
	assert_int_equal(procfs_parse_stat("8 () S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6",
					   &st), 0);
	assert_string_equal(st.comm, "");
	assert_int_equal(procfs_parse_stat("9 (0123456789abcdefXYZ) S 1 0 0 0 -1 0 0 0 0 0 "
					   "0 0 0 0 20 0 1 0 6", &st), 0);
	assert_string_equal(st.comm, "0123456789abcdef");
}

static void test_parse_stat_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"12",
		"12 (x",
		"12 (x)",
		"12 (x) S",
		"12 (x) S 1",
		"(x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6",
		"12 x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6",
		"12 (x) S -1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6",
		/* cut before starttime (field 22) */
		"4751 (r) S 4746 4751 2776 0 -1 4194304 1398 0 10 0 1 2 0 0 20 0 3 0",
		"4751 (r) S 4746 4751 2776 0 -1 4194304 1398 0 10 0 1 2 0 0 20 0 3 0 97x",
		"99999999999 (r) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6",
	};
	struct proc_stat st;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procfs_parse_stat(bad[i], &st) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	assert_int_equal(procfs_parse_stat(NULL, &st), -EINVAL);
}

static void test_parse_statm(void **state)
{
	uint64_t rss = 1;

	(void)state;
	/* fixtures/ompi_rank.statm: 2792 pages = 11168 kB, smaps_rollup's Rss. */
	assert_int_equal(procfs_parse_statm("44675 2792 1996 1 0 5307 0\n", 4096, &rss), 0);
	assert_int_equal(rss, KB(11168));
	assert_int_equal(procfs_parse_statm("10 3", 16384, &rss), 0);
	assert_int_equal(rss, 3 * 16384);
	rss = 7;
	assert_int_equal(procfs_parse_statm("", 4096, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm("12", 4096, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm("12 x", 4096, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm("12 -3 0", 4096, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm("12 3x 0", 4096, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm("1 18446744073709551615 0", 4096, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm("12 3 0", 0, &rss), -EINVAL);
	assert_int_equal(procfs_parse_statm(NULL, 4096, &rss), -EINVAL);
	assert_int_equal(rss, 7);
}

/* ---- environ ---- */

static void test_environ_real_rank(void **state)
{
	struct environ_buf env;

	(void)state;
	load_environ("fixtures/ompi_rank.environ", &env);
	assert_int_equal(env.len, 1941);
	assert_int_equal(shipped_rank(&env), 0);
	assert_string_equal(environ_get(&env, "OMPI_COMM_WORLD_SIZE"), "2");
	assert_string_equal(environ_get(&env, "PMIX_NAMESPACE"), "2121531393");
	assert_string_equal(environ_get(&env, "OMPI_FILE_LOCATION"), "/tmp/ompi.vm.0/pid.4746/0/0");
	/* The first variable and a value that holds '=' and ';'. */
	assert_string_equal(environ_get(&env, "OMPI_ALLOW_RUN_AS_ROOT"), "1");
	assert_string_equal(environ_get(&env, "OMPI_MCA_pmix"), "^s1,s2,cray,isolated");
	assert_null(environ_get(&env, "OMPI_ALLOW_RUN_AS"));
	assert_null(environ_get(&env, "SLURM_PROCID"));
	assert_true(environ_matches_job(&env, "4242"));
	assert_true(environ_matches_job(&env, "2121531393"));
	assert_false(environ_matches_job(&env, "424"));
	assert_false(environ_matches_job(&env, "42421"));
	assert_false(environ_matches_job(&env, "2121531392"));	/* mpirun's own namespace */
	assert_false(environ_matches_job(&env, ""));
	assert_false(environ_matches_job(&env, NULL));
	environ_free(&env);
	assert_null(env.data);
	assert_int_equal(env.len, 0);
}

static void test_environ_rank_priority(void **state)
{
	struct environ_buf env;

	(void)state;
	/* SLURM_PROCID=9 comes first in the block but last in priority;
	 * OMPI_COMM_WORLD_RANK is empty and PMIX_RANK is "oops": PMI_RANK wins. */
	load_environ("fixtures/priority.environ", &env);
	assert_int_equal(shipped_rank(&env), 4);
	environ_free(&env);

	/* -1, 3x, " 2", 11 digits, +1: none is a non-negative decimal int. */
	load_environ("fixtures/nonnumeric.environ", &env);
	assert_int_equal(shipped_rank(&env), -1);
	assert_string_equal(environ_get(&env, "PMI_RANK"), " 2");
	environ_free(&env);

	/* Keys that merely contain or prefix a rank key do not count. */
	load_environ("fixtures/prefix.environ", &env);
	assert_int_equal(shipped_rank(&env), -1);
	assert_null(environ_get(&env, "PMIX_RANK"));
	assert_null(environ_get(&env, ""));
	assert_null(environ_get(&env, NULL));
	assert_true(environ_matches_job(&env, "12345"));
	environ_free(&env);
}

/*
 * The rank variables are the specs' data: the order they give, and a
 * variable a spec adds is read, one a spec does not name is not.
 */
static void test_environ_rank_from_specs(void **state)
{
	static const char *const expect[] = {
		"MV2_COMM_WORLD_RANK", "OMPI_COMM_WORLD_RANK",	/* rank variable: file order */
		"PMIX_RANK", "PMI_RANK",				/* pmi variable: batch.spec first */
		"SLURM_PROCID", "PALS_RANKID", "FLUX_TASK_RANK",	/* task variable */
	};
	static const char *const mv2[] = { "MV2_COMM_WORLD_RANK=7", NULL };
	static const char *const fresh[] = { "HOME=/x", "MEMATTR_TEST_RANK=5", NULL };
	/* An mpirun inside a task of srun --mpi=pmi2: the task's PMI_RANK and
	 * SLURM_PROCID are inherited, the MPI's own variable is the rank. */
	static const char *const nested[] = {
		"SLURM_PROCID=0", "PMI_RANK=0", "PMIX_RANK=0", "OMPI_COMM_WORLD_RANK=3", NULL,
	};
	static const char *const task_only[] = { "SLURM_PROCID=2", "FLUX_TASK_RANK=9", NULL };
	const char *keys[SPEC_RANK_VARS_MAX];
	struct environ_buf env;
	struct spec_set s;
	char err[256];
	size_t n;

	(void)state;
	spec_init(&s);
	assert_int_equal(spec_load_dir(&s, "../../uprobe_specs", err, sizeof(err)), 0);
	n = spec_rank_variables(&s, true, keys, SPEC_RANK_VARS_MAX);
	assert_int_equal(n, sizeof(expect) / sizeof(expect[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(keys[i], expect[i]);
	/* Without the task variables (a batch script: no MPI rank), the others in the same order. */
	assert_int_equal(spec_rank_variables(&s, false, keys, SPEC_RANK_VARS_MAX), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(keys[i], expect[i]);
	/* A short buffer keeps the best ones. */
	assert_int_equal(spec_rank_variables(&s, true, keys, 2), 2);
	assert_string_equal(keys[1], "OMPI_COMM_WORLD_RANK");
	assert_int_equal(spec_rank_variables(NULL, true, keys, 2), 0);
	spec_free(&s);

	/* MVAPICH's variable comes from mvapich.spec, nowhere else. */
	make_environ(&env, mv2);
	assert_int_equal(shipped_rank(&env), 7);
	assert_int_equal(specs_rank(NULL, "../../uprobe_specs/openmpi.spec", &env), -1);
	assert_int_equal(specs_rank(NULL, "../../uprobe_specs/mvapich.spec", &env), 7);
	environ_free(&env);

	/* No spec, no rank: nothing is built in. */
	make_environ(&env, nested);
	assert_int_equal(specs_rank(NULL, NULL, &env), -1);
	assert_int_equal(shipped_rank(&env), 3);
	/* Without the MPI's spec, the PMI's variable is the next best. */
	assert_int_equal(specs_rank(NULL, "../../uprobe_specs/batch.spec", &env), 0);
	environ_free(&env);

	make_environ(&env, task_only);
	assert_int_equal(shipped_rank(&env), 2);
	environ_free(&env);

	/* A new MPI is a spec line: its variable is read once a spec names it. */
	make_environ(&env, fresh);
	assert_int_equal(shipped_rank(&env), -1);
	assert_int_equal(specs_rank("../../uprobe_specs", "fixtures/specs/rankvar.spec", &env), 5);
	environ_free(&env);
}

static void test_environ_pbs(void **state)
{
	struct environ_buf env;

	(void)state;
	load_environ("fixtures/pbs.environ", &env);
	assert_true(environ_matches_job(&env, "1234"));
	assert_true(environ_matches_job(&env, "1234.server"));
	assert_true(environ_matches_job(&env, "77"));		/* LSB_JOBID */
	assert_false(environ_matches_job(&env, "123"));
	assert_false(environ_matches_job(&env, "1234.serv"));
	assert_false(environ_matches_job(&env, "server"));
	assert_false(environ_matches_job(&env, "7"));
	assert_int_equal(shipped_rank(&env), -1);
	environ_free(&env);
}

static void test_environ_no_trailing_nul(void **state)
{
	struct environ_buf env;

	(void)state;
	load_environ("fixtures/no_trailing_nul.environ", &env);
	assert_int_equal(env.len, 33);
	assert_int_equal(env.data[env.len - 1], '5');
	assert_int_equal(shipped_rank(&env), 12);
	assert_string_equal(environ_get(&env, "SLURM_JOB_ID"), "555");
	assert_true(environ_matches_job(&env, "555"));
	assert_false(environ_matches_job(&env, "55"));
	environ_free(&env);
}

static void test_environ_empty(void **state)
{
	struct environ_buf none = { 0 };
	char zero = '\0';
	struct environ_buf empty = { &zero, 0 };

	(void)state;
	assert_null(environ_get(&none, "PATH"));
	assert_int_equal(shipped_rank(&none), -1);
	assert_false(environ_matches_job(&none, "1"));
	assert_null(environ_get(&empty, "PATH"));
	assert_int_equal(shipped_rank(&empty), -1);
	environ_free(&none);
}

/* ---- readers, on live processes ---- */

static uint64_t status_kb(const char *key)
{
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtoull(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

static void self_comm(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/comm", "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void test_read_self(void **state)
{
	char exe[PATH_MAX], small[8], comm[32], link[64];
	struct proc_stat st;
	uint64_t rss, pss, vmrss;
	struct stat a, b;

	(void)state;
	assert_int_equal(procfs_read_stat(getpid(), &st), 0);
	assert_int_equal(st.pid, getpid());
	assert_int_equal(st.ppid, getppid());
	/* "test_procfs", or the tool's name under valgrind. */
	self_comm(comm, sizeof(comm));
	assert_string_equal(st.comm, comm);
	assert_int_equal(st.state, 'R');
	assert_true(st.starttime > 0);
	assert_false(st.flags & PROC_PF_KTHREAD);
	/* kthreadd (pid 2 outside a pid namespace) is the kernel threads' parent. */
	if (procfs_read_stat(2, &st) == 0 && !strcmp(st.comm, "kthreadd"))
		assert_true(st.flags & PROC_PF_KTHREAD);

	/* The path names the very file this process runs. */
	assert_int_equal(procfs_read_exe(getpid(), exe, sizeof(exe)), 0);
	assert_int_equal(exe[0], '/');
	assert_int_equal(stat(exe, &a), 0);
	/* Numeric, not "self", which valgrind redirects to the client binary. */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)getpid());
	assert_int_equal(stat(link, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_dev, b.st_dev);
	assert_int_equal(procfs_read_exe(getpid(), small, sizeof(small)), -ENAMETOOLONG);
	assert_string_equal(small, "");

	assert_int_equal(procfs_read_rss(getpid(), &rss), 0);
	vmrss = status_kb("VmRSS:");
	/* Read a moment apart: equal give or take a few pages. */
	assert_true(rss > KB(100));
	assert_true(rss + KB(64) >= KB(vmrss) && rss <= KB(vmrss) + KB(64));
	assert_int_equal(procfs_read_pss(getpid(), &pss), 0);
	assert_true(pss > 0 && pss <= rss + KB(64));
}

struct self_maps {
	const char *exe;
	int n, exe_code, stack;
	uint64_t rss;
};

static int self_cb(const struct vma_info *v, void *arg)
{
	struct self_maps *s = arg;

	s->n++;
	s->rss += v->rss;
	if (!strcmp(v->path, s->exe) && v->perms[2] == 'x')
		s->exe_code++;
	if (!strcmp(v->path, "[stack]"))
		s->stack++;
	return 0;
}

static void test_read_maps_self(void **state)
{
	char exe[PATH_MAX];
	struct self_maps s = { .exe = exe };
	uint64_t rss;

	(void)state;
	assert_int_equal(procfs_read_exe(getpid(), exe, sizeof(exe)), 0);
	assert_int_equal(procfs_read_maps(getpid(), false, self_cb, &s), 0);
	assert_true(s.n > 10);
	assert_int_equal(s.exe_code, 1);
	assert_int_equal(s.stack, 1);
	assert_int_equal(s.rss, 0);

	memset(&s, 0, sizeof(s));
	s.exe = exe;
	assert_int_equal(procfs_read_maps(getpid(), true, self_cb, &s), 0);
	assert_int_equal(s.exe_code, 1);
	assert_int_equal(procfs_read_rss(getpid(), &rss), 0);
	assert_true(s.rss + KB(256) >= rss && s.rss <= rss + KB(256));
}

static pid_t reaped_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static bool gone(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

static int noop_cb(const struct vma_info *v, void *arg)
{
	(void)v;
	(void)arg;
	return 0;
}

static void test_read_gone(void **state)
{
	pid_t pid = reaped_pid();
	struct environ_buf env = { (char *)"x", 1 };
	struct proc_stat st;
	uint64_t v;
	char exe[64] = "junk";

	(void)state;
	assert_true(gone(procfs_read_stat(pid, &st)));
	assert_true(gone(procfs_read_rss(pid, &v)));
	assert_true(gone(procfs_read_pss(pid, &v)));
	assert_true(gone(procfs_read_maps(pid, true, noop_cb, NULL)));
	assert_true(gone(procfs_read_maps(pid, false, noop_cb, NULL)));
	assert_true(gone(procfs_read_environ(pid, &env, 4096)));
	assert_null(env.data);
	assert_int_equal(env.len, 0);
	assert_true(gone(procfs_read_exe(pid, exe, sizeof(exe))));
	assert_string_equal(exe, "");
}

/* Start /usr/bin/sleep (or a copy of it) with a known environment. */
static pid_t spawn_sleep(const char *prog)
{
	char *const argv[] = { (char *)"sleep", (char *)"30", NULL };
	char *const envp[] = {
		(char *)"MARK=1", (char *)"OMPI_COMM_WORLD_RANK=31",
		(char *)"PBS_JOBID=99.srv", NULL,
	};
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	struct environ_buf env;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		execve(prog, argv, envp);
		_exit(127);
	}
	/* Until the exec is done the child still has our environment. */
	for (int i = 0; i < 1000; i++) {
		if (!procfs_read_environ(pid, &env, 4096)) {
			bool ready = environ_get(&env, "MARK") != NULL;

			environ_free(&env);
			if (ready)
				return pid;
		}
		nanosleep(&ts, NULL);
	}
	fail_msg("child %d never exec'ed %s", pid, prog);
	return -1;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_read_environ_child(void **state)
{
	pid_t pid = spawn_sleep("/usr/bin/sleep");
	struct environ_buf env;
	struct proc_stat st;

	(void)state;
	/* "MARK=1\0" is 7 bytes, "OMPI_COMM_WORLD_RANK=31\0" 24, "PBS_JOBID=99.srv\0" 17. */
	assert_int_equal(procfs_read_environ(pid, &env, 4096), 0);
	assert_int_equal(env.len, 48);
	assert_int_equal(env.data[env.len], '\0');
	assert_int_equal(shipped_rank(&env), 31);
	assert_true(environ_matches_job(&env, "99"));
	assert_false(environ_matches_job(&env, "31"));
	environ_free(&env);

	/* Exactly the whole block. */
	assert_int_equal(procfs_read_environ(pid, &env, 48), 0);
	assert_int_equal(env.len, 48);
	assert_true(environ_matches_job(&env, "99.srv"));
	environ_free(&env);

	/* Cut after "...RANK=3": the partial entry goes, or 31 would read as 3. */
	assert_int_equal(procfs_read_environ(pid, &env, 29), 0);
	assert_int_equal(env.len, 7);
	assert_int_equal(shipped_rank(&env), -1);
	assert_string_equal(environ_get(&env, "MARK"), "1");
	environ_free(&env);

	/* Cut right after a NUL: nothing partial to drop. */
	assert_int_equal(procfs_read_environ(pid, &env, 31), 0);
	assert_int_equal(env.len, 31);
	assert_int_equal(shipped_rank(&env), 31);
	assert_false(environ_matches_job(&env, "99"));
	environ_free(&env);

	assert_int_equal(procfs_read_environ(pid, &env, 0), 0);
	assert_int_equal(env.len, 0);
	assert_null(environ_get(&env, "MARK"));
	environ_free(&env);

	assert_int_equal(procfs_read_stat(pid, &st), 0);
	assert_int_equal(st.pid, pid);
	assert_int_equal(st.ppid, getpid());
	assert_string_equal(st.comm, "sleep");
	stop(pid);
}

static void test_read_exe_deleted(void **state)
{
	char copy[] = "/tmp/memattr-sleep-XXXXXX", exe[PATH_MAX], buf[65536];
	int in, out = mkstemp(copy);
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_true(out >= 0);
	in = open("/usr/bin/sleep", O_RDONLY | O_CLOEXEC);
	assert_true(in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	assert_int_equal(fchmod(out, 0755), 0);
	close(out);

	pid = spawn_sleep(copy);
	unlink(copy);
	assert_int_equal(procfs_read_exe(pid, exe, sizeof(exe)), 0);
	assert_string_equal(exe, copy);
	stop(pid);
}

/* cgroup v1 as Slurm 22.05 lays it out here: every controller names the step. */
static void test_slurm_cgroup_v1(void **state)
{
	const char *text =
		"12:pids:/\n"
		"7:freezer:/slurm_node1/uid_1001/job_42/step_0/task_3\n"
		"5:memory:/slurm_node1/uid_1001/job_42/step_0/task_3\n"
		"1:name=systemd:/init.scope\n";
	struct slurm_cgroup sc;

	(void)state;
	assert_int_equal(procfs_parse_slurm_cgroup(text, &sc), 0);
	assert_int_equal(sc.job, 42);
	assert_string_equal(sc.step, "0");
	assert_int_equal(procfs_parse_slurm_cgroup("4:cpuset:/slurm/uid_0/job_7/step_batch\n", &sc), 0);
	assert_int_equal(sc.job, 7);
	assert_string_equal(sc.step, "batch");
	/* A named hierarchy has no controller: not where Slurm puts a job. */
	assert_int_equal(procfs_parse_slurm_cgroup("1:name=slurmish:/slurm/uid_0/job_7/step_0\n", &sc), -ENOENT);
	assert_int_equal(procfs_parse_slurm_cgroup("1:cpu,name=x:/slurm/uid_0/job_7/step_0\n", &sc), 0);
	assert_int_equal(sc.job, 7);
}

/* cgroup v2, as most sites run it: one line, below slurmstepd's scope. */
static void test_slurm_cgroup_v2(void **state)
{
	struct slurm_cgroup sc;

	(void)state;
	assert_int_equal(procfs_parse_slurm_cgroup(
		"0::/system.slice/slurmstepd.scope/job_123456/step_17/user/task_0\n", &sc), 0);
	assert_int_equal(sc.job, 123456);
	assert_string_equal(sc.step, "17");
	assert_int_equal(procfs_parse_slurm_cgroup(
		"0::/system.slice/node2_slurmstepd.scope/job_9/step_interactive/user/task_special", &sc), 0);
	assert_int_equal(sc.job, 9);
	assert_string_equal(sc.step, "interactive");
	/* slurmstepd itself sits in job_<J>/step_<S>/slurm, still the step's. */
	assert_int_equal(procfs_parse_slurm_cgroup(
		"0::/system.slice/slurmstepd.scope/job_5/step_extern/slurm\n", &sc), 0);
	assert_string_equal(sc.step, "extern");
}

/* mkdir -p under root, each new directory owned by uid. */
static void mkdirs(const char *root, const char *path, uid_t uid)
{
	char buf[512], *p;

	snprintf(buf, sizeof(buf), "%s%s", root, path);
	for (p = buf + strlen(root) + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (!mkdir(buf, 0755))
			assert_int_equal(chown(buf, uid, uid), 0);
		*p = c;
		if (!c)
			break;
	}
}

/*
 * A cgroup path is Slurm's only if Slurm's directories are root's: a user
 * with a delegated subtree can mkdir "slurm/uid_<O>/job_<J>/step_0" in it.
 */
static void test_slurm_cgroup_trust(void **state)
{
	char root[] = "/tmp/test_procfs_cg.XXXXXX", link[600], cmd[600];
	struct slurm_cgroup sc;

	(void)state;
	if (geteuid() != 0)
		skip();	/* the forged tree must belong to another user */
	assert_non_null(mkdtemp(root));
	/* v2, Slurm's: root's all the way down to slurmstepd.scope. */
	mkdirs(root, "/system.slice/slurmstepd.scope/job_7/step_0", 0);
	assert_int_equal(procfs_parse_slurm_cgroup("0::/system.slice/slurmstepd.scope/job_7/step_0\n", &sc), 0);
	assert_string_equal(sc.anchor, "/system.slice/slurmstepd.scope");
	assert_int_equal(procfs_slurm_cgroup_trusted(root, &sc), 0);
	/* The same names below a user's delegated subtree: not Slurm's. */
	mkdirs(root, "/user.slice/user@1000.service", 0);
	assert_int_equal(chown(strcat(strcpy(link, root), "/user.slice/user@1000.service"), 1000, 1000), 0);
	mkdirs(root, "/user.slice/user@1000.service/slurm/uid_1001/job_7/step_0", 1000);
	assert_int_equal(procfs_parse_slurm_cgroup(
		"0::/user.slice/user@1000.service/slurm/uid_1001/job_7/step_0\n", &sc), 0);
	assert_int_equal(procfs_slurm_cgroup_trusted(root, &sc), -EPERM);
	/* v1: the hierarchy's own mount; a link inside the path is not followed. */
	mkdirs(root, "/freezer/slurm_node1/uid_1001/job_8/step_1", 0);
	assert_int_equal(procfs_parse_slurm_cgroup("7:freezer:/slurm_node1/uid_1001/job_8/step_1\n", &sc), 0);
	assert_string_equal(sc.controllers, "freezer");
	assert_int_equal(procfs_slurm_cgroup_trusted(root, &sc), 0);
	snprintf(link, sizeof(link), "%s/freezer/slurm_link", root);
	assert_int_equal(symlink("slurm_node1", link), 0);
	assert_int_equal(procfs_parse_slurm_cgroup("7:freezer:/slurm_link/uid_1001/job_8/step_1\n", &sc), 0);
	assert_int_equal(procfs_slurm_cgroup_trusted(root, &sc), -EPERM);
	/* A hierarchy that is not mounted: not believed. */
	assert_int_equal(procfs_parse_slurm_cgroup("3:cpuset:/slurm_node1/uid_1001/job_8/step_1\n", &sc), 0);
	assert_int_equal(procfs_slurm_cgroup_trusted(root, &sc), -EPERM);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* Paths that are not a Slurm step: no job, however close they look. */
static void test_slurm_cgroup_not(void **state)
{
	static const char *const not_slurm[] = {
		"0::/user.slice/user-1000.slice/session-3.scope\n",
		"0::/system.slice/cron.service/job_12/step_0\n",	/* not below Slurm */
		"0::/system.slice/slurmstepd.scope/job_12\n",		/* the job, no step */
		"0::/system.slice/slurmstepd.scope/job_x12/step_0\n",
		"0::/system.slice/slurmstepd.scope/job_/step_0\n",
		"0::/system.slice/slurmstepd.scope/job_12/step_\n",
		"7:freezer\n",
		"",
		"::::::\n",
	};
	struct slurm_cgroup sc;

	(void)state;
	for (size_t i = 0; i < sizeof(not_slurm) / sizeof(not_slurm[0]); i++)
		assert_int_equal(procfs_parse_slurm_cgroup(not_slurm[i], &sc), -ENOENT);
}

/* /proc/PID/task/TID/syscall: a thread's stack pointer and pc, when it waits in the kernel. */
static void test_thread_regs(void **state)
{
	uint64_t sp = 0, pc = 0;

	(void)state;
	assert_int_equal(procfs_parse_thread_regs("232 0x5 0x7ffd1000 0x10 0xffffffff 0x0 0x0 "
						  "0x7ffd0ff0 0x7f00deadbeef\n", &sp, &pc), 0);
	assert_int_equal(sp, 0x7ffd0ff0);
	assert_int_equal(pc, 0x7f00deadbeef);
	assert_int_equal(procfs_parse_thread_regs("-1 0x7ffc0000 0x401000\n", &sp, &pc), 0);
	assert_int_equal(sp, 0x7ffc0000);
	assert_int_equal(pc, 0x401000);
	assert_int_equal(procfs_parse_thread_regs("running\n", &sp, &pc), -EAGAIN);
	assert_int_equal(procfs_parse_thread_regs("garbage", &sp, &pc), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_smaps),
		cmocka_unit_test(test_real_maps),
		cmocka_unit_test(test_query_code_self),
		cmocka_unit_test(test_query_file_from),
		cmocka_unit_test(test_smaps_text_is_not_maps),
		cmocka_unit_test(test_edge_maps),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_parse_stat_bad),
		cmocka_unit_test(test_parse_statm),
		cmocka_unit_test(test_environ_real_rank),
		cmocka_unit_test(test_environ_rank_priority),
		cmocka_unit_test(test_environ_rank_from_specs),
		cmocka_unit_test(test_environ_pbs),
		cmocka_unit_test(test_environ_no_trailing_nul),
		cmocka_unit_test(test_environ_empty),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_maps_self),
		cmocka_unit_test(test_read_gone),
		cmocka_unit_test(test_read_environ_child),
		cmocka_unit_test(test_read_exe_deleted),
		cmocka_unit_test(test_slurm_cgroup_v1),
		cmocka_unit_test(test_slurm_cgroup_v2),
		cmocka_unit_test(test_slurm_cgroup_not),
		cmocka_unit_test(test_slurm_cgroup_trust),
		cmocka_unit_test(test_thread_regs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
