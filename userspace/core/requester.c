// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "procfs.h"
#include "remote_read.h"
#include "requester.h"
#include "spec.h"
#include "unwind.h"

static bool memo_check_on(void);

static void free_modules(struct code_module *mods, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(mods[i].path);
	free(mods);
}

void code_reader_init(struct code_reader *cr, pid_t pid)
{
	memset(cr, 0, sizeof(*cr));
	cr->pid = pid;
	cr->fd = -1;
	cr->maps_fd = -1;
	cr->hooks_stale = true;
}

void code_reader_close(struct code_reader *cr)
{
	uint64_t walks = cr->walks, fallbacks = cr->fallbacks, ns = cr->walk_ns;
	uint64_t reads = cr->maps_reads, hooks = cr->hooks_found, reused = cr->walks_reused;
	uint32_t gen = cr->gen + 1;

	if (cr->fd >= 0)
		close(cr->fd);
	if (cr->maps_fd >= 0)
		close(cr->maps_fd);
	free_modules(cr->mods, cr->nmods);
	if (cr->memo && memo_check_on())
		fprintf(stderr, "memattr-bpf: pid %d: %llu walks, %llu answered by kept walks\n",
			(int)cr->pid, (unsigned long long)walks, (unsigned long long)reused);
	free(cr->memo);
	code_reader_init(cr, cr->pid);
	cr->gen = gen;
	cr->walks_reused = reused;
	cr->walks = walks;
	cr->fallbacks = fallbacks;
	cr->walk_ns = ns;
	cr->maps_reads = reads;
	cr->hooks_found = hooks;
}

/* What the code at an address is may have changed: the caches keyed by address go. */
static void forget_code(struct code_reader *cr)
{
	cr->gen++;
	memset(cr->frame, 0, sizeof(cr->frame));
	memset(cr->entry_fn, 0, sizeof(cr->entry_fn));
}

void code_reader_code_mapped(struct code_reader *cr, uint64_t start, uint64_t end)
{
	size_t n = 0;

	/* What was there before is gone: a lookup there now misses and rereads maps. */
	for (size_t i = 0; i < cr->nmods; i++) {
		if (cr->mods[i].start < end && start < cr->mods[i].end) {
			free(cr->mods[i].path);
			continue;
		}
		cr->mods[n++] = cr->mods[i];
	}
	if (n != cr->nmods)
		forget_code(cr);
	cr->nmods = n;
	/* A patcher's library may have come with it (libfabric's monitor at dlopen). */
	cr->hooks_stale = true;
	cr->hooks_inner_checked = false;
}

void code_reader_code_changed(struct code_reader *cr)
{
	cr->hooks_stale = true;
	cr->hooks_inner_checked = false;
}

struct scan_ctx {
	struct code_reader *cr;
	struct region_table *t;
	const struct classifier *cls;
	bool reread;		/* maps were reread for this walk already */
	bool unkept;		/* the walk met code known from the region table only: not kept */
};

/* n bytes of the process's memory at addr. 0 or -errno. */
static int read_mem(struct code_reader *cr, uint64_t addr, void *buf, size_t n)
{
	char path[64];

	if (cr->fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", cr->pid);
		cr->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (cr->fd < 0)
			return -errno;
	}
	if (pread(cr->fd, buf, n, (off_t)addr) != (ssize_t)n)
		return -EIO;
	return 0;
}

static int read_code(void *ctx, uint64_t addr, uint8_t *buf)
{
	struct scan_ctx *s = ctx;
	struct code_reader *cr = s->cr;
	/* Return addresses are spread; the low bits pick the slot. */
	struct code_cache_slot *slot = &cr->slot[(addr ^ (addr >> 12)) % CODE_CACHE_SLOTS];
	int ret;

	if (slot->addr == addr) {
		memcpy(buf, slot->bytes, CALLSCAN_CODE_BYTES);
		return 0;
	}
	ret = read_mem(cr, addr - CALLSCAN_CODE_BYTES, buf, CALLSCAN_CODE_BYTES);
	if (ret)
		return ret;
	slot->addr = addr;
	memcpy(slot->bytes, buf, CALLSCAN_CODE_BYTES);
	return 0;
}

