// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Inference of pre-attach owners (infer.c, heapwalk.c, infer_mem.c) on
 * synthetic process images: malloc's chunk headers walked (in use from the
 * next chunk's PREV_INUSE, the top chunk free, a corrupt size stops the
 * walk), an arena's first chunk found past heap_info and malloc_state,
 * mmap'd chunks split out of one merged mapping; reachability: transitive,
 * the nearest root wins, ties go to the program before other libraries and
 * MPI, libc owns nothing, stack words belong to their frame's code, a
 * thread stack to its outermost frame outside libc; registers, and values
 * saved below a program frame, the program's after MPI's data; a word pointing inside
 * a chunk counts only where no word points at its start; the read budget
 * and the sample that skips large arrays of numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heapwalk.h"
#include "infer.h"
#include "infer_mem.h"

#define PG	0x1000ULL
#define LIBC	10
#define MPI	11
#define LIB	12

/* A process image: a few segments, zeros elsewhere. */
struct seg {
	uint64_t base, len;
	uint8_t *data;
};

struct image {
	struct seg s[8];
	int n;
	uint64_t reads;
};

static uint8_t *seg_new(struct image *im, uint64_t base, uint64_t len)
{
	struct seg *s = &im->s[im->n++];

	s->base = base;
	s->len = len;
	s->data = calloc(1, len);
	assert_non_null(s->data);
	return s->data;
}

static void image_free(struct image *im)
{
	for (int i = 0; i < im->n; i++)
		free(im->s[i].data);
}

static void put(struct image *im, uint64_t addr, uint64_t v)
{
	for (int i = 0; i < im->n; i++)
		if (addr >= im->s[i].base && addr + 8 <= im->s[i].base + im->s[i].len) {
			memcpy(im->s[i].data + (addr - im->s[i].base), &v, 8);
			return;
		}
	fail_msg("put outside the image: %#llx", (unsigned long long)addr);
}

static int64_t image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	int64_t got = 0;

	memset(buf, 0, len);
	for (int i = 0; i < im->n; i++) {
		uint64_t lo = addr > im->s[i].base ? addr : im->s[i].base;
		uint64_t hi = addr + len < im->s[i].base + im->s[i].len ? addr + len :
			      im->s[i].base + im->s[i].len;

		if (lo >= hi)
			continue;
		memcpy((uint8_t *)buf + (lo - addr), im->s[i].data + (lo - im->s[i].base), hi - lo);
		got += (int64_t)(hi - lo);
	}
	im->reads++;
	return got;
}

/* A chunk header at c of size sz; prev_inuse: the chunk before is in use. */
static void chunk(struct image *im, uint64_t c, uint64_t sz, bool prev_inuse)
{
	put(im, c + 8, sz | (prev_inuse ? CHUNK_PREV_INUSE : 0));
}

struct seen {
	uint64_t start[16], end[16];
	bool in_use[16];
	int n;
};

static int note_chunk(void *ctx, uint64_t start, uint64_t end, bool in_use)
{
	struct seen *s = ctx;

	s->start[s->n] = start;
	s->end[s->n] = end;
	s->in_use[s->n++] = in_use;
	return 0;
}

#define HEAP	0x555500000000ULL

