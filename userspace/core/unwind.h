/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who asked for a piece of memory, exactly: walk the copy of the user stack
 * a memory syscall left in its event frame by frame, with the call-frame
 * information (.eh_frame, .debug_frame) of the code each frame is in, from
 * the registers at the syscall. The first frame that is not a forwarder
 * (libc, the loader, operator new, a memory interposer: the specs say
 * which) is the requester. Unlike a scan for words that look like return
 * addresses, no stale word left in a frame can be taken for a caller.
 *
 * Where a frame is in no known code, has no usable CFI, or the walk makes
 * no progress, the word scan (callscan.h) takes over from that frame's
 * stack pointer on, and the result says so: a documented fallback, counted.
 * When the next frame lies beyond the copy the walk stops without a guess.
 *
 * Pure: the caller supplies the CFI rows and what the code at an address
 * is, so the unit tests walk fabricated stacks.
 */
#ifndef MEMATTR_UNWIND_H
#define MEMATTR_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc_stack.h"
#include "callscan.h"
#include "cfi.h"
#include "components.h"

#define UNWIND_MAX_FRAMES	128

struct unwind_regs {
	uint64_t r[CFI_NREGS];	/* by DWARF number; r[CFI_RA] is the pc */
	uint32_t valid;		/* bit per register whose value is known */
};

/* What the code at a pc is. */
struct unwind_frame {
	comp_id owner;
	bool forwards;		/* only passes requests on: never the requester */
	bool discards;		/* a forwarder whose inner frames are its own work: an
				 * interposer's hook, a `forward library` (implies forwards) */
};

/*
 * What a walk's result depended on, for a cache of walks (requester.c):
 * the values the walk used (a register as it was at the call, or a word
 * of the stack copy, by its offset from the stack pointer) as a CFA's
 * base or as a pc. A value only restored and then never used (a
 * callee-saved register holding the caller's loop counter) is not among
 * them. With the same call-time registers of the key (pc, stack
 * pointer, which are valid, the copy's length), the same frame and CFI
 * answers, and these values the same, the walk takes the same steps to
 * the same result.
 */
#define UNWIND_DEPS_MAX		48

struct unwind_dep {
	int16_t reg;		/* a register at the call (DWARF number), -1: a stack word */
	uint32_t off;		/* the stack word's offset from the stack pointer */
	uint64_t val;
};

struct unwind_trace {
	struct unwind_dep dep[UNWIND_DEPS_MAX];
	unsigned int n;
	uint32_t regs_noted;	/* registers among dep already */
	bool partial;		/* it used more than dep can say (the word scan reads the
				 * whole copy; more than UNWIND_DEPS_MAX values): not reusable */
};

struct unwind_ops {
	/*
	 * The CFI row for pc (a caller's pc is its return address - 1, so a
	 * call at the very end of a function stays in it). 0, or -ENOENT when
	 * no CFI covers pc, another -errno when it cannot be used.
	 */
	int (*cfi)(void *ctx, uint64_t pc, struct cfi_row *row);
	/* What the code holding pc is; false when pc is not in known code. */
	bool (*frame)(void *ctx, uint64_t pc, struct unwind_frame *f);
	void *ctx;
	/*
	 * Some code of the process discards its inner frames: the requester
	 * is known only once the walk has seen every frame it can, so it
	 * does not stop at the first candidate.
	 */
	bool discarders;
	/*
	 * Frames of the allocation stack wanted, from the requester outward
	 * (at most ALLOC_STACK_DEPTH): the walk goes on past the requester
	 * until it has them or can go no further. 0 or 1: the requester only,
	 * the walk stops there.
	 */
	unsigned int stack_depth;
	/* When not NULL, what the walk depended on (emptied first). */
	struct unwind_trace *trace;
};

/* Why the walk handed over to the scan. */
enum unwind_stop {
	UNWIND_STOP_NONE = 0,
	UNWIND_STOP_NOT_CODE,	/* a pc in no known code */
	UNWIND_STOP_NO_CFI,	/* code without a usable CFI row */
	UNWIND_STOP_STEP,	/* the row was unusable, or the walk made no progress */
	UNWIND_STOP_COPY_END,	/* the next frame lies beyond the copy: no fallback */
};

struct unwind_result {
	uint64_t caller;	/* the requester's pc (a return address), 0: not found */
	comp_id owner;		/* its code's owner */
	uint64_t entry;		/* owner is entry_of: pc in the outermost frame of it before
				 * the stack leaves it (the MPI function called), 0: unknown */
	unsigned int frames;	/* frames walked, whichever way */
	bool fallback;		/* the word scan finished the walk */
	bool forwarders_only;	/* not found, and only forwarders were seen */
	uint8_t stop;		/* enum unwind_stop */
	uint64_t stop_pc;	/* the last pc the walk reached */
	uint64_t stack[ALLOC_STACK_DEPTH];	/* found: the requester's pc, then its callers' */
	unsigned int nstack;
};

/*
 * The classification rule, over frames innermost first: the requester is
 * the first frame that does not forward, outward of the outermost frame
 * that discards (everything inner to a hook is the hook's own work), or
 * from the innermost frame when none discards. Its index, -1 when none.
 */
int unwind_pick(const struct unwind_frame *fr, unsigned int n);

/*
 * Find the requester of a memory syscall: regs at the call, len bytes of
 * stack copied from regs->r[CFI_RSP] up. entry_of: the component whose
 * outermost frame is wanted too (mpi), or a value no frame has. scan: the
 * word scan's code lookups for the fallback; its code_owner must answer
 * forward_id for forwarding code. Returns true when the requester was found.
 */
bool unwind_find_requester(const struct unwind_regs *regs, const uint8_t *stack, size_t len,
			   comp_id entry_of, comp_id forward_id, const struct unwind_ops *ops,
			   const struct callscan_ops *scan, struct unwind_result *res);

#endif
