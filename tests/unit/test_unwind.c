// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CFI frame walk on fabricated stacks: a made-up address space of code
 * ranges (libc, the loader, libstdc++'s operator new and another of its
 * functions, an MPI library, the program, a library without CFI), each
 * with the CFI row a compiler would emit, and stacks built frame by frame
 * with stale return addresses planted where the old word scan took them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "unwind.h"

enum { C_LIBC = 10, C_MPI, C_STDCXX, C_NOCFI, C_UCM };

/* A code range: what it is and its CFI row kind. */
enum row_kind {
	ROW_LEAF,	/* CFA = rsp + 8, RA at CFA - 8 (no push) */
	ROW_PUSH_RBX,	/* push %rbx: CFA = rsp + 16, rbx at CFA - 16 */
	ROW_RBP,	/* frame pointer: CFA = rbp + 16, rbp at CFA - 16 */
	ROW_OUTERMOST,	/* RA undefined (_start, a thread's start) */
	ROW_NONE,	/* no CFI at all */
};

struct code {
	uint64_t start, end;
	comp_id owner;
	bool forwards;
	enum row_kind row;
	bool discards;		/* a hook's function, a `forward library` */
};

static const struct code space[] = {
	{ 0x1000, 0x1100, C_LIBC, true, ROW_LEAF, false },		/* mmap wrapper */
	{ 0x1100, 0x1200, C_LIBC, true, ROW_PUSH_RBX, false },		/* malloc */
	{ 0x1200, 0x1300, C_LIBC, true, ROW_RBP, false },		/* a libc function with a frame pointer */
	{ 0x2000, 0x2100, C_STDCXX, true, ROW_PUSH_RBX, false },	/* _Znwm: forwards */
	{ 0x2100, 0x2200, C_STDCXX, false, ROW_PUSH_RBX, false },	/* libstdc++ for itself */
	{ 0x3000, 0x3100, C_MPI, false, ROW_PUSH_RBX, false },		/* ompi internals */
	{ 0x3100, 0x3200, C_MPI, false, ROW_RBP, false },		/* MPI_Init */
	{ 0x4000, 0x4100, COMP_APP, false, ROW_PUSH_RBX, false },	/* a function of the program */
	{ 0x4100, 0x4200, COMP_APP, false, ROW_RBP, false },		/* main */
	{ 0x4200, 0x4300, COMP_APP, false, ROW_OUTERMOST, false },	/* _start */
	{ 0x5000, 0x5100, C_NOCFI, false, ROW_NONE, false },		/* a library without CFI */
	{ 0x6000, 0x6100, C_NOCFI, true, ROW_NONE, false },		/* an interposer without CFI */
	{ 0x4300, 0x4400, COMP_APP, false, ROW_PUSH_RBX, false },	/* another function of the program */
	/* A patcher's hook (Open MPI's _intercept_mmap, libc's mmap jumps into it), no symbol */
	{ 0x7000, 0x7100, C_MPI, false, ROW_PUSH_RBX, true },
	{ 0x7100, 0x7200, C_MPI, false, ROW_PUSH_RBX, false },		/* a helper it calls */
	{ 0x7200, 0x7300, C_UCM, true, ROW_PUSH_RBX, true },	/* forward library libucm */
};

static const struct code *lookup(uint64_t pc)
{
	for (size_t i = 0; i < sizeof(space) / sizeof(space[0]); i++)
		if (pc >= space[i].start && pc < space[i].end)
			return &space[i];
	return NULL;
}

static int cfi(void *ctx, uint64_t pc, struct cfi_row *row)
{
	const struct code *c = lookup(pc);

	(void)ctx;
	memset(row, 0, sizeof(*row));
	if (!c || c->row == ROW_NONE)
		return -ENOENT;
	row->cfa_reg = CFI_RSP;
	row->rule[CFI_RA].kind = CFI_OFFSET;
	row->rule[CFI_RA].off = -8;
	switch (c->row) {
	case ROW_LEAF:
		row->cfa_off = 8;
		break;
	case ROW_PUSH_RBX:
		row->cfa_off = 16;
		row->rule[CFI_RBX].kind = CFI_OFFSET;
		row->rule[CFI_RBX].off = -16;
		break;
	case ROW_RBP:
		row->cfa_reg = CFI_RBP;
		row->cfa_off = 16;
		row->rule[CFI_RBP].kind = CFI_OFFSET;
		row->rule[CFI_RBP].off = -16;
		break;
	case ROW_OUTERMOST:
		row->cfa_off = 8;
		row->rule[CFI_RA].kind = CFI_UNDEF;
		break;
	default:
		break;
	}
	return 0;
}

