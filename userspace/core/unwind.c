// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "unwind.h"

#define BIT(r)	(1u << (r))

/* Registers a caller gets back from its callee: the callee-saved ones and the pc. */
static const uint8_t restored[] = { CFI_RBX, CFI_RBP, CFI_R12, CFI_R13, CFI_R14, CFI_R15, CFI_RA };

/* An 8-byte word of the stack copy at addr; the walk never reads the live process. */
static int read_word(const uint8_t *stack, size_t len, uint64_t base, uint64_t addr,
		     uint64_t *v)
{
	uint64_t off = addr - base;

	/* Below the stack pointer: a corrupt row, not a short copy. */
	if (addr < base)
		return -EINVAL;
	if (off > len || len - off < sizeof(*v))
		return -ERANGE;
	memcpy(v, stack + off, sizeof(*v));
	return 0;
}

/*
 * Where a register's value came from, for the trace: a register at the
 * call, a word of the copy, or neither (computed from values already
 * noted, as the CFA is).
 */
enum { FROM_NONE, FROM_REG, FROM_STACK };

struct origin {
	uint8_t kind;
	uint8_t reg;
	uint32_t off;
};

/* The walk used value v, which came from o: note what it depends on. */
static void used(struct unwind_trace *tr, const struct origin *o, uint64_t v)
{
	struct unwind_dep *d;

	if (!tr || o->kind == FROM_NONE)
		return;
	if (o->kind == FROM_REG && (tr->regs_noted & BIT(o->reg)))
		return;
	if (tr->n == UNWIND_DEPS_MAX) {
		tr->partial = true;
		return;
	}
	d = &tr->dep[tr->n++];
	d->reg = o->kind == FROM_REG ? o->reg : -1;
	d->off = o->kind == FROM_STACK ? o->off : 0;
	d->val = v;
	if (o->kind == FROM_REG)
		tr->regs_noted |= BIT(o->reg);
}

/* The caller's registers from the callee's, with the callee's CFI row (origins: oin, oout). */
static int step(const struct cfi_row *row, const struct unwind_regs *in,
		struct unwind_regs *out, const uint8_t *stack, size_t len, uint64_t base,
		const struct origin *oin, struct origin *oout, struct unwind_trace *tr)
{
	uint64_t cfa;
	int ret;

	if (row->cfa_reg >= CFI_NREGS || !(in->valid & BIT(row->cfa_reg)))
		return -EINVAL;
	cfa = in->r[row->cfa_reg] + (uint64_t)row->cfa_off;
	used(tr, &oin[row->cfa_reg], in->r[row->cfa_reg]);
	memset(out, 0, sizeof(*out));
	memset(oout, 0, CFI_NREGS * sizeof(*oout));
	for (size_t i = 0; i < sizeof(restored); i++) {
		const struct cfi_rule *rule = &row->rule[restored[i]];
		uint8_t reg = restored[i];

		switch (rule->kind) {
		case CFI_SAME:
			/*
			 * A return address "unchanged" would loop: glibc's clone3
			 * child marks the outermost frame of a thread this way.
			 */
			if (reg == CFI_RA)
				break;
			out->r[reg] = in->r[reg];
			out->valid |= in->valid & BIT(reg);
			oout[reg] = oin[reg];
			break;
		case CFI_UNDEF:
			break;
		case CFI_OFFSET:
			ret = read_word(stack, len, base, cfa + (uint64_t)rule->off, &out->r[reg]);
			if (ret)
				return ret;
			out->valid |= BIT(reg);
			oout[reg] = (struct origin){ FROM_STACK, 0,
						     (uint32_t)(cfa + (uint64_t)rule->off - base) };
			break;
		case CFI_VAL_OFFSET:
			out->r[reg] = cfa + (uint64_t)rule->off;
			out->valid |= BIT(reg);
			break;
		case CFI_REGISTER:
			if (rule->reg >= CFI_NREGS)
				return -EINVAL;
			out->r[reg] = in->r[rule->reg];
			out->valid |= in->valid & BIT(rule->reg);
			oout[reg] = oin[rule->reg];
			break;
		default:
			return -EINVAL;
		}
	}
	/* By definition the caller's stack pointer is the CFA. */
	out->r[CFI_RSP] = cfa;
	out->valid |= BIT(CFI_RSP);
	return 0;
}

/*
 * The word scan from stack pointer sp on, where the walk could not go on.
 * found: the requester was already found by the walk (only the entry is
 * still looked for).
 */
