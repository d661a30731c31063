// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <unistd.h>

#include <vector>

#include "libcxxtruth.h"

static char *block;
static std::vector<int> *table;
static size_t block_bytes;
static unsigned block_seed;

static size_t pages(size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + pg - 1) / pg * pg;
}

void cxxlib_alloc(size_t bytes, unsigned seed)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	block = new char[bytes];
	block_bytes = bytes;
	block_seed = seed;
	for (size_t off = 0; off < bytes; off += pg)
		block[off] = (char)(off / pg * 31u + seed + 1u);
	/* value-initialised: every page written */
	table = new std::vector<int>(bytes / sizeof(int));
}

size_t cxxlib_bytes(void)
{
	return block ? pages(block_bytes) + pages(table->size() * sizeof(int)) : 0;
}

size_t cxxlib_free(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), bad = 0;

	for (size_t off = 0; off < block_bytes; off += pg)
		if (block[off] != (char)(off / pg * 31u + block_seed + 1u))
			bad++;
	delete[] block;
	delete table;
	block = nullptr;
	table = nullptr;
	block_bytes = 0;
	return bad;
}