static int frames_asked;

static bool frame(void *ctx, uint64_t pc, struct unwind_frame *f)
{
	const struct code *c = lookup(pc);

	(void)ctx;
	frames_asked++;
	if (!c)
		return false;
	f->owner = c->owner;
	f->forwards = c->forwards;
	f->discards = c->discards;
	return true;
}

/* The scan's view: forwarders answer C_LIBC, the id it skips. */
static bool code_owner(void *ctx, uint64_t addr, comp_id *owner)
{
	struct unwind_frame f;

	if (!frame(ctx, addr - 1, &f))
		return false;
	*owner = f.forwards ? C_LIBC : f.owner;
	return true;
}

/* Every fabricated return address follows a call rel32. */
static int read_code(void *ctx, uint64_t addr, uint8_t *buf)
{
	(void)ctx;
	(void)addr;
	memset(buf, 0x90, CALLSCAN_CODE_BYTES);
	buf[CALLSCAN_CODE_BYTES - 5] = 0xe8;
	return 0;
}

static const struct unwind_ops ops = { .cfi = cfi, .frame = frame };
/* The process has hooks or a forward library: the walk sees every frame. */
static const struct unwind_ops deep_ops = { .cfi = cfi, .frame = frame, .discarders = true };
static const struct callscan_ops scan = { .code_owner = code_owner, .read_code = read_code };

#define SP0	0x7fff0000ULL

/* A stack under construction: 8-byte words from SP0 up. */
struct fake_stack {
	uint64_t w[512];
	size_t n;
};

static void push_word(struct fake_stack *s, uint64_t v)
{
	s->w[s->n++] = v;
}

static void regs_at(struct unwind_regs *r, uint64_t ip)
{
	memset(r, 0, sizeof(*r));
	r->r[CFI_RA] = ip;
	r->r[CFI_RSP] = SP0;
	r->r[CFI_RBP] = 0xdead;
	r->valid = 1u << CFI_RA | 1u << CFI_RSP | 1u << CFI_RBP | 1u << CFI_RBX;
}

static bool walk(const struct fake_stack *s, const struct unwind_regs *r,
		 struct unwind_result *res)
{
	return unwind_find_requester(r, (const uint8_t *)s->w, s->n * 8, C_MPI, C_LIBC,
				     &ops, &scan, res);
}

/*
 * main -> app function -> operator new -> malloc -> mmap. Stale return
 * addresses into MPI and into libstdc++'s own code sit in malloc's frame
 * below its return address: the old scan took the first of them.
 */
static void test_cxx_new_owner_is_app(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap (leaf): RA into malloc */
	push_word(&s, 0x1111);		/* malloc: saved rbx */
	push_word(&s, 0x2010);		/* malloc's RA into _Znwm */
	push_word(&s, 0x2222);		/* _Znwm: saved rbx */
	push_word(&s, 0x4010);		/* _Znwm's RA into the app function */
	push_word(&s, 0x3333);		/* app function: saved rbx */
	push_word(&s, 0x4110);		/* its RA into main */
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4010);
	assert_false(res.fallback);
	assert_int_equal(res.frames, 4);
	assert_int_equal(res.entry, 0);
}

/*
 * The allocation stack: with stack_depth the walk goes on past the
 * requester (app function <- another app function <- _start) and keeps
 * the requester's pc and its callers', at most the depth; without, it
 * stops at the requester as before and keeps that one pc.
 */
