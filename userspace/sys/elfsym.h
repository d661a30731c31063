/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Function symbols of an ELF file (libelf): where a named function starts
 * in the file (for a uprobe), and which function holds a given file offset
 * (to name a malloc call site). Both .symtab and .dynsym are read, so a
 * stripped library still answers for its exported functions.
 */
#ifndef MEMATTR_ELFSYM_H
#define MEMATTR_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct elfsym_func {
	uint64_t vaddr, size;
	char *name;
};

struct elfsym_seg {
	uint64_t vaddr, offset, filesz;
};

/* The longest GNU build ID kept, in bytes (ld writes 20: SHA-1; --build-id=0x... up to this). */
#define ELFSYM_BUILD_ID_MAX	64

struct elfsym_table {
	char *path;
	/* Which file it was read from: a path names another file after an upgrade or in a container. */
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	struct elfsym_func *funcs;	/* sorted by vaddr */
	size_t nfuncs;
	/*
	 * funcs' indices sorted by name (same names by index): a name is
	 * found by binary search. libc has thousands of functions and its
	 * entry points are looked up for every new process image.
	 */
	uint32_t *by_name;
	struct elfsym_seg *segs;	/* PT_LOAD segments */
	size_t nsegs;
	char build_id[2 * ELFSYM_BUILD_ID_MAX + 1];	/* GNU build ID in hex, "" if none */
};

/*
 * Read the function symbols of path. 0 or -errno (-ENOEXEC: not ELF, or
 * not a regular file, or larger than ELFSYM_MAX_FILE: paths can come from
 * the traced users, and the tool runs as root).
 */
#define ELFSYM_MAX_FILE	(2ULL << 30)
int elfsym_load(struct elfsym_table *t, const char *path);
void elfsym_free(struct elfsym_table *t);

/*
 * path's GNU build ID (NT_GNU_BUILD_ID) as lowercase hex into hex (len:
 * 2 * ELFSYM_BUILD_ID_MAX + 1 holds any). A file that is gone, is not
 * ELF, or has no such note gives "" and 0: no error; -EINVAL if len is 0.
 */
int elfsym_build_id(const char *path, char *hex, size_t len);

/* File offset where function name starts. 0, or -ENOENT when not defined here. */
int elfsym_func_offset(const struct elfsym_table *t, const char *name, uint64_t *file_off);

/*
 * Name of the function holding file offset off, and off's distance from
 * its start; NULL when no function symbol covers it.
 */
const char *elfsym_name_at(const struct elfsym_table *t, uint64_t off, uint64_t *delta);

/*
 * The shared objects an executable or library asks the loader for: its
 * DT_NEEDED names, and its DT_RUNPATH (or DT_RPATH) as written, with
 * $ORIGIN still in it. Free with elfsym_needed_free. 0 or -errno.
 */
struct elfsym_needed {
	char **names;
	size_t n;
	char *runpath;		/* NULL when none */
};

int elfsym_read_needed(const char *path, struct elfsym_needed *out);
void elfsym_needed_free(struct elfsym_needed *nd);

/*
 * Where the writable segment of the ELF file open at fd ends in memory
 * (its .bss included, rounded up to a page), given one of its mappings:
 * mapped at map_start from file offset map_offset. 0; -ENOENT when no
 * writable segment holds that offset; -ENOEXEC when fd is not ELF.
 */
#define ELFSYM_PAGE	4096ULL
int elfsym_writable_end(int fd, uint64_t map_start, uint64_t map_offset, uint64_t *end);

#endif