struct maps_state {
	struct code_reader *cr;
	const struct classifier *cls;
	char exe[4096];
	size_t cap;
	struct code_module *old;	/* the previous list: unchanged mappings keep their file */
	size_t nold;
};

static const struct code_module *same_mapping(const struct maps_state *ms,
					      const struct vma_info *v)
{
	size_t lo = 0, hi = ms->nold;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct code_module *m = &ms->old[mid];

		if (m->start < v->start)
			lo = mid + 1;
		else if (m->start > v->start)
			hi = mid;
		else
			return m->end == v->end && m->pgoff == v->offset ? m : NULL;
	}
	return NULL;
}

/* m describes mapping v of the process whose executable is exe. */
static void fill_module(struct code_module *m, const struct vma_info *v,
			const struct classifier *cls, const char *exe)
{
	bool is_code;

	m->start = v->start;
	m->end = v->end;
	m->pgoff = v->offset;
	m->owner = classify_path(cls, v->path, exe, &is_code);
	/*
	 * A `forward library` discards what is inner to its frames, like a
	 * hook, and libc does not. Such a library exists only to pass
	 * requests on: what runs inside it during a request is part of the
	 * passing (the relocated first instructions of libc's call in a
	 * trampoline no file backs, syscall(), the coherence handlers it
	 * dispatches), and none of it is who asked. libc and the loader call
	 * code that does ask: qsort's comparator, a thread's start routine, a
	 * library's constructors; those own what they allocate.
	 */
	m->discards = m->owner != cls->libc && spec_forwards_library(cls->specs, v->path);
	m->forwards = m->owner == cls->libc || m->discards;
	m->file = NULL;
	m->loaded = false;
	m->path = v->deleted ? NULL : strdup(v->path);
}

static int add_module(const struct vma_info *v, void *arg)
{
	struct maps_state *ms = arg;
	struct code_reader *cr = ms->cr;
	const struct code_module *same;
	struct code_module *m;

	if (v->perms[2] != 'x' || v->path[0] != '/')
		return 0;
	if (cr->nmods == ms->cap) {
		size_t cap = ms->cap ? ms->cap * 2 : 64;

		m = realloc(cr->mods, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		cr->mods = m;
		ms->cap = cap;
	}
	m = &cr->mods[cr->nmods++];
	same = same_mapping(ms, v);
	if (same) {
		*m = *same;
		m->path = same->path ? strdup(same->path) : NULL;
	} else {
		fill_module(m, v, ms->cls, ms->exe);
	}
	cr->discarding_libs |= m->discards;
	return 0;
}

/*
 * The module's file, loaded when a walk first meets it: a rank maps ~100
 * files and a walk visits a handful. The mapped file itself through
 * map_files (even deleted, or in another mount namespace), else its path.
 */
static struct cfi_file *module_file(const struct code_reader *cr, struct code_module *m)
{
	char path[96];

	if (m->loaded)
		return m->file;
	m->loaded = true;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)cr->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	m->file = cfi_file_get(path);
	if (!m->file && m->path)
		m->file = cfi_file_get(m->path);
	return m->file;
}

/* The executable file mappings, from /proc/PID/maps (sorted by address there). */
static void read_modules(struct scan_ctx *s)
{
	struct code_reader *cr = s->cr;
	struct maps_state ms = { .cr = cr, .cls = s->cls, .old = cr->mods, .nold = cr->nmods };

	cr->mods = NULL;
	cr->nmods = 0;
	cr->maps_reads++;
	cr->discarding_libs = false;
	cr->hooks_stale = true;
	forget_code(cr);
	procfs_read_exe(cr->pid, ms.exe, sizeof(ms.exe));
	/* A live process maps its executable's code at least. */
	cr->gone = procfs_read_maps(cr->pid, false, add_module, &ms) || !cr->nmods;
	free_modules(ms.old, ms.nold);
	cr->mods_read = true;
}