/* in use A, free B, in use C, top: in use is the next chunk's PREV_INUSE bit. */
static void test_walk_heap(void **state)
{
	struct image im = { 0 };
	struct infer_mem m;
	struct seen s = { 0 };

	(void)state;
	seg_new(&im, HEAP, 4 * PG);
	chunk(&im, HEAP, 0x30, true);
	chunk(&im, HEAP + 0x30, 0x40, true);		/* A: the first is in use */
	chunk(&im, HEAP + 0x70, 0x100, true);		/* B: A is in use */
	chunk(&im, HEAP + 0x170, 0x80, false);		/* C: B is free */
	chunk(&im, HEAP + 0x1f0, 4 * PG - 0x1f0, true);	/* top: C is in use */
	assert_int_equal(infer_mem_init(&m, image_read, &im, 0), 0);
	assert_int_equal(heapwalk_chunks(&m, HEAP, HEAP + 4 * PG, note_chunk, &s), HEAP + 4 * PG);
	assert_int_equal(s.n, 5);
	assert_true(s.in_use[0]);
	assert_true(s.in_use[1]);
	assert_false(s.in_use[2]);
	assert_int_equal(s.start[2], HEAP + 0x70);
	assert_int_equal(s.end[2], HEAP + 0x170);
	assert_true(s.in_use[3]);
	assert_false(s.in_use[4]);	/* the top chunk */
	assert_int_equal(s.end[4], HEAP + 4 * PG);

	/* A size that makes no sense stops the walk there. */
	chunk(&im, HEAP + 0x70, 0x1238, true);
	infer_mem_free(&m);	/* its blocks hold the old image */
	assert_int_equal(infer_mem_init(&m, image_read, &im, 0), 0);
	s.n = 0;
	assert_int_equal(heapwalk_chunks(&m, HEAP, HEAP + 4 * PG, note_chunk, &s), HEAP + 0x70);
	infer_mem_free(&m);
	image_free(&im);
}

#define ARENA	0x7f0004000000ULL	/* HEAP_MAX_SIZE aligned */

/* heap_info, then malloc_state (bins: pointers and zeros), then the chunks. */
static void test_arena_first(void **state)
{
	struct image im = { 0 };
	struct infer_mem m;
	uint64_t used, first = ARENA + 0x8b0;

	(void)state;
	seg_new(&im, ARENA, 16 * PG);
	put(&im, ARENA, ARENA + 0x30);		/* ar_ptr: its malloc_state follows */
	put(&im, ARENA + 16, 8 * PG);		/* size: the used part */
	for (uint64_t a = ARENA + 0x60; a < first - 0x100; a += 16) {
		put(&im, a, a - 16);		/* empty bins point at themselves */
		put(&im, a + 8, a - 16);
	}
	chunk(&im, first, 0x200, true);
	chunk(&im, first + 0x200, 0x400, true);
	chunk(&im, first + 0x600, ARENA + 8 * PG - (first + 0x600), true);
	assert_int_equal(infer_mem_init(&m, image_read, &im, 0), 0);
	assert_int_equal(heapwalk_arena_first(&m, ARENA, ARENA + 16 * PG, &used), first);
	assert_int_equal(used, ARENA + 8 * PG);
	infer_mem_free(&m);
	image_free(&im);
}

#define ANON	0x7f1000000000ULL

static void test_mmapped_chunks(void **state)
{
	struct image im = { 0 };
	struct infer_mem m;

	(void)state;
	seg_new(&im, ANON, 8 * PG);
	put(&im, ANON + 8, 3 * PG | CHUNK_IS_MMAPPED);
	assert_int_equal(infer_mem_init(&m, image_read, &im, 0), 0);
	assert_int_equal(heapwalk_mmapped_at(&m, ANON, ANON + 8 * PG), 3 * PG);
	assert_int_equal(heapwalk_mmapped_at(&m, ANON + 3 * PG, ANON + 8 * PG), 0);
	/* Longer than what is left of the mapping: not a chunk. */
	put(&im, ANON + 4 * PG + 8, 5 * PG | CHUNK_IS_MMAPPED);
	assert_int_equal(heapwalk_mmapped_at(&m, ANON + 4 * PG, ANON + 8 * PG), 0);
	infer_mem_free(&m);
	image_free(&im);
}

/* One page-sized in-use chunk per page of the heap, page i at HEAP + i * PG. */
static void page_chunks(struct image *im, int npages)
{
	seg_new(im, HEAP, (uint64_t)npages * PG);
	for (int i = 0; i < npages; i++)
		chunk(im, HEAP + (uint64_t)i * PG, PG, true);
	/* The last page is the top chunk. */
}

#define P(i)	(HEAP + (uint64_t)(i) * PG + 16)	/* a pointer to chunk i's user data */

