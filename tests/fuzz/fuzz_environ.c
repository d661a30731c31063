// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness: /proc/PID/environ, a block any traced user writes.
 * The buffer is laid out as procfs_read_environ leaves it (data[len] is
 * NUL, the last entry may lack its own), then searched for ranks and jobs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

/* The shipped specs' rank and task variables (uprobe_specs/), as a run reads them. */
static const char *const keys[] = {
	"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
	"SLURM_PROCID", "PALS_RANKID", "FLUX_TASK_RANK",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct environ_buf env;

	env.data = malloc(size + 1);
	if (!env.data)
		abort();
	memcpy(env.data, data, size);
	env.data[size] = '\0';
	env.len = size;
	environ_rank(&env, keys, sizeof(keys) / sizeof(keys[0]));
	environ_matches_job(&env, "1234");
	environ_matches_job(&env, "ompi.node1.4242");
	environ_get(&env, "PMIX_RANK");
	environ_free(&env);
	return 0;
}