int code_reader_query(struct code_reader *cr, uint64_t addr, enum vma_query how,
		      struct vma_info *v)
{
	int ret;

	if (cr->no_query)
		return -EOPNOTSUPP;
	if (cr->maps_fd < 0 && (cr->maps_fd = procfs_maps_open(cr->pid)) < 0)
		return cr->maps_fd;
	ret = procfs_query_file(cr->maps_fd, addr, how, v);
	if (ret == -EOPNOTSUPP)
		cr->no_query = true;
	return ret;
}

/*
 * The one executable file mapping at pc, asked of the kernel and added to
 * the list: a library loaded since the list was read, without reading all
 * of maps again (a rank maps ~100 files during MPI_Init, and each new one
 * met by a walk was a whole read). NULL when the kernel gives no such
 * mapping of a file (or cannot answer, before Linux 6.11): the caller then
 * reads maps whole, as before.
 */
static struct code_module *query_module(struct scan_ctx *s, uint64_t pc)
{
	struct code_reader *cr = s->cr;
	struct code_module *mods, *m;
	struct vma_info *v;
	char *exe;
	size_t at;
	int ret;

	v = malloc(sizeof(*v) + PATH_MAX);
	if (!v)
		return NULL;
	exe = (char *)(v + 1);
	ret = code_reader_query(cr, pc, QUERY_CODE_AT, v);
	/* A path the list would take; the rest (no file, a race) is left to a whole read. */
	if (ret || v->path[0] != '/' || !(mods = realloc(cr->mods, (cr->nmods + 1) * sizeof(*mods)))) {
		free(v);
		return NULL;
	}
	cr->mods = mods;
	for (at = 0; at < cr->nmods && mods[at].start < v->start; at++)
		;
	/* Overlapping what the list holds: the list is stale there, read it whole. */
	if ((at > 0 && mods[at - 1].end > v->start) || (at < cr->nmods && mods[at].start < v->end)) {
		free(v);
		return NULL;
	}
	memmove(&mods[at + 1], &mods[at], (cr->nmods - at) * sizeof(*mods));
	cr->nmods++;
	m = &mods[at];
	procfs_read_exe(cr->pid, exe, PATH_MAX);
	fill_module(m, v, s->cls, exe);
	cr->discarding_libs |= m->discards;
	/* Frames at its addresses were cached as no module's. */
	forget_code(cr);
	free(v);
	return pc >= m->start && pc < m->end ? m : NULL;
}

static bool is_file_code(struct region_table *t, uint64_t pc)
{
	const struct region *r = regions_find(t, pc);

	return r && (r->flags & REGION_EXEC) && (r->flags & REGION_FILE);
}

static struct code_module *find_module(struct scan_ctx *s, uint64_t pc)
{
	struct code_reader *cr = s->cr;

	for (int pass = 0; pass < 2; pass++) {
		size_t lo = 0, hi = cr->nmods;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (pc < cr->mods[mid].start)
				hi = mid;
			else if (pc >= cr->mods[mid].end)
				lo = mid + 1;
			else
				return &cr->mods[mid];
		}
		/*
		 * Code we do not know: a library mapped since the last read, if
		 * the region table has file-backed code there. Once a walk.
		 */
		if (s->reread || !is_file_code(s->t, pc))
			return NULL;
		s->reread = true;
		if (cr->mods_read) {
			struct code_module *m = query_module(s, pc);

			if (m)
				return m;
		}
		read_modules(s);
	}
	return NULL;
}

/*
 * The MPI function's file and offset, for its symbol: from the module list
 * the walk used, which knows a library as soon as a walk met it, where the
 * last smaps read may not know it yet (MPI_Init's first requests come right
 * after the library is loaded).
 */
