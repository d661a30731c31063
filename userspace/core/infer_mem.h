/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The inference's view of a running process's memory: reads in blocks of
 * INFER_BLOCK through the reader (one read of /proc/PID/mem per block, not
 * one per word), a few blocks kept, every byte read counted against the
 * budget. Once the budget is spent, nothing more is read: words read as 0
 * and mem->over says so. A lone word (a chunk header, a sample of a large
 * block) outside the cached blocks is read with its page alone: walking
 * the headers of a heap of 64 KiB chunks reads a page of each, not all.
 */
#ifndef MEMATTR_INFER_MEM_H
#define MEMATTR_INFER_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "infer.h"

/* A cached piece of the process: a block, or a page. */
struct infer_mem_block {
	uint64_t base;		/* aligned to its size, UINT64_MAX: empty */
	uint64_t used;		/* last use, for eviction */
	uint8_t *data;
};

#define INFER_PAGE		4096u
#define INFER_CACHE_PAGES	8

struct infer_mem {
	infer_read_fn rd;
	void *ctx;
	uint64_t budget;	/* 0: none */
	uint64_t bytes_read;
	bool over;		/* a read was refused for the budget */
	uint64_t clock;
	struct infer_mem_block blk[INFER_CACHE_BLOCKS];	/* INFER_BLOCK bytes each */
	struct infer_mem_block pg[INFER_CACHE_PAGES];	/* INFER_PAGE bytes each */
	uint8_t *pages;					/* the pages' data */
};

int infer_mem_init(struct infer_mem *m, infer_read_fn rd, void *ctx, uint64_t budget);
void infer_mem_free(struct infer_mem *m);

/* The 8-byte word at addr (8-aligned); false when it could not be read. */
bool infer_mem_word(struct infer_mem *m, uint64_t addr, uint64_t *w);

/*
 * The words of [addr, addr + len) block by block: cb(ctx, address of the
 * first word, words, count) for each piece read. False when the budget
 * stopped it before the end.
 */
typedef void (*infer_words_cb)(void *ctx, uint64_t addr, const uint64_t *w, size_t n);
bool infer_mem_words(struct infer_mem *m, uint64_t addr, uint64_t len, infer_words_cb cb,
		     void *ctx);

#endif
