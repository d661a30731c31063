/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Call-frame information of ELF files (libdw: .eh_frame, else .debug_frame)
 * and their function symbols, read once per file (by device and inode) and
 * kept for the tool's life: the ranks of a job map the same libraries.
 * A CFI row comes out as struct cfi_row, the unwinder's own plain form
 * (core/unwind.h), so the frame walk does not depend on libdw.
 */
#ifndef MEMATTR_CFI_H
#define MEMATTR_CFI_H

#include <stdbool.h>
#include <stdint.h>

/* x86-64 DWARF register numbers. */
#define CFI_RBX		3
#define CFI_RBP		6
#define CFI_RSP		7
#define CFI_R12		12
#define CFI_R13		13
#define CFI_R14		14
#define CFI_R15		15
#define CFI_RA		16	/* the return address column */
#define CFI_NREGS	17

enum cfi_rule_kind {
	CFI_SAME = 0,		/* unchanged in this frame (also: not mentioned) */
	CFI_UNDEF,		/* lost (call-clobbered) */
	CFI_OFFSET,		/* saved at CFA + off */
	CFI_VAL_OFFSET,		/* is CFA + off */
	CFI_REGISTER,		/* is in register reg */
};

struct cfi_rule {
	uint8_t kind;		/* enum cfi_rule_kind */
	uint8_t reg;
	int64_t off;
};

/* One CFI row: how to find the caller's registers at a pc. */
struct cfi_row {
	uint8_t cfa_reg;	/* CFA = cfa_reg + cfa_off */
	int64_t cfa_off;
	struct cfi_rule rule[CFI_NREGS];
};

struct cfi_file;

/*
 * The file at path, loaded or from the cache (a file replaced under the
 * same name is a new entry). NULL when it cannot be read as ELF; a file
 * without CFI still answers for its symbols.
 */
struct cfi_file *cfi_file_get(const char *path);

/* The ELF virtual address of file offset off (its PT_LOAD segment). 0 or -ENOENT. */
int cfi_file_vaddr(const struct cfi_file *f, uint64_t off, uint64_t *vaddr);

/*
 * The CFI row covering ELF address vaddr. 0; -ENOENT when no CFI covers it;
 * -ENOTSUP when the row uses a DWARF expression (the PLT's).
 */
int cfi_file_row(struct cfi_file *f, uint64_t vaddr, struct cfi_row *row);

/* Name of the function symbol holding file offset off, NULL when none. */
const char *cfi_file_func(const struct cfi_file *f, uint64_t off);

/*
 * The bounds [start, end) of the function (its FDE) holding ELF address
 * vaddr, from .eh_frame_hdr: no symbol needed. 0; -ENOENT when no FDE
 * covers vaddr; -ENOTSUP when the file's tables are not in the usual form.
 */
int cfi_file_fde_range(const struct cfi_file *f, uint64_t vaddr, uint64_t *start, uint64_t *end);

/* File offset where the function symbol name starts. 0 or -ENOENT. */
int cfi_file_func_offset(const struct cfi_file *f, const char *name, uint64_t *off);

/* Files loaded so far (for the run's figures). */
unsigned int cfi_files_loaded(void);

#endif
