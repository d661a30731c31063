// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decoding the jumps memory interposers patch into libc's entry points,
 * on fabricated bytes: each form a patcher writes, the register and
 * displacement details a wrong decoder gets wrong, and real unpatched
 * prologues that must not be taken for a jump.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hooks.h"

#define AT	0x7f0000101000ULL	/* where the bytes were read: libc's mmap */

/* code, zero-padded to what the tool reads. */
static enum hook_jump decode(const uint8_t *bytes, size_t n, uint64_t *target)
{
	uint8_t code[HOOK_CODE_BYTES] = { 0 };

	memcpy(code, bytes, n);
	*target = 0;
	return hook_decode_jump(code, sizeof(code), AT, target);
}

/* jmp rel32 (UCX's bistro when the hook is near): relative to the next instruction, signed. */
static void test_jmp_rel32(void **state)
{
	static const uint8_t fwd[] = { 0xe9, 0x00, 0x10, 0x00, 0x00 };
	static const uint8_t back[] = { 0xe9, 0x00, 0xf0, 0xff, 0xff };	/* -0x1000 */
	uint64_t t;

	(void)state;
	assert_int_equal(decode(fwd, sizeof(fwd), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, AT + 5 + 0x1000);
	assert_int_equal(decode(back, sizeof(back), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, AT + 5 - 0x1000);
}

/* jmp rel8, backwards: the byte is signed. */
static void test_jmp_rel8(void **state)
{
	static const uint8_t b[] = { 0xeb, 0xf0 };	/* -16 */
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, AT + 2 - 16);
}

/* movabs $hook, %r11; jmp *%r11: Open MPI's patcher, UCX's bistro when far, libfabric. */
static void test_movabs_r11(void **state)
{
	static const uint8_t b[] = { 0x49, 0xbb, 0xc0, 0x1a, 0x08, 0x5f, 0x4a, 0x7f, 0x00, 0x00,
				     0x41, 0xff, 0xe3 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x7f4a5f081ac0ULL);
}

/* The same through %rax: no REX.B on the jump, REX.W alone on the load. */
static void test_movabs_rax(void **state)
{
	static const uint8_t b[] = { 0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x00, 0x00,
				     0xff, 0xe0 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x334455667788ULL);
}

/*
 * A load into one register and a jump through another is not a patch:
 * the register numbers (and REX.B) must agree.
 */
static void test_register_mismatch(void **state)
{
	static const uint8_t r11_rax[] = { 0x49, 0xbb, 1, 2, 3, 4, 5, 6, 0, 0, 0xff, 0xe0 };
	static const uint8_t rax_r8[] = { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 0, 0, 0x41, 0xff, 0xe0 };
	static const uint8_t r11_r10[] = { 0x49, 0xbb, 1, 2, 3, 4, 5, 6, 0, 0, 0x41, 0xff, 0xe2 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(r11_rax, sizeof(r11_rax), &t), HOOK_JUMP_NONE);
	assert_int_equal(decode(rax_r8, sizeof(rax_r8), &t), HOOK_JUMP_NONE);
	assert_int_equal(decode(r11_r10, sizeof(r11_r10), &t), HOOK_JUMP_NONE);
}

/* movabs $hook, %r11; push %r11; ret. */
static void test_push_reg_ret(void **state)
{
	static const uint8_t b[] = { 0x49, 0xbb, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x00, 0x00,
				     0x41, 0x53, 0xc3 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x605040302010ULL);
}

/* mov $imm32, %r32 zero-extends: a hook in the low 4 GiB (a non-PIE program). */
static void test_mov_imm32(void **state)
{
	static const uint8_t eax[] = { 0xb8, 0x00, 0x10, 0x40, 0x80, 0xff, 0xe0 };
	static const uint8_t r11d[] = { 0x41, 0xbb, 0x00, 0x10, 0x40, 0x00, 0x41, 0xff, 0xe3 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(eax, sizeof(eax), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x80401000ULL);	/* not sign-extended */
	assert_int_equal(decode(r11d, sizeof(r11d), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x401000ULL);
}

/* jmp *0(%rip); .quad hook: the slot is among the bytes read, so resolved. */
static void test_rip_slot_inline(void **state)
{
	static const uint8_t b[] = { 0xff, 0x25, 0x00, 0x00, 0x00, 0x00,
				     0xef, 0xbe, 0xad, 0xde, 0x7f, 0x00, 0x00, 0x00 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x7fdeadbeefULL);
}

/* jmp *disp32(%rip) to a slot elsewhere: the slot's address, for the caller to read. */
static void test_rip_slot_far(void **state)
{
	static const uint8_t b[] = { 0xff, 0x25, 0x00, 0x00, 0x10, 0x00 };
	static const uint8_t neg[] = { 0xff, 0x25, 0xf0, 0xff, 0xff, 0xff };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_INDIRECT);
	assert_int_equal(t, AT + 6 + 0x100000);
	assert_int_equal(decode(neg, sizeof(neg), &t), HOOK_JUMP_INDIRECT);
	assert_int_equal(t, AT + 6 - 16);
}

/* push $imm32; ret (sign-extended), and with movl $hi, 4(%rsp) for a 64-bit address. */
static void test_push_ret(void **state)
{
	static const uint8_t lo[] = { 0x68, 0x00, 0x10, 0x40, 0x00, 0xc3 };
	static const uint8_t full[] = { 0x68, 0xc0, 0x1a, 0x08, 0x5f,
					0xc7, 0x44, 0x24, 0x04, 0x4a, 0x7f, 0x00, 0x00, 0xc3 };
	static const uint8_t push_only[] = { 0x68, 0x00, 0x10, 0x40, 0x00, 0x48, 0x89, 0xe5 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(lo, sizeof(lo), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x401000ULL);
	assert_int_equal(decode(full, sizeof(full), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, 0x7f4a5f081ac0ULL);	/* low half not sign-extended into the high */
	/* A push that is not followed by ret is ordinary code. */
	assert_int_equal(decode(push_only, sizeof(push_only), &t), HOOK_JUMP_NONE);
}

/* A patcher that keeps endbr64 writes its jump after it: relative to that address. */
static void test_after_endbr64(void **state)
{
	static const uint8_t b[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x00, 0x10, 0x00, 0x00 };
	uint64_t t;

	(void)state;
	assert_int_equal(decode(b, sizeof(b), &t), HOOK_JUMP_DIRECT);
	assert_int_equal(t, AT + 4 + 5 + 0x1000);
}

/* Unpatched glibc 2.36 prologues (Debian 12's mmap, malloc, brk) are not jumps. */
static void test_unpatched(void **state)
{
	static const uint8_t mmap[] = { 0x41, 0x89, 0xca, 0x41, 0xf7, 0xc1, 0xff, 0x0f, 0x00, 0x00,
					0x75, 0x14, 0xb8, 0x09, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	static const uint8_t malloc_[] = { 0x41, 0x54, 0x55, 0x53, 0x48, 0x89, 0xfb, 0x48 };
	/* An endbr64 before ordinary code: skipped, and still no jump. */
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x54, 0x55, 0x53 };
	static const uint8_t mov_eax[] = { 0xb8, 0x0c, 0x00, 0x00, 0x00, 0x0f, 0x05 };	/* brk */
	uint64_t t;

	(void)state;
	assert_int_equal(decode(mmap, sizeof(mmap), &t), HOOK_JUMP_NONE);
	assert_int_equal(decode(malloc_, sizeof(malloc_), &t), HOOK_JUMP_NONE);
	assert_int_equal(decode(endbr, sizeof(endbr), &t), HOOK_JUMP_NONE);
	/* mov $12, %eax; syscall: a register load that is not followed by a jump. */
	assert_int_equal(decode(mov_eax, sizeof(mov_eax), &t), HOOK_JUMP_NONE);
}

/* Too few bytes for the form: no decode past the end. */
static void test_short_read(void **state)
{
	static const uint8_t b[] = { 0x49, 0xbb, 1, 2, 3, 4, 5, 6, 0, 0, 0x41, 0xff, 0xe3 };
	uint64_t t = 0;

	(void)state;
	assert_int_equal(hook_decode_jump(b, 12, AT, &t), HOOK_JUMP_NONE);
	assert_int_equal(hook_decode_jump(b, 4, AT, &t), HOOK_JUMP_NONE);
	assert_int_equal(hook_decode_jump((const uint8_t *)"\xff\x25\0\0\0\0", 6, AT, &t),
			 HOOK_JUMP_INDIRECT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jmp_rel32),
		cmocka_unit_test(test_jmp_rel8),
		cmocka_unit_test(test_movabs_r11),
		cmocka_unit_test(test_movabs_rax),
		cmocka_unit_test(test_register_mismatch),
		cmocka_unit_test(test_push_reg_ret),
		cmocka_unit_test(test_mov_imm32),
		cmocka_unit_test(test_rip_slot_inline),
		cmocka_unit_test(test_rip_slot_far),
		cmocka_unit_test(test_push_ret),
		cmocka_unit_test(test_after_endbr64),
		cmocka_unit_test(test_unpatched),
		cmocka_unit_test(test_short_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
