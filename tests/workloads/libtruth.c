// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include "libtruth.h"

#define SMALL	1008	/* with malloc's 8-byte header and 16-byte rounding: 1 KiB chunks */

static void *large_block, *map_block, *shm_block;
static void **small_blocks;
static size_t nsmall, map_len;

/*
 * A SysV segment of len bytes, as MPICH's UCX transport attaches one:
 * marked for removal at once, so that it goes with the process.
 */
static int attach_segment(size_t len)
{
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);

	if (id < 0)
		return -1;
	shm_block = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (shm_block == (void *)-1) {
		shm_block = NULL;
		return -1;
	}
	memset(shm_block, 0x3d, len);
	return 0;
}

/*
 * Inlined into both entry points: --heap names a call site by the function
 * it lies in (test_modes expects truth_lib_alloc's).
 */
static inline __attribute__((always_inline)) int hold_blocks(size_t large, size_t small_total,
							     size_t map)
{
	large_block = malloc(large);
	if (!large_block)
		return -1;
	memset(large_block, 0x5a, large);
	nsmall = small_total / 1024;
	small_blocks = calloc(nsmall, sizeof(*small_blocks));
	if (!small_blocks)
		return -1;
	for (size_t i = 0; i < nsmall; i++) {
		small_blocks[i] = malloc(SMALL);
		if (!small_blocks[i])
			return -1;
		memset(small_blocks[i], 0x6b, SMALL);
	}
	map_len = map;
	map_block = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map_block == MAP_FAILED)
		return -1;
	memset(map_block, 0x7c, map);
	return 0;
}

int truth_lib_alloc(size_t large, size_t small_total, size_t map)
{
	if (hold_blocks(large, small_total, map))
		return -1;
	return attach_segment(map);
}

int truth_lib_hold(size_t large, size_t small_total, size_t map)
{
	return hold_blocks(large, small_total, map);
}

size_t truth_lib_bytes(void)
{
	size_t held = nsmall * 1024 + nsmall * sizeof(*small_blocks);

	if (large_block)
		held += malloc_usable_size(large_block) + 8;
	if (map_block)
		held += map_len;
	if (shm_block)
		held += map_len;
	return held;
}

void truth_lib_release_blocks(void)
{
	free(large_block);
	munmap(map_block, map_len);
	large_block = map_block = NULL;
}

void truth_lib_free(void)
{
	free(large_block);
	for (size_t i = 0; i < nsmall; i++)
		free(small_blocks[i]);
	free(small_blocks);
	munmap(map_block, map_len);
	if (shm_block)
		shmdt(shm_block);
	large_block = map_block = shm_block = NULL;
	small_blocks = NULL;
	nsmall = 0;
}
