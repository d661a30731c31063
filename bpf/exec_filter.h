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
#define EXEC_CG_STEPS		512	/* cgroups looked at, every hierarchy's ancestors together */

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
	__u8 b[EXEC_ENV_MASK + 1 + EXEC_ENV_PAD];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_env_buf);
} exec_env SEC(".maps");

struct env_scan {
	__u64 start;		/* the environment's user address */
	__u32 len;
	__u32 verdict;
};

/* Does the entry at b[pos] name a job ("NAME=" and a value)? */
static __always_inline bool env_entry_is_job(const struct exec_env_buf *eb, __u64 pos)
{
	__u64 w0, w1, m0, m1;

	pos &= EXEC_ENV_MASK;	/* at most EXEC_ENV_CHUNK already: for the verifier */
	w0 = *(const __u64 *)&eb->b[pos];
	w1 = *(const __u64 *)&eb->b[pos + 8];
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

/*
 * bpf_loop callback, one 8-byte word of the environment: each '\0' in it
 * (found a word at a time) ends an entry, and the next one starts after
 * it. A chunk is read when its first word comes, with the 16 bytes after
 * it: an entry starting at the chunk's end is compared whole.
 */
static long env_word(__u32 i, struct env_scan *s)
{
	__u64 off = (__u64)i * 8, in = off & (EXEC_ENV_CHUNK - 1), n, w, z, low;
	struct exec_env_buf *eb;
	__u32 key = 0;

	eb = bpf_map_lookup_elem(&exec_env, &key);

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
	in &= EXEC_ENV_CHUNK - 8;
	w = *(__u64 *)&eb->b[in];
	/* 0x80 in each byte of w that is 0, exactly (no borrow between bytes). */
	z = ~(((w & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | w | 0x7f7f7f7f7f7f7f7fULL);
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
		if (off + j + 1 >= s->len)
			break;
		if (env_entry_is_job(eb, in + j + 1)) {
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
	__u64 end;

	if (BPF_CORE_READ_INTO(&s.start, p, mm, env_start) || BPF_CORE_READ_INTO(&end, p, mm, env_end) ||
	    end < s.start)
		return EXEC_UNDECIDED;
	if (end - s.start > EXEC_ENV_MAX)
		return EXEC_UNDECIDED;
	s.len = end - s.start;
	if (s.len)
		bpf_loop((s.len + 7) / 8, env_word, &s, 0);
	return s.verdict;
}

struct cg_walk {
	__u64 head;		/* the task's css_set's list of links, one per hierarchy */
	__u64 pos;		/* the next link */
	__u64 cgrp;		/* the cgroup being looked at; 0: take the next link's */
	__u32 verdict;
};

/*
 * bpf_loop callback: one cgroup of one hierarchy (v2's and each of v1's),
 * then its parent, up to the root; then the next hierarchy's. A name
 * "job_<digit>..." anywhere is Slurm's job (or looks like it: reported).
 */
static long cg_step(__u32 i, struct cg_walk *w)
{
	struct cgroup_subsys_state *parent;
	struct cgrp_cset_link *link;
	struct list_head *lh;
	struct cgroup *cgrp;
	const char *name;
	char c[8] = {};

	(void)i;
	if (!w->cgrp) {
		if (w->pos == w->head) {
			w->verdict = EXEC_NO_JOB;
			return 1;
		}
		lh = (void *)w->pos;
		link = (void *)(w->pos - bpf_core_field_offset(struct cgrp_cset_link, cgrp_link));
		if (BPF_CORE_READ_INTO(&w->cgrp, link, cgrp) || !w->cgrp ||
		    bpf_core_read(&w->pos, sizeof(w->pos), &lh->next))
			return 1;	/* undecided */
	}
	cgrp = (void *)w->cgrp;
	if (BPF_CORE_READ_INTO(&name, cgrp, kn, name) ||
	    bpf_probe_read_kernel_str(c, sizeof(c), name) < 0 ||
	    BPF_CORE_READ_INTO(&parent, cgrp, self.parent))
		return 1;
	if (c[0] == 'j' && c[1] == 'o' && c[2] == 'b' && c[3] == '_' && c[4] >= '0' && c[4] <= '9') {
		w->verdict = EXEC_JOB;
		return 1;
	}
	/* A cgroup's self is its css: the parent's css is in the parent cgroup. */
	w->cgrp = parent ? (__u64)parent - bpf_core_field_offset(struct cgroup, self) : 0;
	return 0;
}

static __always_inline __u32 exec_cgroup_verdict(struct task_struct *p)
{
	struct cg_walk w = { .verdict = EXEC_UNDECIDED };
	struct css_set *cset;

	if (BPF_CORE_READ_INTO(&cset, p, cgroups) || !cset)
		return EXEC_UNDECIDED;
	w.head = (__u64)__builtin_preserve_access_index(&cset->cgrp_links);
	if (bpf_core_read(&w.pos, sizeof(w.pos), &cset->cgrp_links.next))
		return EXEC_UNDECIDED;
	bpf_loop(EXEC_CG_STEPS, cg_step, &w, 0);
	return w.verdict;
}

/* Report this untraced exec to user space? Counted when not, or when not sure. */
static __always_inline bool exec_may_be_job(struct task_struct *p)
{
	__u32 env = exec_env_verdict(p), cg;

	if (env == EXEC_JOB)
		return true;
	cg = exec_cgroup_verdict(p);
	if (cg == EXEC_JOB)
		return true;
	if (env == EXEC_UNDECIDED || cg == EXEC_UNDECIDED) {
		count(STAT_EXEC_UNDECIDED);
		return true;
	}
	count(STAT_EXEC_SKIPPED);
	return false;
}

#endif