static comp_id owner_at(const struct infer_result *res, uint64_t addr)
{
	for (size_t i = 0; i < res->nruns; i++)
		if (addr >= res->runs[i].start && addr < res->runs[i].end)
			return res->runs[i].owner;
	return 9999;
}

#define DATA_APP	0x555400000000ULL
#define DATA_LIB	0x7f2000000000ULL
#define DATA_MPI	0x7f3000000000ULL
#define DATA_LIBC	0x7f4000000000ULL

static struct infer_area area(uint64_t start, uint64_t end, enum infer_kind kind, comp_id owner)
{
	return (struct infer_area){ .start = start, .end = end, .kind = kind, .owner = owner };
}

static const struct infer_params prm = { .libc = LIBC, .mpi = MPI, .stack = COMP_STACK };

static void roots(struct image *im, struct infer_area *a, size_t *n)
{
	seg_new(im, DATA_APP, PG);
	seg_new(im, DATA_LIB, PG);
	seg_new(im, DATA_MPI, PG);
	seg_new(im, DATA_LIBC, PG);
	a[(*n)++] = area(DATA_APP, DATA_APP + PG, AREA_ROOT, COMP_APP);
	a[(*n)++] = area(DATA_LIB, DATA_LIB + PG, AREA_ROOT, LIB);
	a[(*n)++] = area(DATA_MPI, DATA_MPI + PG, AREA_ROOT, MPI);
	a[(*n)++] = area(DATA_LIBC, DATA_LIBC + PG, AREA_ROOT, LIBC);
}

/* A heap of npages one-page chunks and every module's data: the usual image. */
static void heap_and_roots(struct image *im, struct infer_area *a, size_t *n, int npages)
{
	page_chunks(im, npages);
	roots(im, a, n);
	a[(*n)++] = area(HEAP, HEAP + (uint64_t)npages * PG, AREA_HEAP, COMP_UNATTRIBUTED);
}

static void test_reachability(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	heap_and_roots(&im, a, &n, 16);
	put(&im, DATA_APP, P(0));		/* app -> 0 */
	put(&im, DATA_LIB, P(1));		/* lib -> 1 -> 2 -> 3 (interior pointer) */
	put(&im, P(1), P(2));
	put(&im, P(2) + 64, P(3) + 200);
	put(&im, DATA_LIBC, P(4));		/* malloc's own: owns nothing */
	put(&im, P(4), P(5));
	put(&im, DATA_APP + 8, P(6));		/* app and lib both at one: the program's */
	put(&im, DATA_LIB + 8, P(6));
	put(&im, DATA_LIB + 16, P(7));		/* lib and MPI both at one: the library's */
	put(&im, DATA_MPI, P(7));
	put(&im, DATA_MPI + 8, P(8));		/* MPI at one, app at two: MPI's, nearer */
	put(&im, DATA_APP + 16, P(9));
	put(&im, P(9), P(8));
	put(&im, P(0), P(4));			/* 4 reached by app through 0: app's after all */
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(0)), COMP_APP);
	assert_int_equal(owner_at(&res, P(1)), LIB);
	assert_int_equal(owner_at(&res, P(2)), LIB);
	assert_int_equal(owner_at(&res, P(3)), LIB);
	assert_int_equal(owner_at(&res, P(4)), COMP_APP);
	assert_int_equal(owner_at(&res, P(5)), COMP_APP);
	assert_int_equal(owner_at(&res, P(6)), COMP_APP);
	assert_int_equal(owner_at(&res, P(7)), LIB);
	assert_int_equal(owner_at(&res, P(8)), MPI);
	assert_int_equal(owner_at(&res, P(9)), COMP_APP);
	assert_int_equal(owner_at(&res, P(10)), COMP_UNATTRIBUTED);	/* nobody's */
	assert_false(res.budget_hit);
	/* Runs are page-aligned, sorted, adjacent owners merged. */
	for (size_t i = 0; i < res.nruns; i++) {
		assert_int_equal(res.runs[i].start % PG, 0);
		if (i)
			assert_true(res.runs[i].start >= res.runs[i - 1].end);
		if (i && res.runs[i].start == res.runs[i - 1].end)
			assert_int_not_equal(res.runs[i].owner, res.runs[i - 1].owner);
	}
	infer_result_free(&res);
	image_free(&im);
}

