// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib_search.h"
#include "probe_batch.h"
#include "probe_warm.h"

/*
 * Warm one MPI library: attach its whole batch filtered to the tool's own
 * pid. The tool never maps the library, so no breakpoint goes anywhere, but
 * the kernel's uprobe objects for the file now exist and each rank's attach
 * at exec costs a small part of the first one's.
 */
static void prewarm_file(struct probes *pr, struct bpf_tracer *bpf, const char *path)
{
	const struct elfsym_table *syms = symbol_cache_get(&pr->symbols, path);
	struct probe_batch *b;
	int fd;

	if (!syms || pr->nwarm_fds + 2 > PROBES_MAX_WARM)
		return;
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < pr->ntargets; i++) {
		struct probe_target *tg = &pr->targets[i];
		uint64_t entry;

		if (tg->mpi && !elfsym_func_offset(syms, tg->rule->pattern, &entry))
			probe_batch_add(b, tg, entry);
	}
	for (int k = 0; k < 2 && b->n[k]; k++) {
		fd = tracer_attach_uprobes(bpf, k ? UPROBE_MPI_EXIT : UPROBE_MPI_ENTER, getpid(),
					   path, b->off[k], b->cookie[k], b->n[k]);
		if (fd >= 0)
			pr->warm_fds[pr->nwarm_fds++] = fd;
	}
	if (b->n[0] && pr->nwarm_paths < PROBES_MAX_WARM) {
		pr->warm_paths[pr->nwarm_paths] = strdup(path);
		if (pr->warm_paths[pr->nwarm_paths])
			pr->nwarm_paths++;
	}
	free(b);
}

void probes_prewarm(struct probes *pr, struct bpf_tracer *bpf, const struct spec_set *specs)
{
	const char *ld = getenv("LD_LIBRARY_PATH");
	char dirs[8192], *save = NULL, *dir;

	if (!pr->mpi_calls)
		return;
	snprintf(dirs, sizeof(dirs), "%s%s%s", ld ? ld : "", ld ? ":" : "", LIB_SEARCH_DEFAULT_DIRS);
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char path[PATH_MAX], real[PATH_MAX];
			const char *comp;

			if (strncmp(de->d_name, "libmpi", 6) || !strstr(de->d_name, ".so"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			comp = spec_component_for_path(specs, path);
			if (comp && !strcmp(comp, "mpi") && realpath(path, real))
				prewarm_file(pr, bpf, real);
		}
		if (d)
			closedir(d);
	}
}
