/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who asked for a piece of memory: given the stack a memory syscall left in
 * its event, the first caller outside the forwarding layer (libc, the
 * loader), found with callscan over the process's region table, the code
 * bytes read from /proc/PID/mem.
 */
#ifndef MEMATTR_REQUESTER_H
#define MEMATTR_REQUESTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "callscan.h"
#include "memattr.h"
#include "regions.h"

#define CODE_CACHE_SLOTS	64	/* per process: call sites repeat, keep it small */

struct code_cache_slot {
	uint64_t addr;			/* return address, 0: empty */
	uint8_t bytes[CALLSCAN_CODE_BYTES];
};

/* Reads code of one process; the file follows the address space (reset at exec). */
struct code_reader {
	pid_t pid;
	int fd;				/* /proc/PID/mem, -1 until first needed */
	struct code_cache_slot slot[CODE_CACHE_SLOTS];
};

void code_reader_init(struct code_reader *cr, pid_t pid);
void code_reader_close(struct code_reader *cr);	/* also forgets the cache */

struct requester {
	uint64_t caller;	/* return address into the requesting code, 0: not found */
	comp_id owner;		/* owner of the code at caller */
	bool owner_final;	/* its mapping was classified by /proc (not only seen mmapped) */
	bool libc_only;		/* not found, but the stack showed libc/loader frames: libc acting for itself */
	uint64_t entry;		/* owner is `mpi` (entry_of): return address inside the MPI
				 * function the program called, 0 when not on the copy */
};

/*
 * Find who asked for the memory of syscall event e. Returns false when no
 * return address outside the forwarder was found in the stack copy; then
 * rq->libc_only tells whether libc frames were (the loader at startup) or
 * nothing was (an unwinding failure).
 */
bool requester_find(struct code_reader *cr, struct region_table *regions,
		    comp_id forwarder, comp_id entry_of, const struct ev_syscall *e,
		    struct requester *rq);

#endif