/*
 * A number in MPI's data that looks like an address inside the program's
 * array (HPCCG under MPICH: two ints side by side) is nearer than the
 * program's own path to the array's start (main's frame -> the matrix ->
 * the array): the start wins. A word pointing only inside still reaches.
 * Mutations caught: inner words reaching as starts do (chunk 1 becomes
 * MPI's); inner words never promoted (chunks 4 and 5 stay unattributed);
 * the last inner word met kept instead of the first (chunk 6 becomes MPI's).
 */
static void test_inner_words_weaker(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	heap_and_roots(&im, a, &n, 16);
	put(&im, DATA_APP, P(0));		/* app -> 0 -> 1 (its start) */
	put(&im, P(0), P(1));
	put(&im, DATA_MPI, P(1) + 1000);	/* MPI at one, inside 1 */
	put(&im, DATA_LIB, P(4) + 512);		/* only inside 4: lib's, and 4 -> 5 */
	put(&im, P(4), P(5));
	put(&im, DATA_APP + 8, P(6) + 256);	/* inside 6: app first, then MPI */
	put(&im, DATA_MPI + 8, P(6) + 512);
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(1)), COMP_APP);
	assert_int_equal(owner_at(&res, P(4)), LIB);
	assert_int_equal(owner_at(&res, P(5)), LIB);
	assert_int_equal(owner_at(&res, P(6)), COMP_APP);
	infer_result_free(&res);
	image_free(&im);
}

/* libc alone reaches it: it stays unattributed (allocator bookkeeping is no owner). */
static void test_libc_owns_nothing(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	heap_and_roots(&im, a, &n, 4);
	put(&im, DATA_LIBC, P(0));
	put(&im, P(0), P(1));
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(0)), COMP_UNATTRIBUTED);
	assert_int_equal(owner_at(&res, P(1)), COMP_UNATTRIBUTED);
	assert_int_equal(res.reached, 0);
	infer_result_free(&res);
	image_free(&im);
}

#define RELRO_LIB	0x7f2100000000ULL
#define RELRO_LIBC	0x7f4100000000ULL

/*
 * An object of a library's class keeps what it points to for the library
 * (LAMMPS: main holds the one LAMMPS object, liblammps allocated every
 * array hanging from it), while the object stays its finder's. Only the
 * first word is a vtable pointer; libc's classes pass nothing on.
 * Mutations caught: the rule dropped (chunks 1 and 2 become the program's);
 * the object itself given to the class (chunk 0 becomes the library's); a
 * vtable pointer looked for past the first word (chunk 8 becomes the
 * library's); libc's classes passing libc on (chunk 4 unattributed).
 */
static void test_class_owner(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	heap_and_roots(&im, a, &n, 12);
	a[n++] = area(RELRO_LIB, RELRO_LIB + PG, AREA_CLASSES, LIB);
	a[n++] = area(RELRO_LIBC, RELRO_LIBC + PG, AREA_CLASSES, LIBC);
	put(&im, DATA_APP, P(0));		/* app -> 0, an object of lib's class */
	put(&im, P(0), RELRO_LIB + 16);
	put(&im, P(0) + 8, P(1));		/* -> 1 -> 2: lib's */
	put(&im, P(1), P(2));
	put(&im, DATA_APP + 8, P(3));		/* app -> 3, of libc's class -> 4: app's */
	put(&im, P(3), RELRO_LIBC + 16);
	put(&im, P(3) + 8, P(4));
	put(&im, DATA_APP + 16, P(7));		/* app -> 7, a vtable word not first -> 8 */
	put(&im, P(7) + 8, RELRO_LIB + 16);
	put(&im, P(7) + 16, P(8));
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(0)), COMP_APP);
	assert_int_equal(owner_at(&res, P(1)), LIB);
	assert_int_equal(owner_at(&res, P(2)), LIB);
	assert_int_equal(owner_at(&res, P(3)), COMP_APP);
	assert_int_equal(owner_at(&res, P(4)), COMP_APP);
	assert_int_equal(owner_at(&res, P(7)), COMP_APP);
	assert_int_equal(owner_at(&res, P(8)), COMP_APP);
	infer_result_free(&res);
	image_free(&im);
}