static bool scan_rest(const uint8_t *stack, size_t len, uint64_t base, uint64_t sp,
		      bool found, comp_id entry_of, comp_id forward_id,
		      const struct callscan_ops *scan, struct unwind_result *res)
{
	struct callscan_result cr;
	size_t off = sp >= base && sp - base <= len ? (size_t)(sp - base) : len;
	uint64_t entry;

	res->fallback = true;
	if (found) {
		/* 0 also when the copy ends inside MPI: the walk's outermost frame stays. */
		entry = callscan_outermost(stack, len, off, entry_of, forward_id, scan);
		if (entry)
			res->entry = entry;
		return true;
	}
	if (!callscan_find_caller(stack + off, len - off, forward_id, scan, &cr)) {
		res->frames += cr.frames;
		res->forwarders_only = res->frames > 0;
		return false;
	}
	res->frames += cr.frames;
	res->caller = cr.caller;
	res->owner = cr.owner;
	if (cr.owner == entry_of)
		res->entry = callscan_outermost(stack, len, off + cr.offset, entry_of, forward_id,
						scan);
	return true;
}

int unwind_pick(const struct unwind_frame *fr, unsigned int n)
{
	unsigned int from = 0;

	for (unsigned int i = n; i-- > 0;) {
		if (fr[i].discards) {
			from = i + 1;
			break;
		}
	}
	for (unsigned int i = from; i < n; i++)
		if (!fr[i].forwards)
			return (int)i;
	return -1;
}

/*
 * The requester is frame pick: fill in it and the entry, the outermost
 * frame of entry_of before the stack leaves it (forwarders in between are
 * skipped). True when that run reaches the last frame seen, so frames
 * further out could extend it.
 */
static bool settle(const struct unwind_frame *fr, const uint64_t *pcs, unsigned int n,
		   unsigned int pick, comp_id entry_of, struct unwind_result *res)
{
	res->caller = pcs[pick];
	res->owner = fr[pick].owner;
	if (fr[pick].owner != entry_of)
		return false;
	res->entry = pcs[pick];
	for (unsigned int i = pick + 1; i < n; i++) {
		if (fr[i].forwards)
			continue;
		if (fr[i].owner != entry_of)
			return false;
		res->entry = pcs[i];
	}
	return true;
}

/* The allocation stack: the requester's frame pick and up to depth - 1 callers. */
static bool keep_stack(const uint64_t *pcs, unsigned int n, int pick, unsigned int depth,
		       struct unwind_result *res)
{
	if (depth < 1)
		depth = 1;
	if (depth > ALLOC_STACK_DEPTH)
		depth = ALLOC_STACK_DEPTH;
	res->nstack = 0;
	for (unsigned int i = (unsigned int)pick; i < n && res->nstack < depth; i++)
		res->stack[res->nstack++] = pcs[i];
	return true;
}

/* The walk saw every frame there is to see (the outermost one, or the copy's end). */
static bool walk_complete(const struct unwind_frame *fr, const uint64_t *pcs, unsigned int n,
			  int pick, comp_id entry_of, const struct unwind_ops *ops,
			  struct unwind_result *res)
{
	if (ops->discarders) {
		pick = unwind_pick(fr, n);
		if (pick >= 0)
			settle(fr, pcs, n, (unsigned int)pick, entry_of, res);
	}
	res->forwarders_only = pick < 0;
	return pick >= 0 && keep_stack(pcs, n, pick, ops->stack_depth, res);
}

