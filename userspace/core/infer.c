// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Owners of pre-attach memory by reachability (infer.h): the allocations
 * are told apart (heapwalk.c), the roots are scanned, then the graph is
 * walked breadth first, one level at a time, so the nearest root wins.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heapwalk.h"
#include "infer.h"

#define PAGE		4096ULL
#define NODE_UNSEEN	0
#define NODE_QUEUED	1
#define NODE_DONE	2
/*
 * A word pointing this far into a malloc chunk points at its start: the
 * user pointer is 16 bytes past the header, C++'s array cookie adds 8-16.
 */
#define BASE_REACH	64

struct node {
	uint64_t start, end;
	comp_id owner;		/* COMP_UNATTRIBUTED until reached */
	comp_id pend_owner;	/* pend: the root owner of the inner word met first */
	uint8_t state : 2;
	uint8_t chunk : 1;	/* a malloc chunk (not a raw block) */
	uint8_t peeked : 1;	/* its words were looked at while the heap was walked */
	uint8_t ptrs : 1;	/* ... and one of them may point into an allocation */
	uint8_t pend : 1;	/* a word pointed inside it first; a start may still come */
	uint8_t cont : 1;	/* a raw block split off the node before (add_raw) */
};

struct infer {
	const struct infer_params *prm;
	struct infer_mem mem;
	struct infer_area *areas;	/* sorted by start */
	size_t nareas;
	struct infer_area **code;	/* AREA_CODE, sorted */
	size_t ncode;
	struct infer_area **classes;	/* AREA_CLASSES, sorted */
	size_t nclasses;
	struct node *nodes;		/* sorted by start, not overlapping */
	size_t nnodes, cap;
	uint64_t lo, hi;		/* no node outside [lo, hi) */
	uint64_t alo, ahi;		/* no allocation outside [alo, ahi): the areas split */
	uint32_t *queue;		/* node indices, each at most once */
	size_t qhead, qtail;		/* walked up to qhead */
	uint32_t *pend;			/* nodes met only inside so far, in the order met */
	size_t npend;
	uint64_t *starts;		/* page-aligned words of modules' data: mmap'd block starts */
	size_t nstarts, starts_cap;
	comp_id root_owner;		/* of the words being scanned */
	int pass;			/* the tie-break class of the roots scanned */
	struct infer_result *res;
	bool capped;
};

