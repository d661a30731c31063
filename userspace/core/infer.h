/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who holds the memory a process allocated before the tool attached
 * (issue 31). Nothing recorded who asked for it, so the owner is inferred
 * from who keeps it: an allocation reachable from a library's own data
 * (its .data/.bss) or from a stack frame of its code, by aligned words
 * pointing into it, is that library's, transitively.
 *
 * The unit is the allocation, not the mapping: malloc's chunks inside the
 * brk heap and the other arenas (heapwalk.h), malloc's mmap'd chunks (the
 * kernel merges adjacent anonymous mappings, so one mapping can hold
 * several), and whatever else is anonymous as one block.
 *
 * Rules (docs/attribution.md, "Attaching to a running job"):
 *  - Breadth first from every root at once: the nearest root wins.
 *  - Equal distance: the program first, then other libraries, then MPI
 *    (MPI keeps references to its users' buffers -- requests,
 *    registrations -- that are not ownership).
 *  - libc and the loader own nothing: malloc's arenas, the loader's lists
 *    are bookkeeping; what only they reach stays unattributed.
 *  - A stack word belongs to the frame it lies in; the frame's function is
 *    the code the nearest return address below it points into.
 *  - An object of a library's class keeps what it points to for that
 *    library: a chunk whose first word points into a module's vtables
 *    (its RELRO) passes that module as owner to what it reaches, while
 *    it stays its finder's (a program's `new Library(...)` is the
 *    program's; the members the library's constructor allocated are not).
 *
 * Pure: memory comes through a reader callback (the unit tests give
 * synthetic images; infer_read.c gives /proc/PID/mem).
 */
#ifndef MEMATTR_INFER_H
#define MEMATTR_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "components.h"

/* What an address range is to the inference. */
enum infer_kind {
	AREA_ALLOC,	/* anonymous, owner unknown: malloc'd mmap chunks or raw blocks */
	AREA_HEAP,	/* malloc's brk heap: chunks from its start */
	AREA_ARENA,	/* a heap of another malloc arena (heap_info first) */
	AREA_ROOT,	/* a module's own writable data: its words are roots of owner */
	AREA_STACK,	/* a thread's stack: words are roots of their frame's code */
	AREA_CODE,	/* executable code of owner: what return addresses point into */
	AREA_CLASSES,	/* owner's relocated read-only data (RELRO): its vtables */
};

struct infer_area {
	uint64_t start, end;
	enum infer_kind kind;
	comp_id owner;		/* ROOT, CODE: the module's; STACK: frames not told (app) */
	bool claim;		/* STACK: a thread stack in no known region: give it an owner */
	bool retake;		/* ALLOC: its regions' owner was a guess the inference replaces */
	uint64_t sp;		/* STACK: the thread's stack pointer, 0 when not known */
	uint64_t pc;		/* STACK: where it runs, 0 when not known */
	const uint64_t *regs;	/* STACK: its general registers when it was running */
	unsigned int nregs;
};

/*
 * The process's memory: read len bytes at addr into buf, pages not in
 * memory read as zeros (and not counted). Returns the bytes really read
 * (what the budget counts), or -errno.
 */
typedef int64_t (*infer_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define INFER_MAX_NODES		(1u << 19)	/* allocations told apart per process (12 MiB, + 4 MiB of queues) */
#define INFER_SAMPLE_ABOVE	(64u << 10)	/* larger blocks are sampled before being read whole */
#define INFER_SAMPLES		32		/* places sampled, 8 words each */
#define INFER_BLOCK		(64u << 10)	/* read unit */
#define INFER_CACHE_BLOCKS	32		/* 2 MiB of the process kept at a time */
#define INFER_MAX_RUNS		4096		/* owner runs handed back per process */

struct infer_params {
	comp_id libc;		/* owns nothing (allocator and loader bookkeeping) */
	comp_id mpi;		/* last at equal distance */
	comp_id stack;		/* a program's thread's stack: COMP_STACK */
	uint64_t budget;	/* bytes read at most, 0: no limit */
};

/* A range whose owner was inferred (page-aligned, adjacent same owners merged). */
struct infer_run {
	uint64_t start, end;
	comp_id owner;
};

struct infer_result {
	struct infer_run *runs;	/* sorted, malloc'ed */
	size_t nruns;
	uint64_t bytes_read;	/* counted against the budget */
	uint64_t nodes;		/* allocations told apart */
	uint64_t chunks;	/* of them malloc chunks (headers read) */
	uint64_t reached;	/* allocations an owner was found for */
	uint64_t skipped_sampled;	/* large blocks the sample showed hold no pointers */
	bool budget_hit;	/* the budget ended the reading: the rest is coarse */
	bool nodes_capped;	/* INFER_MAX_NODES reached: the rest is coarse */
};

/*
 * Infer owners for the AREA_ALLOC/HEAP/ARENA areas, and for the stacks
 * marked claim (`stack` for the program's threads, a library's own for
 * the threads it started: the outermost frame outside libc says which).
 * areas need not be sorted; they must not overlap. 0 or -ENOMEM.
 */
int infer_owners(const struct infer_area *areas, size_t nareas, const struct infer_params *prm,
		 infer_read_fn rd, void *ctx, struct infer_result *res);
void infer_result_free(struct infer_result *res);

#endif