static void test_alloc_stack(void **state)
{
	struct unwind_ops deep = ops;
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap (leaf): RA into malloc */
	push_word(&s, 0x1111);		/* malloc: saved rbx */
	push_word(&s, 0x2010);		/* malloc's RA into _Znwm */
	push_word(&s, 0x2222);		/* _Znwm: saved rbx */
	push_word(&s, 0x4010);		/* _Znwm's RA into the app function */
	push_word(&s, 0x3333);		/* app function: saved rbx */
	push_word(&s, 0x4310);		/* its RA into another app function */
	push_word(&s, 0x4444);		/* that one: saved rbx */
	push_word(&s, 0x4210);		/* its RA into _start */
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.frames, 4);
	assert_int_equal(res.nstack, 1);
	assert_int_equal(res.stack[0], 0x4010);

	deep.stack_depth = ALLOC_STACK_DEPTH;
	assert_true(unwind_find_requester(&r, (const uint8_t *)s.w, s.n * 8, C_MPI, C_LIBC, &deep,
					  &scan, &res));
	/* Requester and owner as without the stack: only the walk is longer. */
	assert_int_equal(res.caller, 0x4010);
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.entry, 0);
	assert_int_equal(res.nstack, 3);
	assert_int_equal(res.stack[1], 0x4310);
	assert_int_equal(res.stack[2], 0x4210);

	deep.stack_depth = 2;
	assert_true(unwind_find_requester(&r, (const uint8_t *)s.w, s.n * 8, C_MPI, C_LIBC, &deep,
					  &scan, &res));
	assert_int_equal(res.nstack, 2);
	assert_int_equal(res.frames, 5);
}

/*
 * A stale return address into MPI in a saved-register slot: the word scan
 * takes it for malloc's caller (the C++ bug of issue 10), the walk reads
 * the slot as the saved rbx it is.
 */
static void test_stale_words_ignored(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;
	struct callscan_result cr;

	(void)state;
	push_word(&s, 0x1150);		/* mmap's RA into malloc */
	push_word(&s, 0x3020);		/* malloc: saved rbx, holding an old MPI return address */
	push_word(&s, 0x2010);		/* malloc's RA into _Znwm */
	push_word(&s, 0x8888);		/* _Znwm: saved rbx */
	push_word(&s, 0x4010);		/* _Znwm's RA into the program */
	assert_true(callscan_find_caller((const uint8_t *)s.w, s.n * 8, C_LIBC, &scan, &cr));
	assert_int_equal(cr.owner, C_MPI);
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4010);
	assert_false(res.fallback);
}

/* libstdc++ allocating for itself (not in operator new) owns its memory. */
static void test_library_for_itself(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);
	push_word(&s, 0x1);
	push_word(&s, 0x2110);		/* malloc's RA into libstdc++'s own function */
	push_word(&s, 0x2);
	push_word(&s, 0x4010);
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, C_STDCXX);
	assert_int_equal(res.caller, 0x2110);
}

/*
 * main -> MPI_Init (frame pointer) -> ompi internals -> malloc -> mmap:
 * the owner is MPI and the entry is the pc in MPI_Init, the outermost MPI
 * frame before the program's.
 */
static void test_mpi_entry(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x1);		/* malloc: rbx */
	push_word(&s, 0x3010);		/* malloc -> ompi internals */
	push_word(&s, 0x2);		/* internals: rbx */
	push_word(&s, 0x3110);		/* internals -> MPI_Init */
	/* MPI_Init: rbp-based, locals, then saved rbp and RA at CFA-16/-8 */
	push_word(&s, 0x2150);		/* a stale libstdc++ pointer among its locals */
	push_word(&s, 0x0);
	push_word(&s, 0xabc);		/* saved rbp (main's) */
	push_word(&s, 0x4110);		/* MPI_Init -> main */
	regs_at(&r, 0x1010);
	/* rbp of MPI_Init's frame: its saved rbp sits at SP0 + 7*8 */
	r.r[CFI_RBP] = SP0 + 7 * 8;
	/* internals keep rbp unchanged (same value), so MPI_Init's rbp reaches it */
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, C_MPI);
	assert_int_equal(res.caller, 0x3010);
	assert_int_equal(res.entry, 0x3110);
	assert_false(res.fallback);
}