static void name_entry(struct scan_ctx *s, struct requester *rq)
{
	const struct code_module *m;

	if (!rq->entry)
		return;
	m = find_module(s, rq->entry - 1);
	if (!m || !m->path)
		return;
	rq->entry_path = m->path;
	rq->entry_off = rq->entry - m->start + m->pgoff;
}

/* pc is in the function of a hook an interposer patched into libc. */
static bool in_hook(const struct code_reader *cr, uint64_t pc)
{
	for (unsigned int i = 0; i < cr->nhooks; i++)
		if (pc >= cr->hooks[i].start && pc < cr->hooks[i].end)
			return true;
	return false;
}

static bool debug_on(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("MEMATTR_DEBUG_UNWIND") != NULL;
	return on;
}

#define HOOK_HOPS	4	/* jumps followed through trampolines no file backs */

/* A hook at target, in module m: the function (FDE) holding it. */
static void add_hook(struct code_reader *cr, struct code_module *m, uint64_t target)
{
	struct hook_entry *h;
	struct cfi_file *file;
	uint64_t vaddr, start, end;

	for (unsigned int i = 0; i < cr->nhooks; i++)
		if (cr->hooks[i].entry == target)
			return;
	if (cr->nhooks == HOOK_MAX)
		return;
	h = &cr->hooks[cr->nhooks++];
	*h = (struct hook_entry){ .entry = target, .start = target, .end = target };
	file = m ? module_file(cr, m) : NULL;
	if (!file || cfi_file_vaddr(file, target - m->start + m->pgoff, &vaddr) ||
	    cfi_file_fde_range(file, vaddr, &start, &end))
		return;
	h->start = start + (target - vaddr);
	h->end = end + (target - vaddr);
}

/*
 * Where the libc entry point at addr jumps, if a patcher rewrote it to
 * leave libc. A hook that is itself a jump is followed: Open MPI's
 * intercept_mmap is a tail call (jmp _intercept_mmap) and never has a
 * frame, the function it jumps to does.
 */
static void follow_patch(struct scan_ctx *s, uint64_t addr, const uint8_t *first, bool *reread)
{
	struct code_reader *cr = s->cr;
	uint8_t code[HOOK_CODE_BYTES];
	struct code_module *m;
	uint64_t at = addr, target;
	bool added = false;

	for (int hop = 0; hop < HOOK_HOPS; hop++) {
		if (!hop && first)
			memcpy(code, first, sizeof(code));
		else if (read_mem(cr, at, code, sizeof(code)))
			return;
		switch (hook_decode_jump(code, sizeof(code), at, &target)) {
		case HOOK_JUMP_NONE:
			/* A trampoline's own code: the hook, though nothing bounds it. */
			if (hop && !added)
				add_hook(cr, NULL, at);
			return;
		case HOOK_JUMP_INDIRECT:
			if (read_mem(cr, target, &target, sizeof(target)))
				return;
			break;
		case HOOK_JUMP_DIRECT:
			break;
		}
		m = find_module(s, target);
		/*
		 * A library the list does not know yet (the patcher's own,
		 * dlopen'ed with its plugin): maps once more before taking the
		 * target for code no file backs.
		 */
		if (!m && !*reread) {
			*reread = true;
			read_modules(s);
			m = find_module(s, target);
		}
		if (m && m->owner == s->cls->libc)
			return;		/* libc's own tail jump, or back into it */
		added = m != NULL;
		if (m)
			add_hook(cr, m, target);
		at = target;
	}
}

/*
 * Read libc's entry points in the process and note where patched ones
 * jump. Their addresses first: following a jump may reread maps, which
 * replaces the module list. Their first bytes are read all at once: a
 * scan follows every code mapping, and a system call per entry point
 * was most of its cost; an entry the batch could not read is read alone,
 * as before.
 */