#define CODE_APP	0x555300000000ULL
#define CODE_MPI	0x7f5000000000ULL
#define CODE_LIBC	0x7f6000000000ULL
#define STACK		0x7ffd00000000ULL
#define TSTACK		0x7f7000000000ULL

/* The program's, MPI's and libc's code: what return addresses point into. */
static void code_areas(struct infer_area *a, size_t *n)
{
	a[(*n)++] = area(CODE_APP, CODE_APP + PG, AREA_CODE, COMP_APP);
	a[(*n)++] = area(CODE_MPI, CODE_MPI + PG, AREA_CODE, MPI);
	a[(*n)++] = area(CODE_LIBC, CODE_LIBC + PG, AREA_CODE, LIBC);
}

/*
 * A stack, innermost first: libc's frame, a return address into the
 * program, the program's frame, a return into MPI, MPI's frame, a return
 * into libc (the thread's start), what lies above (TLS). The six words
 * right below a return address are where the callee saved the caller's
 * registers: they count for the caller and for the callee (the tie rule
 * decides: the program, then libraries, then MPI; libc never).
 */
static void test_stack_frames(void **state)
{
	struct image im = { 0 };
	struct infer_area a[16];
	struct infer_result res;
	size_t n = 0;
	uint64_t w = TSTACK + 2 * PG;

	(void)state;
	heap_and_roots(&im, a, &n, 10);
	code_areas(a, &n);
	a[n] = area(TSTACK, TSTACK + 4 * PG, AREA_STACK, COMP_APP);
	a[n].claim = true;
	a[n].sp = w;
	a[n++].pc = CODE_LIBC + 0x10;
	seg_new(&im, TSTACK, 4 * PG);
	put(&im, w, P(0));			/* libc's frame (the pc is in libc) */
	put(&im, w + 56, CODE_APP + 0x20);	/* return into the program */
	put(&im, w + 64, P(1));			/* the program's local */
	put(&im, w + 112, P(6));		/* MPI's register, saved by the program's function */
	put(&im, w + 176, P(7));		/* libc's register or MPI's local: MPI's */
	put(&im, w + 120, CODE_MPI + 0x40);	/* return into MPI */
	put(&im, w + 128, P(2));		/* MPI's local */
	put(&im, w + 184, CODE_LIBC + 0x80);	/* return into libc: start_thread */
	put(&im, w + 192, P(3));		/* libc's frame */
	put(&im, w + 256, P(4));		/* above every return address: TLS */
	put(&im, w - 8, P(5));			/* below the stack pointer: dead */
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(0)), COMP_UNATTRIBUTED);
	assert_int_equal(owner_at(&res, P(1)), COMP_APP);
	assert_int_equal(owner_at(&res, P(6)), COMP_APP);	/* a tie: the program's */
	assert_int_equal(owner_at(&res, P(7)), MPI);
	assert_int_equal(owner_at(&res, P(2)), MPI);
	assert_int_equal(owner_at(&res, P(3)), COMP_UNATTRIBUTED);
	assert_int_equal(owner_at(&res, P(4)), COMP_UNATTRIBUTED);
	assert_int_equal(owner_at(&res, P(5)), COMP_UNATTRIBUTED);
	/* The thread's outermost frame outside libc is MPI's: so is its stack. */
	assert_int_equal(owner_at(&res, TSTACK), MPI);
	infer_result_free(&res);

	/* Only the program's frames: its stack is `stack`. */
	put(&im, w + 120, 0);
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, TSTACK), COMP_STACK);
	assert_int_equal(owner_at(&res, P(2)), COMP_APP);
	assert_int_equal(owner_at(&res, P(6)), COMP_APP);
	infer_result_free(&res);
	image_free(&im);
}