/* The requester needs no CFI of its own: the walk stops at it. */
static void test_requester_without_cfi(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x1);
	push_word(&s, 0x5010);		/* malloc -> a library without CFI */
	push_word(&s, 0x55);		/* its locals */
	push_word(&s, 0x4010);		/* its caller */
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, C_NOCFI);
	assert_int_equal(res.caller, 0x5010);
	assert_false(res.fallback);
}

/* The program's frame is outside known code (a JIT): the scan from there, counted. */
static void test_fallback_unknown_code(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x1);
	push_word(&s, 0x9010);		/* malloc -> code nobody knows */
	push_word(&s, 0x4110);		/* a word further up: the program */
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_true(res.fallback);
	assert_int_equal(res.stop, UNWIND_STOP_NOT_CODE);
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4110);
}

/* A forwarder without CFI in the middle: the walk hands over to the scan there. */
static void test_fallback_no_cfi_forwarder(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x1);
	push_word(&s, 0x6020);		/* malloc -> the interposer without CFI */
	push_word(&s, 0x77);		/* its locals */
	push_word(&s, 0x4020);		/* its caller: the program */
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_true(res.fallback);
	assert_int_equal(res.stop, UNWIND_STOP_NO_CFI);
	assert_int_equal(res.stop_pc, 0x6020);
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4020);
}

/* The next frame lies beyond the copy: not found, no guess from the rest. */
static void test_copy_end(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x4010);		/* a stale program word; malloc's RA is beyond */
	regs_at(&r, 0x1010);
	assert_false(walk(&s, &r, &res));
	assert_true(res.forwarders_only);
	assert_false(res.fallback);
	assert_int_equal(res.stop, UNWIND_STOP_COPY_END);
}

/* Only forwarders down to the outermost frame: libc acting for itself. */
static void test_outermost_forwarders_only(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x1);
	push_word(&s, 0x4210);		/* malloc -> _start: outermost, but app code */
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, COMP_APP);
	/* _start itself doing the request: found, and the walk stops there. */
	s.n = 0;
	push_word(&s, 0x4210);		/* mmap -> _start */
	push_word(&s, 0x0);
	regs_at(&r, 0x1010);
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.caller, 0x4210);
}

/* No registers (an old record): the scan alone, counted as a fallback. */
static void test_no_registers(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);
	push_word(&s, 0x4010);
	regs_at(&r, 0x1010);
	r.valid &= ~(1u << CFI_RA);
	assert_true(walk(&s, &r, &res));
	assert_true(res.fallback);
	assert_int_equal(res.owner, COMP_APP);
}

/* A row whose CFA goes below the stack (a bad frame pointer) must not loop: the scan takes over. */
static void test_no_progress(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1);
	push_word(&s, 0x4010);
	regs_at(&r, 0x1250);		/* libc code with a frame pointer row */
	r.r[CFI_RBP] = SP0 - 64;
	frames_asked = 0;
	assert_true(walk(&s, &r, &res));
	assert_true(res.fallback);
	assert_int_equal(res.stop, UNWIND_STOP_STEP);
	assert_int_equal(res.owner, COMP_APP);
	assert_true(frames_asked < 10);
}

static bool walk_deep(const struct fake_stack *s, const struct unwind_regs *r,
		      struct unwind_result *res)
{
	return unwind_find_requester(r, (const uint8_t *)s->w, s->n * 8, C_MPI, C_LIBC,
				     &deep_ops, &scan, res);
}

