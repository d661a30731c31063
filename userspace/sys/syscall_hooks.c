// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "syscall_hooks.h"

#define ENOTSUPP_	524	/* the kernel's own ENOTSUPP, which user space headers lack */

const char *const memory_syscalls[MEMORY_SYSCALLS] = {
	"mmap", "mprotect", "munmap", "brk", "mremap", "madvise",
	"mlock", "mlockall", "mlock2", "shmat", "shmdt",
};

/* The decision, and why fentry is not used. */
static struct {
	bool probed, fentry;
	char why[160];
} hooks;

/* A program that returns 0 at once, as an fentry or fexit of BTF function btf_id. */
static int load_probe_prog(enum bpf_attach_type type, __u32 btf_id)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type, .attach_btf_id = btf_id);

	return bpf_prog_load(BPF_PROG_TYPE_TRACING, "ma_fentry_probe", "GPL", insns, 2, &opts);
}

/*
 * Whether fentry and fexit load and attach here, tried on one memory call
 * (mlockall: rare; the other calls' functions are the same kind of
 * function) after each call's function is found in the kernel's BTF. Loads
 * are refused where tracing programs are (EPERM on the machines this is
 * built on); arm64 before Linux 6.4 may load them but not attach them to
 * a kernel function. The programs are detached and unloaded at once.
 */
static bool probe_fentry(char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int fds[4] = { -1, -1, -1, -1 };
	__s32 probe_id = -1;
	bool ok = false;
	char fn[48];

	if (!btf) {
		snprintf(why, len, "no kernel BTF");
		return false;
	}
	for (int i = 0; i < MEMORY_SYSCALLS; i++) {
		__s32 id;

		snprintf(fn, sizeof(fn), SYSCALL_FN_PREFIX "%s", memory_syscalls[i]);
		id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
		if (id < 0) {
			snprintf(why, len, "no %s in the kernel's BTF", fn);
			goto out;
		}
		if (!strcmp(memory_syscalls[i], "mlockall"))
			probe_id = id;
	}
	for (int i = 0; i < 2; i++) {
		enum bpf_attach_type type = i ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY;

		fds[i] = load_probe_prog(type, (__u32)probe_id);
		if (fds[i] < 0) {
			snprintf(why, len, "%s refused: %s", i ? "fexit" : "fentry", strerror(errno));
			goto out;
		}
		fds[2 + i] = bpf_raw_tracepoint_open(NULL, fds[i]);
		if (fds[2 + i] < 0) {
			snprintf(why, len, "%s cannot attach: %s", i ? "fexit" : "fentry",
				 errno == ENOTSUPP_ ? "not supported" : strerror(errno));
			goto out;
		}
	}
	ok = true;
out:
	for (int i = 3; i >= 0; i--)
		if (fds[i] >= 0)
			close(fds[i]);
	btf__free(btf);
	return ok;
}

/*
 * Test only: the links of MEMATTR_TEST_FENTRY_UNATTACHABLE, each an empty
 * fentry program on the last memory call's function.
 */
#define TEST_FILL_MAX	64	/* above the kernel's links per function (38 on x86-64) */
static int test_fill[2 * TEST_FILL_MAX];
static int test_nfill;

void syscall_hooks_test_block(bool on)
{
	const char *call = memory_syscalls[MEMORY_SYSCALLS - 1];
	struct btf *btf;
	char fn[48];
	__s32 id;

	if (!on) {
		for (int i = test_nfill - 1; i >= 0; i--)
			close(test_fill[i]);
		test_nfill = 0;
		return;
	}
	if (!getenv("MEMATTR_TEST_FENTRY_UNATTACHABLE"))
		return;
	btf = btf__load_vmlinux_btf();
	snprintf(fn, sizeof(fn), SYSCALL_FN_PREFIX "%s", call);
	id = btf ? btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC) : -1;
	btf__free(btf);
	/* One program per link: the kernel refuses a program twice on one function. */
	while (id >= 0 && test_nfill < 2 * TEST_FILL_MAX) {
		int prog = load_probe_prog(BPF_TRACE_FENTRY, (__u32)id), link;

		if (prog < 0)
			break;
		link = bpf_raw_tracepoint_open(NULL, prog);
		test_fill[test_nfill++] = prog;
		if (link < 0)
			break;
		test_fill[test_nfill++] = link;
	}
	fprintf(stderr, "memattr-bpf: MEMATTR_TEST_FENTRY_UNATTACHABLE: %d links of its own on %s (test only)\n",
		test_nfill / 2, fn);
}

/*
 * MEMATTR_SYSCALL_HOOKS=tracepoints keeps the tracepoints where fentry
 * would do (a site's way out, and the cost comparison's); unset or "auto":
 * probed. NULL when it says neither.
 */
static const char *hooks_setting(void)
{
	const char *v = getenv("MEMATTR_SYSCALL_HOOKS");

	if (!v || !*v)
		return "auto";
	return !strcmp(v, "auto") || !strcmp(v, "tracepoints") ? v : NULL;
}

int syscall_hooks_check(char *err, size_t errlen)
{
	if (hooks_setting())
		return 0;
	snprintf(err, errlen, "MEMATTR_SYSCALL_HOOKS=%.60s: not auto or tracepoints",
		 getenv("MEMATTR_SYSCALL_HOOKS"));
	return -1;
}

bool syscall_hooks_fentry(void)
{
	const char *set = hooks_setting();

	if (hooks.probed)
		return hooks.fentry;
	if (set && !strcmp(set, "tracepoints"))
		snprintf(hooks.why, sizeof(hooks.why), "MEMATTR_SYSCALL_HOOKS=tracepoints");
	else
		hooks.fentry = probe_fentry(hooks.why, sizeof(hooks.why));
	hooks.probed = true;
	return hooks.fentry;
}

void syscall_hooks_fall_back(const char *why)
{
	hooks.probed = true;
	hooks.fentry = false;
	snprintf(hooks.why, sizeof(hooks.why), "%s", why);
}

const char *tracer_syscall_hooks(void)
{
	static char desc[200];

	if (syscall_hooks_fentry())
		return "fentry/fexit on " SYSCALL_FN_PREFIX "*";
	snprintf(desc, sizeof(desc), "syscall tracepoints (%s)", hooks.why);
	return desc;
}