static bool walk(const struct unwind_regs *regs, const uint8_t *stack, size_t len,
		 comp_id entry_of, comp_id forward_id, const struct unwind_ops *ops,
		 const struct callscan_ops *scan, struct unwind_result *res)
{
	struct unwind_frame fr[UNWIND_MAX_FRAMES];
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind_regs cur = *regs, next;
	struct origin ocur[CFI_NREGS] = { 0 }, onext[CFI_NREGS];
	struct unwind_trace *tr = ops->trace;
	uint64_t base = regs->r[CFI_RSP];
	/* The innermost pc is where the syscall returns to, inside its function: no -1. */
	uint64_t pc = cur.r[CFI_RA], lookup = pc;
	unsigned int n = 0;
	int pick = -1;
	/* Requester and entry are final; the walk goes on only for the stack. */
	bool done = false;
	unsigned int want = ops->stack_depth > 1 ? ops->stack_depth : 1;
	bool open;
	int ret;

	memset(res, 0, sizeof(*res));
	if (tr)
		memset(tr, 0, sizeof(*tr));
	if (!(regs->valid & BIT(CFI_RSP)) || !(regs->valid & BIT(CFI_RA))) {
		if (tr)
			tr->partial = true;	/* the word scan reads the whole copy */
		return scan_rest(stack, len, base, base, false, entry_of, forward_id, scan, res);
	}
	for (uint8_t r = 0; r < CFI_NREGS; r++)
		if (regs->valid & BIT(r))
			ocur[r] = (struct origin){ FROM_REG, r, 0 };
	used(tr, &ocur[CFI_RSP], regs->r[CFI_RSP]);
	used(tr, &ocur[CFI_RA], regs->r[CFI_RA]);
	while (n < UNWIND_MAX_FRAMES) {
		struct unwind_frame f;
		struct cfi_row row;

		res->stop_pc = pc;
		if (!ops->frame(ops->ctx, lookup, &f)) {
			res->stop = UNWIND_STOP_NOT_CODE;
			break;
		}
		f.forwards |= f.discards;
		fr[n] = f;
		pcs[n++] = pc;
		res->frames++;
		/*
		 * Nothing discards: the first candidate stands, and the walk goes
		 * on past it only to find the entry.
		 */
		if (!done && !ops->discarders && !f.forwards) {
			if (pick >= 0 && f.owner != entry_of) {
				done = true;
			} else {
				if (pick < 0) {
					pick = (int)n - 1;
					res->caller = pc;
					res->owner = f.owner;
					done = f.owner != entry_of;
				}
				if (!done)
					res->entry = pc;
			}
		}
		if (done && n - (unsigned int)pick >= want)
			return keep_stack(pcs, n, pick, want, res);
		if (ops->cfi(ops->ctx, lookup, &row)) {
			res->stop = UNWIND_STOP_NO_CFI;
			break;
		}
		ret = step(&row, &cur, &next, stack, len, base, ocur, onext, tr);
		if (ret == -ERANGE) {
			/*
			 * The caller's frame lies beyond the copy (a deep stack: the
			 * loader inside dlopen). Anything a scan found in the rest of
			 * the copy would be a stale word: not found, exactly.
			 */
			res->stop = UNWIND_STOP_COPY_END;
			if (done)
				return keep_stack(pcs, n, pick, want, res);
			return walk_complete(fr, pcs, n, pick, entry_of, ops, res);
		}
		if (ret) {
			res->stop = UNWIND_STOP_STEP;
			break;
		}
		if (next.valid & BIT(CFI_RA))
			used(tr, &onext[CFI_RA], next.r[CFI_RA]);
		/* No return address: the outermost frame (_start, a thread's start). */
		if (!(next.valid & BIT(CFI_RA)) || !next.r[CFI_RA]) {
			if (done)
				return keep_stack(pcs, n, pick, want, res);
			return walk_complete(fr, pcs, n, pick, entry_of, ops, res);
		}
		/* A stack only grows down: a caller's frame lies above. */
		if (next.r[CFI_RSP] <= cur.r[CFI_RSP]) {
			res->stop = UNWIND_STOP_STEP;
			break;
		}
		cur = next;
		memcpy(ocur, onext, sizeof(ocur));
		pc = cur.r[CFI_RA];
		lookup = pc - 1;
	}
	/* Past a final requester, a walk that ends early only shortens the stack. */
	if (done)
		return keep_stack(pcs, n, pick, want, res);
	/*
	 * The walk could not go on. A requester it found stands (a hook
	 * beyond this point cannot be seen); the scan looks for the rest: the
	 * entry, or the requester when none was found.
	 */
	if (ops->discarders) {
		pick = unwind_pick(fr, n);
		open = pick >= 0 && settle(fr, pcs, n, (unsigned int)pick, entry_of, res);
	} else {
		open = pick >= 0;
	}
	if (pick >= 0 && !open)
		return keep_stack(pcs, n, pick, want, res);
	if (tr)
		tr->partial = true;	/* the word scan reads the rest of the copy */
	return scan_rest(stack, len, base, cur.r[CFI_RSP], pick >= 0, entry_of, forward_id, scan,
			 res);
}

bool unwind_find_requester(const struct unwind_regs *regs, const uint8_t *stack, size_t len,
			   comp_id entry_of, comp_id forward_id, const struct unwind_ops *ops,
			   const struct callscan_ops *scan, struct unwind_result *res)
{
	bool found = walk(regs, stack, len, entry_of, forward_id, ops, scan, res);

	/* Found by the word scan: the requester is all the stack it can vouch for. */
	if (found && !res->nstack && res->caller) {
		res->stack[0] = res->caller;
		res->nstack = 1;
	}
	return found;
}