/* The rule alone: the first non-forwarder outward of the outermost discarding frame. */
static void test_pick_rule(void **state)
{
	const struct unwind_frame plain[] = {
		{ C_LIBC, true, false }, { C_MPI, false, false }, { COMP_APP, false, false },
	};
	const struct unwind_frame hooked[] = {
		{ C_LIBC, true, false },	/* syscall() */
		{ C_MPI, false, false },	/* the hook's helper */
		{ C_MPI, true, true },		/* the hook */
		{ C_LIBC, true, false },	/* malloc */
		{ COMP_APP, false, false },	/* the program */
		{ C_MPI, false, false },	/* further out */
	};
	const struct unwind_frame twice[] = {
		{ C_MPI, true, true }, { C_STDCXX, false, false }, { C_MPI, true, true },
		{ C_LIBC, true, false }, { COMP_APP, false, false },
	};
	const struct unwind_frame nothing_beyond[] = {
		{ COMP_APP, false, false }, { C_MPI, true, true }, { C_LIBC, true, false },
	};

	(void)state;
	assert_int_equal(unwind_pick(plain, 3), 1);
	assert_int_equal(unwind_pick(hooked, 6), 4);
	/* Two hooks on the walk: the outermost counts, not the first. */
	assert_int_equal(unwind_pick(twice, 5), 4);
	/* Nothing outside the forwarders beyond the hook: not found, never the inner frame. */
	assert_int_equal(unwind_pick(nothing_beyond, 3), -1);
	assert_int_equal(unwind_pick(plain, 0), -1);
}

/*
 * Open MPI's patcher: program -> malloc -> (libc's mmap, patched: a jump,
 * no frame) -> the hook -> its helper -> syscall(). The helper is the
 * first frame outside libc, and no spec names it: the requester is the
 * program, outward of the hook.
 */
static void build_hooked(struct fake_stack *s, struct unwind_regs *r)
{
	s->n = 0;
	push_word(s, 0x7110);		/* syscall() (leaf) -> the helper */
	push_word(s, 0x1);		/* helper: rbx */
	push_word(s, 0x7010);		/* helper -> the hook */
	push_word(s, 0x2);		/* hook: rbx */
	push_word(s, 0x1150);		/* hook -> malloc (mmap jumped, no frame of its own) */
	push_word(s, 0x3);		/* malloc: rbx */
	push_word(s, 0x4010);		/* malloc -> the program */
	push_word(s, 0x4);		/* program function: rbx */
	push_word(s, 0x4210);		/* -> _start */
	push_word(s, 0x0);
	regs_at(r, 0x1010);
}

static void test_hook_inner_frames_discarded(void **state)
{
	struct fake_stack s;
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	build_hooked(&s, &r);
	assert_true(walk_deep(&s, &r, &res));
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4010);
	assert_false(res.fallback);
	/* Stopping at the first candidate (no discarders known) charges the hook's library. */
	assert_true(walk(&s, &r, &res));
	assert_int_equal(res.owner, C_MPI);
	assert_int_equal(res.caller, 0x7110);
}

/*
 * A callback libc calls (qsort's comparator, a thread's start routine)
 * that mallocs owns its memory, in a process with hooks too: libc
 * forwards, but does not discard what is inner to it.
 */
static void test_callback_owns(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x1150);		/* mmap -> malloc */
	push_word(&s, 0x1);
	push_word(&s, 0x4010);		/* malloc -> the comparator (program) */
	push_word(&s, 0x2);
	push_word(&s, 0x1160);		/* comparator -> qsort (libc) */
	push_word(&s, 0x3);
	push_word(&s, 0x4310);		/* qsort -> the program's caller of qsort */
	push_word(&s, 0x4);
	push_word(&s, 0x4210);		/* -> _start */
	push_word(&s, 0x0);
	regs_at(&r, 0x1010);
	assert_true(walk_deep(&s, &r, &res));
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4010);
}

/*
 * A forward library discards too: UCX's libucm dispatching to a handler
 * in MPI code that does the mapping (or to relocated libc code in a
 * trampoline) on the program's behalf.
 */
static void test_forward_library_discards(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x3010);		/* mmap -> an MPI handler */
	push_word(&s, 0x1);
	push_word(&s, 0x7210);		/* handler -> libucm's hook */
	push_word(&s, 0x2);
	push_word(&s, 0x4010);		/* libucm -> the program */
	push_word(&s, 0x3);
	push_word(&s, 0x4210);
	push_word(&s, 0x0);
	regs_at(&r, 0x1010);
	assert_true(walk_deep(&s, &r, &res));
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4010);
}

/*
 * MPI's own request through a hook: the requester is the MPI frame
 * outward of it, and the entry the outermost MPI frame (MPI_Alloc_mem's
 * malloc goes through the patched mmap too).
 */