static int cmp_area(const void *a, const void *b)
{
	const struct infer_area *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Equal distance: the program first, other libraries, MPI last; libc never. */
static int tie_class(const struct infer *in, comp_id owner)
{
	if (owner == in->prm->libc || owner == COMP_UNATTRIBUTED)
		return -1;
	if (owner == COMP_APP || owner == COMP_STACK)
		return 0;
	return owner == in->prm->mpi ? 2 : 1;
}

static int add_node(struct infer *in, uint64_t start, uint64_t end, bool chunk)
{
	if (end <= start)
		return 0;
	if (in->nnodes == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 1024;
		struct node *n = realloc(in->nodes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		in->nodes = n;
		in->cap = cap;
	}
	in->nodes[in->nnodes++] = (struct node){ .start = start, .end = end,
						 .owner = COMP_UNATTRIBUTED, .state = NODE_UNSEEN,
						 .chunk = chunk };
	in->res->chunks += chunk;
	return 0;
}

static bool full(struct infer *in)
{
	if (in->nnodes + 1 >= INFER_MAX_NODES)
		in->capped = true;
	return in->capped;
}

struct chunk_walk {
	struct infer *in;
	int err;
};

static void peek_words(void *ctx, uint64_t addr, const uint64_t *w, size_t n)
{
	struct infer *in = ctx;
	struct node *last = &in->nodes[in->nnodes - 1];

	(void)addr;
	for (size_t i = 0; i < n && !last->ptrs; i++)
		last->ptrs = w[i] >= in->alo && w[i] < in->ahi;
}

/*
 * A small chunk's words are in the blocks the walk reads anyway: whether
 * any could point into an allocation is noted now, so that a chunk of
 * numbers is not read a second time when it is reached.
 */
static int on_chunk(void *ctx, uint64_t start, uint64_t end, bool in_use)
{
	struct chunk_walk *w = ctx;
	struct node *n;

	if (!in_use)
		return 0;
	if (full(w->in))
		return 1;
	w->err = add_node(w->in, start, end, true);
	if (w->err)
		return 1;
	n = &w->in->nodes[w->in->nnodes - 1];
	if (end - start <= INFER_BLOCK)
		n->peeked = infer_mem_words(&w->in->mem, start + 16, end - start - 16, peek_words,
					    w->in);
	return 0;
}

/* Chunks from first to end; what the walk could not read is one raw block. */
static int walk_heap(struct infer *in, uint64_t first, uint64_t end)
{
	struct chunk_walk w = { in, 0 };
	uint64_t stop = heapwalk_chunks(&in->mem, first, end, on_chunk, &w);

	if (w.err)
		return w.err;
	return stop < end ? add_node(in, stop, end, false) : 0;
}

#define MAX_STARTS	(1u << 16)

static void note_starts(void *ctx, uint64_t addr, const uint64_t *w, size_t n)
{
	struct infer *in = ctx;

	(void)addr;
	for (size_t i = 0; i < n; i++) {
		if (w[i] & (PAGE - 1) || w[i] < in->alo || w[i] >= in->ahi)
			continue;
		if (in->nstarts == in->starts_cap) {
			size_t cap = in->starts_cap ? 2 * in->starts_cap : 256;
			uint64_t *m = cap <= MAX_STARTS ? realloc(in->starts, cap * sizeof(*m)) : NULL;

			if (!m)
				return;		/* bounded: the rest splits nothing */
			in->starts = m;
			in->starts_cap = cap;
		}
		in->starts[in->nstarts++] = w[i];
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Where modules' data point at a page boundary inside anonymous memory:
 * mmap returns pages, so a block with no malloc header (a direct mmap)
 * starts there. Two such blocks the kernel merged into one mapping are
 * told apart by these, not given whole to whoever reaches either.
 */
static void collect_starts(struct infer *in)
{
	for (size_t i = 0; i < in->nareas; i++)
		if (in->areas[i].kind == AREA_ROOT)
			infer_mem_words(&in->mem, in->areas[i].start,
					in->areas[i].end - in->areas[i].start, note_starts, in);
	if (in->nstarts > 1)
		qsort(in->starts, in->nstarts, sizeof(*in->starts), cmp_u64);
}

/* A block with no header, split where a module's data points at one of its pages. */
static int add_raw(struct infer *in, uint64_t start, uint64_t end)
{
	uint64_t first = start;
	size_t lo = 0, hi = in->nstarts;
	int ret;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (in->starts[mid] <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < in->nstarts && in->starts[lo] < end; lo++) {
		if (in->starts[lo] == start)
			continue;
		if ((ret = add_node(in, start, in->starts[lo], false)))
			return ret;
		in->nodes[in->nnodes - 1].cont = start != first;
		start = in->starts[lo];
	}
	if ((ret = add_node(in, start, end, false)))
		return ret;
	in->nodes[in->nnodes - 1].cont = start != first;
	return 0;
}

/*
 * A piece of a split raw block that nothing reached is the rest of its
 * neighbour's block (a pointer at a page inside one block, not a start).
 */
static void join_unreached_pieces(struct infer *in)
{
	if (in->nnodes < 2)
		return;
	for (size_t i = 1; i < in->nnodes; i++)
		if (in->nodes[i].cont && in->nodes[i].owner == COMP_UNATTRIBUTED)
			in->nodes[i].owner = in->nodes[i - 1].owner;
	for (size_t i = in->nnodes - 1; i-- > 0;)
		if (in->nodes[i + 1].cont && in->nodes[i].owner == COMP_UNATTRIBUTED)
			in->nodes[i].owner = in->nodes[i + 1].owner;
}

/*
 * Anonymous memory of unknown origin: malloc's mmap'd chunks where their
 * headers are, raw blocks between them (a page-aligned header is looked
 * for at every page of a raw block).
 */
static int split_alloc(struct infer *in, const struct infer_area *a)
{
	uint64_t x = a->start, raw = 0;
	int ret;

	while (x < a->end) {
		uint64_t len = full(in) ? 0 : heapwalk_mmapped_at(&in->mem, x, a->end);

		if (!len) {
			if (!raw)
				raw = x;
			if (in->mem.over || in->capped)
				break;
			x += PAGE;
			continue;
		}
		if (raw && (ret = add_raw(in, raw, x)))
			return ret;
		raw = 0;
		if ((ret = add_node(in, x, x + len, true)))
			return ret;
		x += len;
	}
	if (raw || x < a->end)
		return add_raw(in, raw ? raw : x, a->end);
	return 0;
}

static int build_nodes(struct infer *in)
{
	for (size_t i = 0; i < in->nareas; i++) {
		const struct infer_area *a = &in->areas[i];
		uint64_t first, used;
		int ret = 0;

		switch (a->kind) {
		case AREA_HEAP:
			ret = walk_heap(in, (a->start + 15) & ~15ULL, a->end);
			break;
		case AREA_ARENA:
			first = heapwalk_arena_first(&in->mem, a->start, a->end, &used);
			/*
			 * heap_info and the arena's malloc_state before first are
			 * malloc's own. No chunks there: memory that only happens
			 * to be aligned like an arena, split as any other.
			 */
			ret = first ? walk_heap(in, first, used) : split_alloc(in, a);
			break;
		case AREA_ALLOC:
			ret = split_alloc(in, a);
			break;
		default:
			break;
		}
		if (ret)
			return ret;
	}
	if (in->nnodes) {
		in->lo = in->nodes[0].start;
		in->hi = in->nodes[in->nnodes - 1].end;
	}
	return 0;
}

static struct node *find_node(struct infer *in, uint64_t addr)
{
	size_t lo = 0, hi = in->nnodes;

	if (addr < in->lo || addr >= in->hi)
		return NULL;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct node *n = &in->nodes[mid];

		if (addr < n->start)
			hi = mid;
		else if (addr >= n->end)
			lo = mid + 1;
		else
			return n;
	}
	return NULL;
}

static const struct infer_area *find_in(struct infer_area *const *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct infer_area *a = v[mid];

		if (addr < a->start)
			hi = mid;
		else if (addr >= a->end)
			lo = mid + 1;
		else
			return a;
	}
	return NULL;
}

static const struct infer_area *find_code(const struct infer *in, uint64_t addr)
{
	return find_in(in->code, in->ncode, addr);
}

/*
 * The owner n passes to what it points to: its finder's, unless it is an
 * object of another module's class -- its first word a vtable pointer
 * into that module's RELRO. The class's code allocated the object's
 * members (LAMMPS: the program's main holds the one LAMMPS object; every
 * array hangs from it and was allocated by liblammps).
 */
static comp_id passes_on(struct infer *in, const struct node *n)
{
	const struct infer_area *a;
	uint64_t vptr;

	if (!n->chunk || !in->nclasses || !infer_mem_word(&in->mem, n->start + 16, &vptr))
		return n->owner;
	a = find_in(in->classes, in->nclasses, vptr);
	if (!a || tie_class(in, a->owner) < 0)
		return n->owner;
	return a->owner;
}

/*
 * A word that points into an allocation nobody reached yet: it is the root
 * owner's. A word pointing into the middle of a malloc chunk is weaker
 * than one pointing at its start: a program holds its arrays by their
 * start, and the middle of a large array is where a number that merely
 * looks like an address falls (two ints side by side, the upper one half
 * an address) -- such a word in MPI's data must not take the program's
 * matrix. It is kept, and counts only if no start is met (settle()).
 */
static void reach(struct infer *in, uint64_t w)
{
	struct node *n = find_node(in, w);

	if (!n || n->state != NODE_UNSEEN)
		return;
	if (n->chunk && w - n->start >= BASE_REACH) {
		if (!n->pend) {
			n->pend = true;
			n->pend_owner = in->root_owner;
			in->pend[in->npend++] = (uint32_t)(n - in->nodes);
		}
		return;
	}
	n->owner = in->root_owner;
	n->state = NODE_QUEUED;
	in->queue[in->qtail++] = (uint32_t)(n - in->nodes);
}

static void reach_words(void *ctx, uint64_t addr, const uint64_t *w, size_t n)
{
	struct infer *in = ctx;

	(void)addr;
	for (size_t i = 0; i < n; i++)
		if (w[i] >= in->lo && w[i] < in->hi)
			reach(in, w[i]);
}

/*
 * A stack, read from its stack pointer up. A word that points into code is
 * taken as a return address: the words above it are its function's frame.
 * Right below a return address lie the registers the callee saved at its
 * entry (x86-64: up to six, rbx, rbp, r12-r15): values that were live in
 * the caller's frame, not the callee's -- a pointer a function kept in a
 * register across a call is there. Those words count for the caller too. Above
 * the outermost return address lie the thread's descriptor and TLS.
 *
 * A value stays in a callee-saved register down any number of calls until
 * one of them saves it: the program's array pointer, live in the program's
 * loop, is saved three calls deep inside MPI while the rank waits there.
 * So, for what the program's and every module's roots left, the saved
 * words and the registers of a thread with a program frame above them are
 * also the program's (lifted: in a pass of their own, after MPI's data,
 * whose own pointers pass through the same registers).
 */
#define SAVED_REGS	6

struct stack_scan {
	struct infer *in;
	comp_id frame;		/* owner of the frame the next word lies in */
	uint64_t top_ret;	/* address of the outermost return address */
	comp_id top_owner;	/* the outermost frame's owner outside libc */
	uint64_t app_top;	/* address of the outermost return into the program, 0: none */
	bool roots;		/* second pass: words are roots */
	bool lift;		/* ... only the saved words below a program frame, as the program's */
	uint64_t pend[SAVED_REGS];	/* the words since the last return address */
	unsigned int npend;
};

static void stack_root(struct stack_scan *s, uint64_t w, comp_id owner)
{
	struct infer *in = s->in;

	if (tie_class(in, owner) != in->pass || w < in->lo || w >= in->hi)
		return;
	in->root_owner = owner == COMP_STACK ? COMP_APP : owner;
	reach(in, w);
}

/*
 * The words waiting below a return address: saved registers of the caller
 * (owner), or the callee's own first locals when it saved fewer -- both
 * frames' roots, the tie rule decides (main's locals right below its
 * return into libc stay the program's).
 */
static void stack_flush(struct stack_scan *s, comp_id owner, uint64_t at)
{
	for (unsigned int i = 0; i < s->npend; i++) {
		if (s->lift) {
			if (at <= s->app_top)
				stack_root(s, s->pend[i], COMP_APP);
			continue;
		}
		stack_root(s, s->pend[i], owner);
		stack_root(s, s->pend[i], s->frame);
	}
	s->npend = 0;
}

static void stack_words(void *ctx, uint64_t addr, const uint64_t *w, size_t n)
{
	struct stack_scan *s = ctx;
	struct infer *in = s->in;

	for (size_t i = 0; i < n; i++) {
		uint64_t at = addr + 8 * i;
		const struct infer_area *code = find_code(in, w[i]);

		if (code) {
			if (s->roots && at <= s->top_ret)
				stack_flush(s, code->owner, at);
			s->frame = code->owner;
			if (!s->roots) {
				s->top_ret = at;
				if (code->owner == COMP_APP)
					s->app_top = at;
				if (code->owner != in->prm->libc)
					s->top_owner = code->owner;
			}
			continue;
		}
		if (!s->roots || at > s->top_ret)
			continue;
		if (s->npend == SAVED_REGS) {
			if (!s->lift)
				stack_root(s, s->pend[0], s->frame);
			memmove(s->pend, s->pend + 1, (SAVED_REGS - 1) * sizeof(*s->pend));
			s->npend--;
		}
		s->pend[s->npend++] = w[i];
	}
}

static uint64_t stack_from(const struct infer_area *a)
{
	return a->sp >= a->start && a->sp < a->end ? a->sp & ~7ULL : a->start;
}

static comp_id stack_first_frame(const struct infer *in, const struct infer_area *a)
{
	const struct infer_area *code = a->pc ? find_code(in, a->pc) : NULL;

	return code ? code->owner : a->owner;
}

/*
 * One thread's stack: a first pass finds the return addresses, a second
 * takes its words (and the registers it was stopped with) as roots.
 */
static void scan_stack(struct infer *in, const struct infer_area *a, bool lift)
{
	struct stack_scan s = { .in = in, .frame = stack_first_frame(in, a), .top_ret = a->end,
				.top_owner = COMP_UNATTRIBUTED };
	uint64_t from = stack_from(a);

	infer_mem_words(&in->mem, from, a->end - from, stack_words, &s);
	s.roots = true;
	s.lift = lift;
	s.frame = stack_first_frame(in, a);
	for (unsigned int i = 0; i < a->nregs; i++) {
		if (!lift)
			stack_root(&s, a->regs[i], s.frame);
		else if (s.app_top)
			stack_root(&s, a->regs[i], COMP_APP);
	}
	infer_mem_words(&in->mem, from, a->end - from, stack_words, &s);
	stack_flush(&s, s.frame, a->end);
}

/* The words of every root of this tie class, in address order: modules' data, stack frames. */
static void scan_roots(struct infer *in, int pass, bool data, bool stacks)
{
	in->pass = pass;
	for (size_t i = 0; i < in->nareas; i++) {
		const struct infer_area *a = &in->areas[i];

		if (data && a->kind == AREA_ROOT && tie_class(in, a->owner) == pass) {
			in->root_owner = a->owner;
			infer_mem_words(&in->mem, a->start, a->end - a->start, reach_words, in);
		} else if (stacks && a->kind == AREA_STACK) {
			scan_stack(in, a, false);
		}
	}
}

/* The saved words and registers below a program frame, as the program's (stack_scan). */
static void scan_lifted(struct infer *in)
{
	in->pass = tie_class(in, COMP_APP);
	for (size_t i = 0; i < in->nareas; i++)
		if (in->areas[i].kind == AREA_STACK)
			scan_stack(in, &in->areas[i], true);
}

/* Whether a sample of a large block shows a word that points into an allocation. */
static bool sample_points(struct infer *in, const struct node *n)
{
	uint64_t len = n->end - n->start, step = len / INFER_SAMPLES;

	for (unsigned int i = 0; i < INFER_SAMPLES; i++) {
		uint64_t at = (n->start + i * step) & ~7ULL;

		for (unsigned int k = 0; k < 8 && at + 8 * k + 8 <= n->end; k++) {
			uint64_t w;

			if (!infer_mem_word(&in->mem, at + 8 * k, &w))
				return true;	/* not known: read whole, as far as the budget goes */
			if (find_node(in, w))
				return true;
		}
	}
	return false;
}

static int cmp_queued(const void *a, const void *b, void *ctx)
{
	const struct infer *in = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int cx = tie_class(in, in->nodes[x].owner), cy = tie_class(in, in->nodes[y].owner);

	if (cx != cy)
		return cx - cy;
	return x < y ? -1 : x > y;
}

/*
 * Breadth first, one level at a time: within a level, by tie class, then
 * in address order (reads go forward through the process).
 */
static void walk(struct infer *in)
{
	size_t head = in->qhead;

	while (head < in->qtail) {
		size_t end = in->qtail;

		qsort_r(in->queue + head, end - head, sizeof(*in->queue), cmp_queued, in);
		for (; head < end; head++) {
			struct node *n = &in->nodes[in->queue[head]];

			n->state = NODE_DONE;
			in->res->reached++;
			if (in->mem.over || (n->peeked && !n->ptrs))
				continue;
			if (n->end - n->start > INFER_SAMPLE_ABOVE && !sample_points(in, n)) {
				in->res->skipped_sampled++;
				continue;
			}
			in->root_owner = passes_on(in, n);
			infer_mem_words(&in->mem, n->start, n->end - n->start, reach_words, in);
		}
	}
	in->qhead = head;
}

/* What only inner words reached: theirs now, in the order met, and walked on. */
static bool promote_inner(struct infer *in)
{
	bool any = false;

	for (size_t i = 0; i < in->npend; i++) {
		struct node *n = &in->nodes[in->pend[i]];

		if (n->state != NODE_UNSEEN)
			continue;
		n->owner = n->pend_owner;
		n->state = NODE_QUEUED;
		in->queue[in->qtail++] = in->pend[i];
		any = true;
	}
	in->npend = 0;
	return any;
}

/* Walk what the roots reached by starts, then what inner words alone reached. */
static void settle(struct infer *in)
{
	walk(in);
	while (promote_inner(in))
		walk(in);
}

static int add_run(struct infer_result *res, size_t *cap, uint64_t start, uint64_t end,
		   comp_id owner)
{
	struct infer_run *r = res->nruns ? &res->runs[res->nruns - 1] : NULL;

	if (end <= start)
		return 0;
	if (r && r->end == start && (r->owner == owner || res->nruns >= INFER_MAX_RUNS)) {
		r->end = end;
		return 0;
	}
	if (res->nruns == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct infer_run *m = realloc(res->runs, c * sizeof(*m));

		if (!m)
			return -ENOMEM;
		res->runs = m;
		*cap = c;
	}
	res->runs[res->nruns++] = (struct infer_run){ start, end, owner };
	return 0;
}

static uint64_t round_page(uint64_t v)
{
	return (v + PAGE / 2) & ~(PAGE - 1);
}

/*
 * The owners as page-aligned runs over the areas inferred: a page shared
 * by two allocations goes where most of it lies (boundaries are rounded to
 * the nearest page), memory no owner reached stays unattributed.
 */
static int make_runs(struct infer *in)
{
	size_t cap = 0, k = 0;
	int ret;

	for (size_t i = 0; i < in->nareas; i++) {
		const struct infer_area *a = &in->areas[i];
		uint64_t at = a->start;

		if (a->kind != AREA_HEAP && a->kind != AREA_ARENA && a->kind != AREA_ALLOC)
			continue;
		while (k < in->nnodes && in->nodes[k].end <= a->start)
			k++;
		for (; k < in->nnodes && in->nodes[k].start < a->end; k++) {
			const struct node *n = &in->nodes[k];
			uint64_t s = round_page(n->start), e = round_page(n->end);

			if (s < at)
				s = at;
			if (e > a->end)
				e = a->end;
			if (e <= s)
				continue;
			if ((ret = add_run(in->res, &cap, at, s, COMP_UNATTRIBUTED)) ||
			    (ret = add_run(in->res, &cap, s, e, n->owner)))
				return ret;
			at = e;
		}
		if ((ret = add_run(in->res, &cap, at, a->end, COMP_UNATTRIBUTED)))
			return ret;
	}
	return 0;
}

/* A thread stack in no known region: `stack` for the program's threads, else its library's. */
static int claim_stacks(struct infer *in)
{
	size_t cap = in->res->nruns;	/* add_run grows from here */
	int ret;

	for (size_t i = 0; i < in->nareas; i++) {
		const struct infer_area *a = &in->areas[i];
		struct stack_scan s = { .in = in, .frame = a->owner, .top_ret = a->end,
					.top_owner = COMP_UNATTRIBUTED };
		uint64_t from;

		if (a->kind != AREA_STACK || !a->claim)
			continue;
		from = stack_from(a);
		infer_mem_words(&in->mem, from, a->end - from, stack_words, &s);
		if (s.top_owner == COMP_UNATTRIBUTED || s.top_owner == COMP_APP)
			s.top_owner = in->prm->stack;
		if ((ret = add_run(in->res, &cap, a->start, a->end, s.top_owner)))
			return ret;
	}
	return 0;
}

static int cmp_run(const void *a, const void *b)
{
	const struct infer_run *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int infer_owners(const struct infer_area *areas, size_t nareas, const struct infer_params *prm,
		 infer_read_fn rd, void *ctx, struct infer_result *res)
{
	struct infer in = { .prm = prm, .res = res };
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (infer_mem_init(&in.mem, rd, ctx, prm->budget))
		return -ENOMEM;
	in.areas = malloc((nareas ? nareas : 1) * sizeof(*in.areas));
	in.code = malloc((nareas ? nareas : 1) * sizeof(*in.code));
	in.classes = malloc((nareas ? nareas : 1) * sizeof(*in.classes));
	if (!in.areas || !in.code || !in.classes)
		goto out;
	memcpy(in.areas, areas, nareas * sizeof(*areas));
	in.nareas = nareas;
	qsort(in.areas, nareas, sizeof(*in.areas), cmp_area);
	/* In address order, as the areas are. */
	for (size_t i = 0; i < nareas; i++)
		if (in.areas[i].kind == AREA_CODE)
			in.code[in.ncode++] = &in.areas[i];
		else if (in.areas[i].kind == AREA_CLASSES)
			in.classes[in.nclasses++] = &in.areas[i];
	in.alo = UINT64_MAX;
	for (size_t i = 0; i < nareas; i++)
		if (in.areas[i].kind == AREA_HEAP || in.areas[i].kind == AREA_ARENA ||
		    in.areas[i].kind == AREA_ALLOC) {
			if (in.areas[i].start < in.alo)
				in.alo = in.areas[i].start;
			if (in.areas[i].end > in.ahi)
				in.ahi = in.areas[i].end;
		}

	collect_starts(&in);
	if ((ret = build_nodes(&in)))
		goto out;
	res->nodes = in.nnodes;
	ret = -ENOMEM;
	in.queue = malloc((in.nnodes ? in.nnodes : 1) * sizeof(*in.queue));
	in.pend = malloc((in.nnodes ? in.nnodes : 1) * sizeof(*in.pend));
	if (!in.queue || !in.pend)
		goto out;
	/*
	 * Every module's data and the program's stack frames first, nearest
	 * root winning; then the other libraries' frames, for what is left:
	 * a slot of a frame not written yet still holds what an earlier call
	 * left there -- the program's pointers, in an MPI function's frame
	 * while a rank waits in MPI -- and would be the nearest root to the
	 * program's arrays. At the same distance a library's static data
	 * comes before the program's frames, which can hold a stale copy of
	 * that library's pointer (a word a returned call left below a live
	 * one); MPI's data comes after them, since MPI keeps the program's
	 * buffers (registered, in flight) in its own. Then the program's
	 * values saved deeper down its threads' stacks (scan_lifted).
	 */
	scan_roots(&in, 0, true, false);
	scan_roots(&in, 1, true, false);
	scan_roots(&in, 0, false, true);
	scan_roots(&in, 2, true, false);
	settle(&in);
	scan_lifted(&in);
	settle(&in);
	for (int pass = 1; pass <= 2; pass++)
		scan_roots(&in, pass, false, true);
	settle(&in);
	join_unreached_pieces(&in);
	if ((ret = make_runs(&in)) || (ret = claim_stacks(&in)))
		goto out;
	if (res->nruns > 1)
		qsort(res->runs, res->nruns, sizeof(*res->runs), cmp_run);
out:
	res->bytes_read = in.mem.bytes_read;
	res->budget_hit = in.mem.over;
	res->nodes_capped = in.capped;
	if (ret)
		infer_result_free(res);
	infer_mem_free(&in.mem);
	free(in.queue);
	free(in.pend);
	free(in.starts);
	free(in.nodes);
	free(in.code);
	free(in.classes);
	free(in.areas);
	return ret;
}

void infer_result_free(struct infer_result *res)
{
	free(res->runs);
	res->runs = NULL;
	res->nruns = 0;
}