static void scan_hooks(struct scan_ctx *s)
{
	struct code_reader *cr = s->cr;
	/*
	 * libc's entry points an interposer may patch: the specs' patched
	 * lines (glibc.spec), knowledge of the MPI libraries' patchers.
	 */
	const char *patched[SPEC_PATCHED_MAX];
	size_t npatched = spec_patched_functions(s->cls->specs, patched, SPEC_PATCHED_MAX);
	uint64_t addrs[4 * SPEC_PATCHED_MAX];
	uint8_t first[4 * SPEC_PATCHED_MAX][HOOK_CODE_BYTES];
	struct hook_entry old[HOOK_MAX];
	int nfirst;
	unsigned int nold = cr->nhooks;
	size_t naddrs = 0;
	bool reread = false;

	memcpy(old, cr->hooks, sizeof(old));
	for (size_t i = 0; i < cr->nmods; i++) {
		struct code_module *m = &cr->mods[i];
		const char *base = m->path ? strrchr(m->path, '/') : NULL;
		struct cfi_file *file;
		uint64_t off;

		if (m->owner != s->cls->libc || !base || strncmp(base + 1, "libc.so", 7))
			continue;
		file = module_file(cr, m);
		for (size_t k = 0; file && k < npatched && naddrs < sizeof(addrs) / sizeof(addrs[0]); k++) {
			if (cfi_file_func_offset(file, patched[k], &off) || off < m->pgoff ||
			    off - m->pgoff >= m->end - m->start)
				continue;
			addrs[naddrs++] = m->start + (off - m->pgoff);
		}
		/*
		 * No break: libc's code is several mappings once patched (the
		 * pages made writable stay apart from the rest).
		 */
	}
	cr->nhooks = 0;
	if (debug_on())
		fprintf(stderr, "unwind: pid %d reads %zu of libc's entry points\n", (int)cr->pid,
			naddrs);
	nfirst = remote_read_many(cr->pid, addrs, naddrs, HOOK_CODE_BYTES, &first[0][0]);
	for (size_t k = 0; k < naddrs; k++)
		follow_patch(s, addrs[k], (int)k < nfirst ? first[k] : NULL, &reread);
	cr->hooks_stale = false;
	if (cr->nhooks > cr->hooks_found)
		cr->hooks_found = cr->nhooks;
	if (cr->nhooks == nold && !memcmp(old, cr->hooks, nold * sizeof(old[0])))
		return;
	memset(cr->frame, 0, sizeof(cr->frame));
	cr->gen++;	/* a frame's forwarding changed: so may any walk */
	for (unsigned int i = 0; debug_on() && i < cr->nhooks; i++)
		fprintf(stderr, "unwind: pid %d hook %#llx in [%#llx, %#llx)\n", (int)cr->pid,
			(unsigned long long)cr->hooks[i].entry,
			(unsigned long long)cr->hooks[i].start, (unsigned long long)cr->hooks[i].end);
}

/* What the code at pc is: its module's owner, forwarding by library or by function. */
static bool frame_of(void *ctx, uint64_t pc, struct unwind_frame *f)
{
	struct scan_ctx *s = ctx;
	struct frame_cache_slot *slot = &s->cr->frame[(pc ^ (pc >> 10)) % FRAME_CACHE_SLOTS];
	struct code_module *m;
	struct cfi_file *file;
	struct region *r;
	const char *fn;

	if (slot->pc == pc && pc) {
		f->owner = slot->owner;
		f->forwards = slot->forwards;
		f->discards = slot->discards;
		return slot->code;
	}
	m = find_module(s, pc);
	if (m) {
		f->owner = m->owner;
		f->forwards = m->forwards;
		f->discards = m->discards || in_hook(s->cr, pc);
		f->forwards |= f->discards;
		if (!f->forwards && spec_has_forward_functions(s->cls->specs) &&
		    (file = module_file(s->cr, m))) {
			fn = cfi_file_func(file, pc - m->start + m->pgoff);
			f->forwards = spec_forwards_function(s->cls->specs, fn);
		}
	} else {
		/* Anonymous code (a JIT): what the region table says, never cached. */
		r = regions_find(s->t, pc);
		s->unkept = true;
		if (!r || !(r->flags & REGION_EXEC))
			return false;
		f->owner = r->owner;
		f->forwards = r->owner == s->cls->libc;
		f->discards = false;
		return true;
	}
	*slot = (struct frame_cache_slot){ pc, f->owner, f->forwards, f->discards, true };
	return true;
}