static void test_hook_mpi_entry(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x7110);		/* syscall() -> helper */
	push_word(&s, 0x1);
	push_word(&s, 0x7010);		/* helper -> hook */
	push_word(&s, 0x2);
	push_word(&s, 0x1150);		/* hook -> malloc */
	push_word(&s, 0x3);
	push_word(&s, 0x3010);		/* malloc -> ompi internals */
	push_word(&s, 0x4);
	push_word(&s, 0x3020);		/* internals -> internals (the MPI call) */
	push_word(&s, 0x5);
	push_word(&s, 0x4010);		/* -> the program */
	push_word(&s, 0x6);
	push_word(&s, 0x4210);
	push_word(&s, 0x0);
	regs_at(&r, 0x1010);
	assert_true(walk_deep(&s, &r, &res));
	assert_int_equal(res.owner, C_MPI);
	assert_int_equal(res.caller, 0x3010);
	assert_int_equal(res.entry, 0x3020);
}

/*
 * Only the hook's work and forwarders, then code the walk cannot go
 * through: the scan looks from there on, never at the frames inner to
 * the hook.
 */
static void test_hook_then_fallback(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_regs r;
	struct unwind_result res;

	(void)state;
	push_word(&s, 0x7110);		/* syscall() -> helper */
	push_word(&s, 0x1);
	push_word(&s, 0x7010);		/* helper -> hook */
	push_word(&s, 0x2);
	push_word(&s, 0x9010);		/* hook -> code nobody knows */
	push_word(&s, 0x4310);		/* a word further up: the program */
	regs_at(&r, 0x1010);
	assert_true(walk_deep(&s, &r, &res));
	assert_true(res.fallback);
	assert_int_equal(res.stop, UNWIND_STOP_NOT_CODE);
	assert_int_equal(res.owner, COMP_APP);
	assert_int_equal(res.caller, 0x4310);
}


/* Whether the trace lists the stack word at byte offset off. */
static bool dep_on_word(const struct unwind_trace *tr, uint32_t off)
{
	for (unsigned int i = 0; i < tr->n; i++)
		if (tr->dep[i].reg < 0 && tr->dep[i].off == off)
			return true;
	return false;
}

static bool dep_on_reg(const struct unwind_trace *tr, int reg)
{
	for (unsigned int i = 0; i < tr->n; i++)
		if (tr->dep[i].reg == reg)
			return true;
	return false;
}

static bool same_result(const struct unwind_result *a, const struct unwind_result *b)
{
	return a->caller == b->caller && a->owner == b->owner && a->entry == b->entry &&
	       a->frames == b->frames && a->fallback == b->fallback &&
	       a->forwarders_only == b->forwarders_only && a->nstack == b->nstack &&
	       !memcmp(a->stack, b->stack, a->nstack * sizeof(a->stack[0]));
}

/*
 * The trace of a walk (what a kept walk is matched by, requester.c):
 * every return address it followed and the frame pointer it based a CFA
 * on, not the callee-saved registers it restored and never used. The
 * proof that it is enough: any word of the copy, or register at the call,
 * not in it can change and the walk gives the same result; a word in it
 * changes the result.
 */
