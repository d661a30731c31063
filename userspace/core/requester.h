/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who asked for a piece of memory: given the registers and the stack a
 * memory syscall left in its event, the first frame outside the forwarding
 * layer (libc, the loader, the specs' forward rules), found by unwinding
 * with the mapped files' CFI (unwind.h over sys/cfi.h). The process's
 * executable file mappings are read from /proc/PID/maps when the walk meets
 * code it does not know (a library dlopen'ed since), so a new library's
 * frames are unwound and owned by it from its first request. The word scan
 * (callscan), code bytes read from /proc/PID/mem, is the fallback.
 *
 * Interposers that patch libc's memory calls (hooks.h) are found by
 * reading libc's entry points in the process (/proc/PID/mem) when its code
 * may have changed: a frame in the function a patched entry jumps to
 * forwards, and what is inner to it is the hook's own work.
 */
#ifndef MEMATTR_REQUESTER_H
#define MEMATTR_REQUESTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc_stack.h"
#include "callscan.h"
#include "cfi.h"
#include "classify.h"
#include "memattr.h"
#include "procfs.h"
#include "regions.h"
#include "unwind.h"

#define CODE_CACHE_SLOTS	64	/* per process: call sites repeat, keep it small */

struct code_cache_slot {
	uint64_t addr;			/* return address, 0: empty */
	uint8_t bytes[CALLSCAN_CODE_BYTES];
};

#define FRAME_CACHE_SLOTS	256	/* per process: pc -> what the code there is */
#define ENTRY_FN_SLOTS		16	/* per process: a few MPI calls allocate */

/* An executable file mapping of the process, as the unwinder knows it. */
struct code_module {
	uint64_t start, end, pgoff;
	char *path;			/* as maps shows it, NULL when deleted */
	struct cfi_file *file;		/* once loaded: NULL when not readable as ELF */
	bool loaded;
	comp_id owner;
	bool forwards;			/* the whole library forwards (libc, forward library) */
	bool discards;			/* forward library: its inner frames are its own work */
};

#define HOOK_MAX	32	/* per process: a patcher hooks a handful of libc's calls */

/*
 * A hook an interposer patched into libc: the code a libc entry point now
 * jumps to, and the bounds of the function (FDE) holding it. start == end:
 * no CFI there (code no file backs), its frames cannot be recognised.
 */
struct hook_entry {
	uint64_t entry, start, end;
};

struct frame_cache_slot {
	uint64_t pc;			/* 0: empty */
	comp_id owner;
	bool forwards, discards, code;
};

/*
 * The MPI function a return address into the MPI library is in, as the
 * classifier's mpi_fn_at found it (a symbol lookup behind a stat of the
 * file): kept per address, since the same few calls request memory over
 * and over.
 */
/*
 * Walks kept per process, by the values each depended on (unwind.h,
 * struct unwind_trace): a loop that allocates the same way every time
 * makes the same syscall from the same stack, and only the values a walk
 * used need to match, not the whole copy. Found by a scan of every slot:
 * several call sites may reach mmap with the same pc and stack pointer.
 */
#define WALK_MEMO_SLOTS		16

struct walk_memo {
	uint64_t ip, sp;		/* ip 0: empty */
	uint32_t valid;			/* the registers valid at the call */
	uint32_t gen;			/* code_reader.gen it was walked under */
	size_t len;			/* the stack copy's length */
	bool discarders;
	bool found;
	struct unwind_trace deps;
	struct unwind_result res;
};

struct entry_fn_slot {
	uint64_t entry;			/* 0: empty */
	uint16_t fn;
};

/* Reads code of one process; the file follows the address space (reset at exec). */
struct code_reader {
	pid_t pid;
	int fd;				/* /proc/PID/mem, -1 until first needed */
	struct code_cache_slot slot[CODE_CACHE_SLOTS];
	struct code_module *mods;	/* sorted by start */
	size_t nmods;
	bool mods_read;			/* /proc/PID/maps was read since the last reset */
	int maps_fd;			/* /proc/PID/maps for single queries, -1 until first needed */
	bool no_query;			/* the kernel answers none (before 6.11): maps are read whole */
	struct frame_cache_slot frame[FRAME_CACHE_SLOTS];
	struct walk_memo *memo;		/* WALK_MEMO_SLOTS, allocated at the first walk */
	unsigned int memo_next;		/* the slot the next walk kept replaces */
	uint32_t gen;			/* what the code is changed: walks kept before do not count */
	struct entry_fn_slot entry_fn[ENTRY_FN_SLOTS];
	struct hook_entry hooks[HOOK_MAX];
	unsigned int nhooks;
	bool hooks_stale;		/* libc's entry points are to be read again */
	bool hooks_inner_checked;	/* read again for a syscall made outside libc since the last change */
	bool discarding_libs;		/* a `forward library` is mapped */
	/*
	 * Its maps read showed no code (a zombie) or no process: its later
	 * records, handled after it ended, have no stack to walk.
	 */
	bool gone;
	/*
	 * Figures, kept across close: requests walked, of them finished by the
	 * scan, time; the most hook entries found at once.
	 */
	uint64_t walks, fallbacks, walk_ns, maps_reads, hooks_found;
	uint64_t walks_reused;		/* of the walks, those a kept walk answered */
};

void code_reader_init(struct code_reader *cr, pid_t pid);
void code_reader_close(struct code_reader *cr);	/* also forgets the caches, keeps the figures */
/* Code was mapped over [start, end): what the list had there is forgotten. */
void code_reader_code_mapped(struct code_reader *cr, uint64_t start, uint64_t end);
/*
 * Code was made executable again (mprotect): a patcher writes its jump
 * between two mprotects, so libc's entry points are read again.
 */
void code_reader_code_changed(struct code_reader *cr);

/*
 * A mapping of a file in the process, asked of the kernel alone
 * (procfs_query_file); -EOPNOTSUPP from then on where it cannot answer.
 */
int code_reader_query(struct code_reader *cr, uint64_t addr, enum vma_query how,
		      struct vma_info *v);

/* The cache slot for return address entry (its fn is valid only if its entry is entry). */
static inline struct entry_fn_slot *code_reader_entry_fn(struct code_reader *cr, uint64_t entry)
{
	return &cr->entry_fn[(entry ^ (entry >> 8)) % ENTRY_FN_SLOTS];
}

struct requester {
	uint64_t caller;	/* return address into the requesting code, 0: not found */
	comp_id owner;		/* owner of the code at caller */
	bool owner_final;	/* its mapping was classified by /proc (not only seen mmapped) */
	bool libc_only;		/* not found, but the stack showed libc/loader frames: libc acting for itself */
	uint64_t entry;		/* owner is `mpi` (entry_of): return address inside the MPI
				 * function the program called, 0 when not on the copy */
	/*
	 * The file holding entry and entry's offset in it, from the same
	 * module list the walk used (read from maps as soon as the walk met
	 * the library): NULL when not known. Valid until the next walk.
	 */
	const char *entry_path;
	uint64_t entry_off;
	bool fallback;		/* the CFI walk could not finish: the word scan did */
	bool gone;		/* not found because the process had ended: not an unwinding failure */
	/* The allocation stack: caller, then its callers (return addresses), when found. */
	uint64_t stack[ALLOC_STACK_DEPTH];
	unsigned int nstack;
};

/*
 * Find who asked for the memory of syscall event e: cls->libc and the
 * specs' forward rules forward, cls->mpi is the component whose entry is
 * wanted. Returns false when no frame outside the forwarders was found in
 * the stack copy; then rq->libc_only tells whether forwarding frames were
 * (the loader at startup) or nothing was (an unwinding failure).
 */
bool requester_find(struct code_reader *cr, struct region_table *regions,
		    const struct classifier *cls, const struct ev_syscall *e,
		    struct requester *rq);

#endif