static int cfi_of(void *ctx, uint64_t pc, struct cfi_row *row)
{
	struct scan_ctx *s = ctx;
	struct code_module *m = find_module(s, pc);
	struct cfi_file *file = m ? module_file(s->cr, m) : NULL;
	uint64_t vaddr;

	if (!file || cfi_file_vaddr(file, pc - m->start + m->pgoff, &vaddr))
		return -ENOENT;
	return cfi_file_row(file, vaddr, row);
}

/* The scan's view: forwarding code answers as libc, the forwarder it skips. */
static bool code_owner(void *ctx, uint64_t addr, comp_id *owner)
{
	struct scan_ctx *s = ctx;
	struct unwind_frame f;

	if (!frame_of(ctx, addr - 1, &f))
		return false;
	*owner = f.forwards ? s->cls->libc : f.owner;
	return true;
}

/*
 * The stack as the program left it: return addresses a uretprobe replaced
 * with the kernel's trampoline (a tracer's probe on malloc) put back from
 * the task's return instances, matched by their stack slot.
 */
static const uint8_t *unhijacked_stack(const struct ev_syscall *e, uint8_t *copy, size_t len)
{
	uint32_t n = e->nret < MEMATTR_MAX_HIJACKED ? e->nret : MEMATTR_MAX_HIJACKED;
	bool copied = false;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = e->ret_slot[i] - e->user_sp;

		if (e->ret_slot[i] < e->user_sp || off % 8 || off + 8 > len)
			continue;
		if (!copied) {
			memcpy(copy, e->stack, len);
			copied = true;
		}
		memcpy(copy + off, &e->ret_addr[i], 8);
	}
	return copied ? copy : e->stack;
}


static void event_regs(const struct ev_syscall *e, struct unwind_regs *regs)
{
	memset(regs, 0, sizeof(*regs));
	regs->r[CFI_RA] = e->regs.ip;
	regs->r[CFI_RSP] = e->user_sp;
	regs->r[CFI_RBP] = e->regs.bp;
	regs->r[CFI_RBX] = e->regs.bx;
	regs->r[CFI_R12] = e->regs.r12;
	regs->r[CFI_R13] = e->regs.r13;
	regs->r[CFI_R14] = e->regs.r14;
	regs->r[CFI_R15] = e->regs.r15;
	regs->valid = 1u << CFI_RSP | 1u << CFI_RBP | 1u << CFI_RBX | 1u << CFI_R12 |
		      1u << CFI_R13 | 1u << CFI_R14 | 1u << CFI_R15;
	/* An event without registers (no ip): the scan alone. */
	if (e->regs.ip)
		regs->valid |= 1u << CFI_RA;
}


/* A kept walk of this call: same key, and every value it used the same. NULL: none. */
static const struct walk_memo *memo_find(const struct code_reader *cr,
					 const struct unwind_regs *regs, const uint8_t *stack,
					 size_t len, bool discarders)
{
	for (unsigned int i = 0; cr->memo && i < WALK_MEMO_SLOTS; i++) {
		const struct walk_memo *m = &cr->memo[i];
		unsigned int k;

		if (!m->ip || m->ip != regs->r[CFI_RA] || m->sp != regs->r[CFI_RSP] ||
		    m->valid != regs->valid || m->len != len || m->discarders != discarders ||
		    m->gen != cr->gen)
			continue;
		for (k = 0; k < m->deps.n; k++) {
			const struct unwind_dep *d = &m->deps.dep[k];
			uint64_t v;

			if (d->reg >= 0) {
				if (regs->r[d->reg] != d->val)
					break;
				continue;
			}
			if (d->off > len || len - d->off < sizeof(v))
				break;
			memcpy(&v, stack + d->off, sizeof(v));
			if (v != d->val)
				break;
		}
		if (k == m->deps.n)
			return m;
	}
	return NULL;
}

