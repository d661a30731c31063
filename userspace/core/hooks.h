/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory interposers that patch code: Open MPI's memory patcher, UCX's
 * "bistro" mode, libfabric's memory monitor and PSM2 overwrite the first
 * bytes of libc's mmap, munmap, brk, ... with a jump into their own hook.
 * The hook is often a static function of a stripped library, so no spec
 * line can name it; the jump itself does. This decodes the jump forms
 * patchers write on x86-64, from the bytes read at a libc entry point.
 *
 * Pure: the caller reads the bytes (/proc/PID/mem) and decides what a
 * target outside libc is.
 */
#ifndef MEMATTR_HOOKS_H
#define MEMATTR_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#define HOOK_CODE_BYTES	32	/* read at an entry point: the longest form fits */

enum hook_jump {
	HOOK_JUMP_NONE = 0,	/* no jump a patcher writes: the function's own code */
	HOOK_JUMP_DIRECT,	/* *target is where the code jumps */
	HOOK_JUMP_INDIRECT,	/* *target is the address of the 8-byte slot holding it */
};

/*
 * The jump at the start of code (len bytes read at address addr), if it is
 * one of the forms patchers write: jmp rel32 / rel8; movabs or mov of an
 * immediate into a register, then jmp *reg or push reg; ret (any register,
 * with or without REX); jmp *disp32(%rip) (resolved here when the slot is
 * among the bytes, as in `jmp *0(%rip); .quad target`); push imm32; ret,
 * optionally with mov imm32, 4(%rsp) for the high half. An endbr64 before
 * the jump is skipped.
 */
enum hook_jump hook_decode_jump(const uint8_t *code, size_t len, uint64_t addr,
				uint64_t *target);

#endif