/*
 * A library's stack frames are roots only for what the modules' data and
 * the program's frames do not reach: an unwritten slot of an MPI frame
 * holds what an earlier call of the program left there.
 */
static void test_stack_after_data(void **state)
{
	struct image im = { 0 };
	struct infer_area a[16];
	struct infer_result res;
	size_t n = 0;
	uint64_t w = TSTACK + 2 * PG;

	(void)state;
	heap_and_roots(&im, a, &n, 10);
	a[n++] = area(CODE_APP, CODE_APP + PG, AREA_CODE, COMP_APP);
	a[n++] = area(CODE_MPI, CODE_MPI + PG, AREA_CODE, MPI);
	a[n] = area(TSTACK, TSTACK + 4 * PG, AREA_STACK, COMP_APP);
	a[n].sp = w;
	a[n++].pc = CODE_MPI + 0x10;
	seg_new(&im, TSTACK, 4 * PG);
	put(&im, w, P(1));			/* MPI's frame: a stale pointer to 1 */
	put(&im, w + 8, P(3));			/* ... and to 3 */
	put(&im, w + 64, CODE_APP + 0x20);	/* return into the program */
	put(&im, w + 72, P(0));			/* the program's local: its struct 0 */
	put(&im, P(0), P(1));			/* ... points at its array 1 */
	put(&im, w + 200, CODE_APP + 0x80);	/* the program's caller (main's) */
	put(&im, DATA_LIB, P(2));		/* the library's data: 2 -> 3 */
	put(&im, P(2), P(3));
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(0)), COMP_APP);
	assert_int_equal(owner_at(&res, P(1)), COMP_APP);	/* not MPI's, though nearer */
	assert_int_equal(owner_at(&res, P(2)), LIB);
	assert_int_equal(owner_at(&res, P(3)), LIB);		/* data before MPI's frames */
	infer_result_free(&res);
	image_free(&im);
}

/* A merged anonymous mapping: two mmap'd chunks and a raw block, each its own owner. */
static void test_merged_mapping(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	roots(&im, a, &n);
	seg_new(&im, ANON, 10 * PG);
	a[n++] = area(ANON, ANON + 10 * PG, AREA_ALLOC, COMP_UNATTRIBUTED);
	put(&im, ANON + 8, 3 * PG | CHUNK_IS_MMAPPED);		/* [0, 3): app's */
	put(&im, ANON + 3 * PG + 8, 4 * PG | CHUNK_IS_MMAPPED);	/* [3, 7): lib's */
	/* [7, 10): raw (a direct mmap), MPI's */
	put(&im, DATA_APP, ANON + 16);
	put(&im, DATA_LIB, ANON + 3 * PG + 16);
	put(&im, DATA_MPI, ANON + 8 * PG);
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	/* MPI's word at a page inside the raw block splits it; the piece before is joined back. */
	assert_int_equal(res.nodes, 4);
	assert_int_equal(res.chunks, 2);
	assert_int_equal(owner_at(&res, ANON), COMP_APP);
	assert_int_equal(owner_at(&res, ANON + 3 * PG - 1), COMP_APP);
	assert_int_equal(owner_at(&res, ANON + 3 * PG), LIB);
	assert_int_equal(owner_at(&res, ANON + 7 * PG - 1), LIB);
	assert_int_equal(owner_at(&res, ANON + 7 * PG), MPI);
	assert_int_equal(owner_at(&res, ANON + 10 * PG - 1), MPI);
	infer_result_free(&res);

	/* Aligned like an arena's heap but no chunks where they would be: split the same. */
	a[n - 1].kind = AREA_ARENA;
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(res.nodes, 4);
	assert_int_equal(owner_at(&res, ANON + 3 * PG), LIB);
	assert_int_equal(owner_at(&res, ANON + 7 * PG), MPI);
	infer_result_free(&res);
	image_free(&im);
}

/*
 * A large array of numbers is sampled, not read whole: a pointer it holds
 * where no sample looks reaches nothing. An array of pointers is read
 * whole and reaches what it points at.
 */