static void test_trace_lists_what_was_used(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_ops o = ops;
	struct unwind_trace tr, tr2;
	struct unwind_result res, res2;
	struct unwind_regs r, r2;

	(void)state;
	push_word(&s, 0x1150);		/* mmap (leaf): RA into malloc */
	push_word(&s, 0x1111);		/* malloc: saved rbx */
	push_word(&s, 0x2010);		/* malloc's RA into _Znwm */
	push_word(&s, 0x2222);		/* _Znwm: saved rbx */
	push_word(&s, 0x4010);		/* _Znwm's RA into the app function */
	push_word(&s, 0x3333);		/* app function: saved rbx */
	push_word(&s, 0x4110);		/* its RA into main (a frame pointer: CFA = rbp + 16) */
	push_word(&s, 0x7777);		/* main's local */
	push_word(&s, 0x9999);		/* main's caller's rbp, saved at rbp */
	push_word(&s, 0x4210);		/* main's RA into _start (outermost) */
	o.trace = &tr;
	o.stack_depth = ALLOC_STACK_DEPTH;	/* the walk goes on to the end */
	regs_at(&r, 0x1010);
	r.r[CFI_RBP] = SP0 + 8 * 8;	/* main's frame: rbp points at the saved rbp */
	r.r[CFI_RBX] = 0x5555;
	assert_true(unwind_find_requester(&r, (const uint8_t *)s.w, s.n * 8, C_MPI, C_LIBC,
					  &o, &scan, &res));
	assert_int_equal(res.caller, 0x4010);
	assert_int_equal(res.nstack, 3);
	assert_false(tr.partial);
	for (uint32_t off = 0; off < 10 * 8; off += 8)
		assert_int_equal(dep_on_word(&tr, off), off == 0 || off == 16 || off == 32 ||
					     off == 48 || off == 72);
	assert_true(dep_on_reg(&tr, CFI_RBP));
	assert_true(dep_on_reg(&tr, CFI_RSP));
	assert_true(dep_on_reg(&tr, CFI_RA));
	assert_false(dep_on_reg(&tr, CFI_RBX));

	for (size_t i = 0; i < s.n; i++) {
		struct fake_stack t = s;

		t.w[i] ^= 0x40;
		assert_true(unwind_find_requester(&r, (const uint8_t *)t.w, t.n * 8, C_MPI, C_LIBC,
						  &(struct unwind_ops){ .cfi = cfi, .frame = frame,
									.stack_depth = ALLOC_STACK_DEPTH,
									.trace = &tr2 },
						  &scan, &res2) || dep_on_word(&tr, (uint32_t)i * 8));
		if (!dep_on_word(&tr, (uint32_t)i * 8))
			assert_true(same_result(&res, &res2));
		else
			assert_false(same_result(&res, &res2) && tr2.n == tr.n &&
				     !memcmp(tr2.dep, tr.dep, tr.n * sizeof(tr.dep[0])));
	}
	r2 = r;
	r2.r[CFI_RBX] = 0x6666;		/* not used: the same walk */
	unwind_find_requester(&r2, (const uint8_t *)s.w, s.n * 8, C_MPI, C_LIBC, &o, &scan, &res2);
	assert_true(same_result(&res, &res2));
}

/* A walk the word scan finished read the whole copy: its trace says it is partial. */
static void test_trace_partial_after_scan(void **state)
{
	struct fake_stack s = { .n = 0 };
	struct unwind_ops o = ops;
	struct unwind_trace tr;
	struct unwind_result res;
	struct unwind_regs r;

	(void)state;
	push_word(&s, 0x8888);		/* mmap's RA into no known code: the walk stops */
	push_word(&s, 0x4010);		/* a word the scan takes */
	o.trace = &tr;
	regs_at(&r, 0x1010);
	unwind_find_requester(&r, (const uint8_t *)s.w, s.n * 8, C_MPI, C_LIBC, &o, &scan, &res);
	assert_true(res.fallback);
	assert_true(tr.partial);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_new_owner_is_app),
		cmocka_unit_test(test_alloc_stack),
		cmocka_unit_test(test_stale_words_ignored),
		cmocka_unit_test(test_library_for_itself),
		cmocka_unit_test(test_mpi_entry),
		cmocka_unit_test(test_requester_without_cfi),
		cmocka_unit_test(test_fallback_unknown_code),
		cmocka_unit_test(test_fallback_no_cfi_forwarder),
		cmocka_unit_test(test_copy_end),
		cmocka_unit_test(test_outermost_forwarders_only),
		cmocka_unit_test(test_no_registers),
		cmocka_unit_test(test_no_progress),
		cmocka_unit_test(test_pick_rule),
		cmocka_unit_test(test_hook_inner_frames_discarded),
		cmocka_unit_test(test_callback_owns),
		cmocka_unit_test(test_forward_library_discards),
		cmocka_unit_test(test_hook_mpi_entry),
		cmocka_unit_test(test_hook_then_fallback),
		cmocka_unit_test(test_trace_lists_what_was_used),
		cmocka_unit_test(test_trace_partial_after_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