/*
 * MEMATTR_CHECK_WALKS=1: every walk a kept one answered is walked again and
 * the two compared; a difference is said on stderr (the cache's own test on
 * real programs: tools and tests only, it costs the walk it saves).
 */
static bool memo_check_on(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("MEMATTR_CHECK_WALKS") != NULL;
	return on;
}

static void memo_check(struct code_reader *cr, const struct unwind_regs *regs,
		       const uint8_t *stack, size_t len, const struct classifier *cls,
		       const struct unwind_ops *ops, const struct callscan_ops *scan, bool found,
		       const struct unwind_result *res)
{
	struct unwind_ops o = *ops;
	struct unwind_result again;
	bool f;

	o.trace = NULL;
	f = unwind_find_requester(regs, stack, len, cls->mpi, cls->libc, &o, scan, &again);
	if (f != found || again.caller != res->caller || again.owner != res->owner ||
	    again.entry != res->entry || again.fallback != res->fallback ||
	    again.nstack != res->nstack ||
	    memcmp(again.stack, res->stack, res->nstack * sizeof(res->stack[0])))
		fprintf(stderr, "memattr-bpf: pid %d: a kept walk differs from the walk "
			"(caller %#llx/%#llx owner %d/%d)\n", (int)cr->pid,
			(unsigned long long)res->caller, (unsigned long long)again.caller,
			(int)res->owner, (int)again.owner);
}

/* Keep a walk that depended on what its trace lists, and only on that. */
static void memo_keep(struct code_reader *cr, const struct unwind_regs *regs, size_t len,
		      bool discarders, const struct unwind_trace *tr, bool found,
		      const struct unwind_result *res)
{
	struct walk_memo *m;

	if (tr->partial)
		return;
	if (!cr->memo && !(cr->memo = calloc(WALK_MEMO_SLOTS, sizeof(*cr->memo))))
		return;
	m = &cr->memo[cr->memo_next];
	cr->memo_next = (cr->memo_next + 1) % WALK_MEMO_SLOTS;
	*m = (struct walk_memo){
		.ip = regs->r[CFI_RA], .sp = regs->r[CFI_RSP], .valid = regs->valid,
		.gen = cr->gen, .len = len, .discarders = discarders, .found = found,
		.deps = *tr, .res = *res,
	};
}

/*
 * Wall time (vDSO, no system call): the walk times in run_info.csv are
 * wall times. With every CPU busy (ranks oversubscribed) they include
 * the time the tool waited for a CPU mid-walk, and overstate its CPU
 * time by several times; the thread's CPU clock would cost a system
 * call per reading.
 */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* MEMATTR_DEBUG_UNWIND=1: one line per request on stderr, to see the walks. */
static void debug_walk(const struct code_reader *cr, const struct ev_syscall *e, bool found,
		       bool final, const struct unwind_result *res, uint64_t t0)
{
	if (!debug_on())
		return;
	fprintf(stderr, "unwind: pid %d ts %llu nr %llu ret %#llx ip %#llx: %s%s caller %#llx entry %#llx frames %u%s%s stop %u at %#llx %llu ns\n",
		(int)cr->pid, (unsigned long long)e->h.ts_ns, (unsigned long long)e->nr,
		(unsigned long long)e->ret, (unsigned long long)e->regs.ip,
		found ? component_name(res->owner) : "-", final ? "" : "(not final)", (unsigned long long)res->caller,
		(unsigned long long)res->entry, res->frames, res->fallback ? " FALLBACK" : "",
		res->forwarders_only ? " forwarders-only" : "", res->stop,
		(unsigned long long)res->stop_pc, (unsigned long long)(mono_ns() - t0));
}

