/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node service's exec filter: may the process that just exec'd belong
 * to a job? User space takes a job from the environment (a variable of
 * MEMATTR_JOB_KEYS with a value) or from Slurm's cgroup (a job_<N>
 * component); an exec that shows neither cannot start or join a job, and
 * waking user space to read its /proc files costs the node for nothing.
 *
 * Fail open: what the filter cannot judge (an environment past its bound,
 * a read that fails, a cgroup tree past its bound) is reported as before,
 * and counted (STAT_EXEC_UNDECIDED). The filter only ever says more than
 * user space would accept, never less: any job_<digit> component of any
 * hierarchy (user space also wants a Slurm anchor above it), any
 * non-empty job variable.
 *
 * Included once, by memattr.bpf.c (it needs vmlinux.h and libbpf's headers).
 */
#ifndef MEMATTR_EXEC_FILTER_H
#define MEMATTR_EXEC_FILTER_H

enum exec_verdict {
	EXEC_NO_JOB = 0,
	EXEC_JOB,
	EXEC_UNDECIDED,
};

#define EXEC_ENV_CHUNK		4096	/* the environment is read this much at a time ... */
#define EXEC_ENV_MAX		(256 << 10)	/* ... up to this; longer: undecided */
/*
 * Every index into the buffer is masked to EXEC_ENV_MASK before use, and
 * the buffer is that big plus a word pair: the verifier then bounds each
 * access by the mask alone, as old kernels (6.1) do, whatever it can
 * deduce from the comparisons (newer ones deduce more).
 */
#define EXEC_ENV_MASK		(2 * EXEC_ENV_CHUNK - 1)
#define EXEC_ENV_PAD		32	/* past the mask: the 16 bytes of the last entry compared, plus slack */
#define EXEC_CG_SUBSYS		16	/* v1 controllers looked at (Debian's kernels have 14) */
#define EXEC_CG_DEPTH		32	/* a cgroup's ancestors looked at */

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the environment scan compares little-endian words"
#endif

/*
 * A variable is compared as "NAME=" in the first 16 bytes of an entry,
 * then its value's first byte, which must not be '\0': so "NAME=" is at
 * most 15 bytes. The masks fold at compile time.
 */
#define EXEC_KEY_FITS(k) \
	_Static_assert(sizeof(#k) <= 15, #k " is too long for the exec filter's words");
MEMATTR_JOB_KEYS(EXEC_KEY_FITS)

struct exec_key {
	union {
		char s[16];
		__u64 w[2];
	};
	__u32 len;		/* of "NAME=" */
};

#define EXEC_KEY(k)	{ .s = #k "=", .len = sizeof(#k) },
static const struct exec_key exec_keys[] = { MEMATTR_JOB_KEYS(EXEC_KEY) };
#define EXEC_NKEYS	(sizeof(exec_keys) / sizeof(exec_keys[0]))

struct exec_env_buf {
	__u8 b[EXEC_ENV_MASK + 1 + EXEC_ENV_PAD] __attribute__((aligned(8)));
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_env_buf);
} exec_env SEC(".maps");

struct env_scan {
	struct exec_env_buf *eb;	/* looked up once, not at every word */
	__u64 start;		/* the environment's user address */
	__u32 len;
	__u32 verdict;
};

/* Does the entry at b[pos] name a job ("NAME=" and a value)? */
static __always_inline bool env_entry_is_job(const struct exec_env_buf *eb, __u64 pos)
{
	__u64 w0, w1, m0, m1;

	pos &= EXEC_ENV_MASK;	/* at most EXEC_ENV_CHUNK already: for the verifier */
	/*
	 * Whole words at any byte: the verifier allows a misaligned load
	 * from a map value where the CPU does them (x86-64, arm64). Written
	 * as b + pos, not &b[pos]: of the latter clang assumes alignment 1
	 * and loads byte by byte (eight loads and fourteen shifts and ors).
	 */
	w0 = *(const __u64 *)(eb->b + pos);
	w1 = *(const __u64 *)(eb->b + pos + 8);
#pragma unroll
	for (__u32 k = 0; k < EXEC_NKEYS; k++) {
		__u32 n = exec_keys[k].len;

		m0 = n >= 8 ? ~0ULL : (1ULL << (n * 8)) - 1;
		m1 = n > 8 ? (1ULL << ((n - 8) * 8)) - 1 : 0;
		if (!((w0 ^ exec_keys[k].w[0]) & m0) && !((w1 ^ exec_keys[k].w[1]) & m1) &&
		    eb->b[pos + n])
			return true;
	}
	return false;
}

/* 0x80 in each byte of w that is 0, exactly (no borrow between bytes). */
static __always_inline __u64 zero_bytes(__u64 w)
{
	return ~(((w & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | w | 0x7f7f7f7f7f7f7f7fULL);
}

/*
 * A word of the environment with '\0's in it (z: zero_bytes), at off in
 * the environment and at in in the buffer: each ends an entry, and the
 * next one starts after it. Does one of those name a job? A global
 * function: the verifier checks it once, not at each of its callers.
 */
__noinline int exec_env_zeros_job(const struct exec_env_buf *eb, __u64 z, __u64 off, __u64 in, __u64 len)
{
	__u64 low;

	if (!eb)
		return 0;
	for (int t = 0; t < 8 && z; t++) {
		__u64 j = 0;

		low = z & -z;
		z &= z - 1;
		if (low >> 32) {
			j += 4;
			low >>= 32;
		}
		if (low >> 16) {
			j += 2;
			low >>= 16;
		}
		if (low >> 8)
			j += 1;
		/* The entry after the environment's last '\0' is not one. */
		if (off + j + 1 >= len)
			return 0;
		if (env_entry_is_job(eb, in + j + 1))
			return 1;
	}
	return 0;
}

#define EXEC_ENV_BLOCK	64	/* bytes a bpf_loop step looks at: its own cost is paid once for 8 words */

/*
 * bpf_loop callback, one block of the environment. A chunk is read when
 * its first block comes, with the 16 bytes after it: an entry starting at
 * the chunk's end is compared whole.
 */
static long env_block(__u32 i, struct env_scan *s)
{
	__u64 off = (__u64)i * EXEC_ENV_BLOCK, in = off & (EXEC_ENV_CHUNK - 1), n, z;
	struct exec_env_buf *eb = s->eb;

	if (!eb || off >= s->len) {
		s->verdict = EXEC_UNDECIDED;
		return 1;
	}
	if (!in) {
		n = s->len - off;
		if (n > EXEC_ENV_CHUNK + 16)
			n = EXEC_ENV_CHUNK + 16;
		n &= EXEC_ENV_MASK;	/* no change: a bound the verifier cannot lose */
		if (bpf_probe_read_user(eb->b, n, (const void *)(s->start + off))) {
			s->verdict = EXEC_UNDECIDED;
			return 1;
		}
		if (!off && env_entry_is_job(eb, 0)) {
			s->verdict = EXEC_JOB;
			return 1;
		}
	}
#pragma unroll
	for (int k = 0; k < EXEC_ENV_BLOCK / 8; k++) {
		__u64 at = (in + k * 8) & (EXEC_ENV_CHUNK - 8);

		if (off + k * 8 >= s->len)
			return 1;
		z = zero_bytes(*(__u64 *)(eb->b + at));	/* one load: see env_entry_is_job */
		if (z && exec_env_zeros_job(eb, z, off + k * 8, at, s->len)) {
			s->verdict = EXEC_JOB;
			return 1;
		}
	}
	return 0;
}

/* The new image's environment, as exec just wrote it on its stack. */
static __always_inline __u32 exec_env_verdict(struct task_struct *p)
{
	struct env_scan s = { .verdict = EXEC_NO_JOB };
	struct mm_struct *mm = p->mm;	/* typed loads: cheaper than a read helper each */
	__u32 key = 0;
	__u64 end;

	if (!mm)
		return EXEC_UNDECIDED;
	s.start = mm->env_start;
	end = mm->env_end;
	if (end < s.start)
		return EXEC_UNDECIDED;
	if (end - s.start > EXEC_ENV_MAX)
		return EXEC_UNDECIDED;
	s.len = end - s.start;
	s.eb = bpf_map_lookup_elem(&exec_env, &key);
	if (s.len)
		bpf_loop((s.len + EXEC_ENV_BLOCK - 1) / EXEC_ENV_BLOCK, env_block, &s, 0);
	return s.verdict;
}

/*
 * Is cgrp, or a cgroup above it, named "job_<digit>..."? Slurm's job, or
 * something that looks like it: reported. A root has no name to look at.
 * The cgroups are walked as the kernel's own typed pointers (a load each),
 * not by bpf_probe_read: on a node with cgroup v1's dozen hierarchies the
 * reads were most of an exec's cost. Its own function, so the verifier
 * checks its loop once, not at every place it is called.
 */
static __noinline __u32 cg_job_above(struct cgroup *cgrp)
{
	for (int d = 0; d < EXEC_CG_DEPTH; d++) {
		struct cgroup_subsys_state *parent;
		char c[8] = {};

		if (!cgrp)
			return EXEC_NO_JOB;
		parent = cgrp->self.parent;
		if (!parent)
			return EXEC_NO_JOB;
		if (bpf_probe_read_kernel_str(c, sizeof(c), cgrp->kn->name) < 0)
			return EXEC_UNDECIDED;
		if (c[0] == 'j' && c[1] == 'o' && c[2] == 'b' && c[3] == '_' && c[4] >= '0' && c[4] <= '9')
			return EXEC_JOB;
		cgrp = parent->cgroup;
	}
	return EXEC_UNDECIDED;
}

/*
 * Each controller's root css, as first seen (0 until then). A root css is
 * the kernel's for good: made at boot, held by init_css_set, moved from
 * hierarchy to hierarchy at a v1 mount or unmount, never freed. So a css
 * equal to one of these is a root, known without a load of it: on a v1
 * node most of a task's dozen controllers are at their root, and each of
 * them cost a load of its css and one of its cgroup.
 */
__u64 exec_root_css[EXEC_CG_SUBSYS];

/*
 * The task's cgroup in v2's hierarchy and in each v1 controller's: the
 * hierarchies Slurm puts a job in (procfs.c's rule leaves v1's named
 * hierarchies, which have no controller, out too).
 */
struct css_set___subsys {
	/* As many controllers as a kernel may have: CO-RE takes the running one's count. */
	struct cgroup_subsys_state *subsys[EXEC_CG_SUBSYS];
	struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

/*
 * A controller's cgroup, walked unless it cannot name a job that the walks
 * before it did not: a root (no name), a cgroup of v2's hierarchy (v2's
 * walk went through it: a controller's css there is the task's v2 cgroup
 * or one above it), the previous controller's cgroup (controllers mounted
 * together, as cpu,cpuacct).
 */
struct cg_walk {
	struct cgroup_root *dfl_root;
	struct cgroup *prev;
	__u32 undecided;
};

static __always_inline bool cg_subsys_job(struct cgroup_subsys_state *css, __u32 i, struct cg_walk *w)
{
	struct cgroup *cgrp;
	__u32 v;

	if (!css || (__u64)css == exec_root_css[i])
		return false;
	if (!css->parent) {
		exec_root_css[i] = (__u64)css;
		return false;
	}
	cgrp = css->cgroup;
	if (!cgrp || cgrp == w->prev || cgrp->root == w->dfl_root)
		return false;
	w->prev = cgrp;
	v = cg_job_above(cgrp);
	w->undecided |= v == EXEC_UNDECIDED;
	return v == EXEC_JOB;
}

static __always_inline __u32 exec_cgroup_verdict(struct task_struct *p)
{
	struct css_set___subsys *cset = (void *)p->cgroups;
	__u32 n = bpf_core_field_size(cset->subsys) / sizeof(cset->subsys[0]);
	struct cg_walk w = {};
	struct cgroup *dfl = cset->dfl_cgrp;
	__u32 v;

	if (dfl) {
		w.dfl_root = dfl->root;
		v = cg_job_above(dfl);
		if (v == EXEC_JOB)
			return v;
		w.undecided = v == EXEC_UNDECIDED;
	}
	/* Each controller's own load: an index the verifier sees as a constant. */
#define CG_SUBSYS(i)								\
	if (i < n && cg_subsys_job(cset->subsys[i], i, &w))			\
		return EXEC_JOB;
	CG_SUBSYS(0) CG_SUBSYS(1) CG_SUBSYS(2) CG_SUBSYS(3)
	CG_SUBSYS(4) CG_SUBSYS(5) CG_SUBSYS(6) CG_SUBSYS(7)
	CG_SUBSYS(8) CG_SUBSYS(9) CG_SUBSYS(10) CG_SUBSYS(11)
	CG_SUBSYS(12) CG_SUBSYS(13) CG_SUBSYS(14) CG_SUBSYS(15)
#undef CG_SUBSYS
	return w.undecided || n > EXEC_CG_SUBSYS ? EXEC_UNDECIDED : EXEC_NO_JOB;
}

/*
 * Report this untraced exec to user space? Counted when not, or when not
 * sure. The cgroups first: a job's process is found there at the cost of
 * a few loads, where the environment is read and scanned whole.
 */
static __always_inline bool exec_may_be_job(struct task_struct *p)
{
	__u32 cg = exec_cgroup_verdict(p), env;

	if (cg == EXEC_JOB)
		return true;
	env = exec_env_verdict(p);
	if (env == EXEC_JOB)
		return true;
	if (env == EXEC_UNDECIDED || cg == EXEC_UNDECIDED) {
		count(STAT_EXEC_UNDECIDED);
		return true;
	}
	count(STAT_EXEC_SKIPPED);
	return false;
}

#endif
