// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libplugin.h"

static unsigned char *large_block, *map_block;
static size_t large_len, map_len;
static unsigned plugin_seed;

static void touch(volatile unsigned char *p, size_t len, unsigned seed)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < len; off += pg)
		p[off] = (unsigned char)((off / pg) * 29u + seed + 1u);
}

static size_t bad_pages(const volatile unsigned char *p, size_t len, unsigned seed)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), bad = 0;

	for (size_t off = 0; off < len; off += pg)
		if (p[off] != (unsigned char)((off / pg) * 29u + seed + 1u))
			bad++;
	return bad;
}

int plugin_alloc(size_t large, size_t map, unsigned seed)
{
	plugin_seed = seed;
	large_len = large;
	large_block = malloc(large);
	if (!large_block)
		return -1;
	touch(large_block, large, seed);
	map_len = map;
	map_block = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map_block == MAP_FAILED) {
		map_block = NULL;
		return -1;
	}
	touch(map_block, map, seed + 3u);
	return 0;
}

size_t plugin_bytes(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), held = 0;

	/* malloc maps the block with its 16-byte header, in whole pages. */
	if (large_block)
		held += (malloc_usable_size(large_block) + 16 + pg - 1) / pg * pg;
	if (map_block)
		held += (map_len + pg - 1) / pg * pg;
	return held;
}

size_t plugin_free(void)
{
	size_t bad = 0;

	if (large_block)
		bad += bad_pages(large_block, large_len, plugin_seed);
	if (map_block)
		bad += bad_pages(map_block, map_len, plugin_seed + 3u);
	free(large_block);
	if (map_block)
		munmap(map_block, map_len);
	large_block = map_block = NULL;
	return bad;
}