bool requester_find(struct code_reader *cr, struct region_table *regions,
		    const struct classifier *cls, const struct ev_syscall *e,
		    struct requester *rq)
{
	struct scan_ctx s = { .cr = cr, .t = regions, .cls = cls };
	struct callscan_ops scan = { .code_owner = code_owner, .read_code = read_code, .ctx = &s };
	struct unwind_ops ops = { .cfi = cfi_of, .frame = frame_of, .ctx = &s };
	size_t len = e->stack_len < sizeof(e->stack) ? e->stack_len : sizeof(e->stack);
	uint8_t stack[MEMATTR_STACK_BYTES];
	const uint8_t *walked;
	const struct walk_memo *kept;
	struct unwind_trace trace;
	struct unwind_result res;
	struct unwind_regs regs;
	struct unwind_frame f0;
	uint64_t t0 = mono_ns();
	struct region *r;
	bool found;

	memset(rq, 0, sizeof(*rq));
	if (!cr->mods_read) {
		s.reread = true;
		read_modules(&s);
	}
	if (cr->gone) {
		rq->gone = true;
		return false;
	}
	if (!cr->hooks_stale && !cr->hooks_inner_checked && e->regs.ip &&
	    frame_of(&s, e->regs.ip, &f0) && f0.owner != cls->libc) {
		/*
		 * The syscall itself is made outside libc: a hook doing it for a
		 * patched call, perhaps patched in a way no event showed. Once
		 * until the code changes again.
		 */
		cr->hooks_stale = true;
		cr->hooks_inner_checked = true;
	}
	if (cr->hooks_stale)
		scan_hooks(&s);
	ops.discarders = cr->nhooks || cr->discarding_libs;
	/*
	 * Each request keeps its allocation stack (issue 35): the walk goes on
	 * past the requester for its callers, at most ALLOC_STACK_DEPTH frames
	 * and never past the stack copy. Requests are rare next to faults;
	 * what the longer walk costs shows in run_info.csv's unwind figures.
	 */
	ops.stack_depth = ALLOC_STACK_DEPTH;
	/* Inside a probed malloc: its caller is known exactly, unless it is libc itself (strdup). */
	walked = unhijacked_stack(e, stack, len);
	event_regs(e, &regs);
	kept = regs.r[CFI_RA] ? memo_find(cr, &regs, walked, len, ops.discarders) : NULL;
	if (kept) {
		found = kept->found;
		res = kept->res;
		cr->walks_reused++;
		if (memo_check_on())
			memo_check(cr, &regs, walked, len, cls, &ops, &scan, found, &res);
	} else {
		uint32_t gen = cr->gen;

		ops.trace = &trace;
		found = unwind_find_requester(&regs, walked, len, cls->mpi, cls->libc, &ops, &scan,
					      &res);
		/* Not when the code changed under the walk (maps read again mid-walk). */
		if (regs.r[CFI_RA] && !s.unkept && gen == cr->gen)
			memo_keep(cr, &regs, len, ops.discarders, &trace, found, &res);
	}
	cr->walks++;
	cr->fallbacks += res.fallback;
	rq->fallback = res.fallback;
	if (!found) {
		debug_walk(cr, e, found, false, &res, t0);
		rq->libc_only = res.forwarders_only;
		cr->walk_ns += mono_ns() - t0;
		return false;
	}
	rq->caller = res.caller;
	rq->owner = res.owner;
	memcpy(rq->stack, res.stack, res.nstack * sizeof(*res.stack));
	rq->nstack = res.nstack;
	rq->entry = res.owner == cls->mpi ? res.entry : 0;
	name_entry(&s, rq);
	/* A module read from maps is classified by its path: final even if mapped since. */
	r = regions_find(regions, res.caller);
	rq->owner_final = find_module(&s, res.caller - 1) ||
			  (r && !(r->flags & REGION_FROM_EVENT));
	debug_walk(cr, e, found, rq->owner_final, &res, t0);
	cr->walk_ns += mono_ns() - t0;
	return true;
}