static void test_sampled_arrays(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;
	uint64_t big = 4ULL << 20, arr = ANON, ptrs = ANON + big;

	(void)state;
	roots(&im, a, &n);
	page_chunks(&im, 4);
	a[n++] = area(HEAP, HEAP + 4 * PG, AREA_HEAP, COMP_UNATTRIBUTED);
	seg_new(&im, ANON, 2 * big);
	a[n++] = area(ANON, ANON + 2 * big, AREA_ALLOC, COMP_UNATTRIBUTED);
	put(&im, arr + 8, big | CHUNK_IS_MMAPPED);
	put(&im, ptrs + 8, big | CHUNK_IS_MMAPPED);
	for (uint64_t o = 16; o < big; o += 8) {
		double d = (double)o * 0.5;
		uint64_t v;

		memcpy(&v, &d, 8);
		put(&im, arr + o, v);			/* numbers */
		put(&im, ptrs + o, P(1));		/* pointers, all to chunk 1 */
	}
	put(&im, arr + big / 64 + 4096, P(0));		/* between two samples */
	put(&im, DATA_APP, arr + 16);
	put(&im, DATA_LIB, ptrs + 16);
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, arr), COMP_APP);
	assert_int_equal(owner_at(&res, ptrs), LIB);
	assert_int_equal(owner_at(&res, P(0)), COMP_UNATTRIBUTED);
	assert_int_equal(owner_at(&res, P(1)), LIB);
	assert_int_equal(res.skipped_sampled, 1);
	/* Not both read whole (8 MiB): the numbers were sampled. */
	assert_true(res.bytes_read < 7 * big / 4);
	infer_result_free(&res);
	image_free(&im);
}

/*
 * A rank stopped while it waits in MPI, two calls deep: the program's
 * array pointer is in a register and saved by the inner MPI function
 * (the words right below its return address); MPI's own object is in a
 * register too, and in MPI's data. The program's values below a program
 * frame are the program's, after MPI's data has taken its own.
 * Mutations caught: nothing lifted (6 and 3 become MPI's), the lift
 * before MPI's data (4 becomes the program's), registers not roots (3
 * unattributed), the lift where no program frame lies above (8 becomes
 * the program's).
 */
static void test_lifted_registers(void **state)
{
	struct image im = { 0 };
	struct infer_area a[16];
	struct infer_result res;
	size_t n = 0;
	uint64_t w = TSTACK + 2 * PG, regs[] = { P(3), P(4) };

	(void)state;
	heap_and_roots(&im, a, &n, 10);
	code_areas(a, &n);
	a[n] = area(STACK, STACK + 4 * PG, AREA_STACK, COMP_APP);
	a[n].sp = STACK + 2 * PG;
	a[n].pc = CODE_MPI + 0x10;
	a[n].regs = regs;
	a[n++].nregs = 2;
	seg_new(&im, STACK, 4 * PG);
	a[n] = area(TSTACK, TSTACK + 4 * PG, AREA_STACK, COMP_APP);	/* MPI's own thread */
	a[n].sp = w;
	a[n++].pc = CODE_MPI + 0x10;
	seg_new(&im, TSTACK, 4 * PG);
	put(&im, STACK + 2 * PG, P(5));		/* the inner MPI function's local */
	put(&im, STACK + 2 * PG + 48, P(6));	/* ... the register it saved */
	put(&im, STACK + 2 * PG + 56, CODE_MPI + 0x40);	/* return into MPI */
	put(&im, STACK + 2 * PG + 120, CODE_APP + 0x20);	/* return into the program */
	put(&im, STACK + 2 * PG + 128, P(1));	/* the program's local */
	put(&im, STACK + 2 * PG + 184, CODE_LIBC + 0x80);
	put(&im, DATA_MPI, P(4));
	put(&im, w + 48, P(8));			/* saved on a thread with no program frame */
	put(&im, w + 56, CODE_MPI + 0x40);
	put(&im, w + 64, CODE_LIBC + 0x80);
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, P(1)), COMP_APP);
	assert_int_equal(owner_at(&res, P(6)), COMP_APP);
	assert_int_equal(owner_at(&res, P(3)), COMP_APP);
	assert_int_equal(owner_at(&res, P(4)), MPI);
	assert_int_equal(owner_at(&res, P(5)), MPI);
	assert_int_equal(owner_at(&res, P(8)), MPI);
	infer_result_free(&res);
	image_free(&im);
}

/*
 * Two direct mmaps the kernel merged into one mapping, no malloc header
 * in either: the program's static points at the first, the library's at
 * the second (a page boundary inside the mapping). Each keeps its own;
 * before, whoever was scanned first (the program) took both.
 * Mutation caught: no split at page-aligned words (the library's block
 * becomes the program's). Unreached pieces not joined back: caught by
 * test_merged_mapping (the page before MPI's word stays unattributed).
 */
static void test_merged_raw_mmaps(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	roots(&im, a, &n);
	seg_new(&im, ANON, 8 * PG);
	a[n++] = area(ANON, ANON + 8 * PG, AREA_ALLOC, COMP_UNATTRIBUTED);
	put(&im, DATA_APP, ANON);			/* [0, 4): the program's mmap */
	put(&im, DATA_LIB, ANON + 4 * PG);		/* [4, 8): the library's */
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(owner_at(&res, ANON), COMP_APP);
	assert_int_equal(owner_at(&res, ANON + 4 * PG - 1), COMP_APP);
	assert_int_equal(owner_at(&res, ANON + 4 * PG), LIB);
	assert_int_equal(owner_at(&res, ANON + 8 * PG - 1), LIB);
	infer_result_free(&res);
	image_free(&im);
}

/* Nothing anonymous at all (a process that allocated nothing yet): no allocation, no crash. */
static void test_no_allocations(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	size_t n = 0;

	(void)state;
	roots(&im, a, &n);
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_int_equal(res.nodes, 0);
	assert_int_equal(res.nruns, 0);
	infer_result_free(&res);
	image_free(&im);
}

/* The budget stops the reading: the rest is coarse, and it says so. */
static void test_budget(void **state)
{
	struct image im = { 0 };
	struct infer_area a[8];
	struct infer_result res;
	struct infer_params small = prm;
	size_t n = 0;

	(void)state;
	roots(&im, a, &n);
	page_chunks(&im, 256);	/* 1 MiB of heap */
	a[n++] = area(HEAP, HEAP + 256 * PG, AREA_HEAP, COMP_UNATTRIBUTED);
	for (int i = 0; i < 255; i++)
		put(&im, P(i), P(i + 1));		/* a list through the heap */
	put(&im, DATA_APP, P(0));
	assert_int_equal(infer_owners(a, n, &prm, image_read, &im, &res), 0);
	assert_false(res.budget_hit);
	assert_int_equal(owner_at(&res, P(254)), COMP_APP);
	infer_result_free(&res);

	small.budget = 4 * INFER_BLOCK;
	assert_int_equal(infer_owners(a, n, &small, image_read, &im, &res), 0);
	assert_true(res.budget_hit);
	assert_true(res.bytes_read <= small.budget);
	assert_int_equal(owner_at(&res, P(254)), COMP_UNATTRIBUTED);
	infer_result_free(&res);
	image_free(&im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_heap),
		cmocka_unit_test(test_arena_first),
		cmocka_unit_test(test_mmapped_chunks),
		cmocka_unit_test(test_reachability),
		cmocka_unit_test(test_inner_words_weaker),
		cmocka_unit_test(test_libc_owns_nothing),
		cmocka_unit_test(test_class_owner),
		cmocka_unit_test(test_stack_frames),
		cmocka_unit_test(test_stack_after_data),
		cmocka_unit_test(test_lifted_registers),
		cmocka_unit_test(test_merged_mapping),
		cmocka_unit_test(test_merged_raw_mmaps),
		cmocka_unit_test(test_no_allocations),
		cmocka_unit_test(test_sampled_arrays),
		cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
