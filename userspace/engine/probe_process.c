// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_search.h"
#include "probe_library.h"
#include "probe_process.h"
#include "procfs.h"

void probes_at_exec(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
		    const struct classifier *cls)
{
	char exe_link[64], exe[PATH_MAX], origin[PATH_MAX], lib[PATH_MAX];
	struct environ_buf env = { 0 };
	struct elfsym_needed nd;
	const char *ldpath = NULL;
	char *slash;

	snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", p->pid);
	if (!realpath(exe_link, exe) || elfsym_read_needed(exe_link, &nd))
		return;
	snprintf(origin, sizeof(origin), "%s", exe);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	if (!procfs_read_environ(p->pid, &env, 1 << 20))
		ldpath = environ_get(&env, "LD_LIBRARY_PATH");
	/* Two passes: whether it is an MPI program decides whether --heap waits. */
	p->heap_deferred = false;
	for (int pass = 0; pass < 2; pass++) {
		bool mpi_program = false;

		for (size_t i = 0; i < nd.n; i++) {
			struct code_map m = { 0 };
			bool is_code;

			if (!lib_search_find(ldpath, nd.runpath, origin, nd.names[i], lib))
				continue;
			m.owner = classify_path(cls, lib, exe, &is_code);
			m.path = lib;
			mpi_program |= m.owner == CLASSIFY_MPI;
			if (pass && probe_library_wanted(pr, p, &m))
				probe_library_once(pr, bpf, p, &m);
		}
		if (!pass)
			p->heap_deferred = !mpi_program && !p->from_scan;
	}
	environ_free(&env);
	elfsym_needed_free(&nd);
}

/*
 * Say once which spec functions are missing from a library that has the
 * others of its component (MPI_X absent from this libmpi).
 */
static void warn_missing_functions(struct probes *pr, const struct proc *p)
{
	for (size_t i = 0; i < pr->ntargets; i++) {
		struct probe_target *tg = &pr->targets[i];
		bool sibling_found = false;

		if (tg->found || tg->warned)
			continue;
		for (size_t k = 0; k < pr->ntargets; k++)
			sibling_found |= pr->targets[k].found &&
					 pr->targets[k].component == tg->component;
		if (!sibling_found)
			continue;
		tg->warned = true;
		fprintf(stderr, "memattr-bpf: warning: %s (%s:%d) is not in any %s library of pid %d; not probed\n",
			tg->rule->pattern, tg->rule->file, tg->rule->line, tg->rule->component, p->pid);
	}
}

void probes_update(struct probes *pr, struct bpf_tracer *bpf, struct proc *p, double now)
{
	bool probed_any = false;

	if (p->heap_deferred && now - p->born_time >= PROBES_HEAP_DEFER_S)
		p->heap_deferred = false;
	for (size_t i = 0; i < p->nmaps; i++)
		if (probe_library_wanted(pr, p, &p->maps[i]))
			probed_any |= probe_library_once(pr, bpf, p, &p->maps[i]);
	if (probed_any)
		warn_missing_functions(pr, p);
}

bool probes_waiting(const struct probes *pr, const struct proc *p)
{
	return (pr->mpi_calls && !p->mpi_probed) || (pr->heap && !p->heap_probed);
}

void probes_at_fork(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
		    const struct proc *parent)
{
	if (parent && parent->account) {
		p->heap_deferred = true;
		return;
	}
	for (size_t i = 0; i < pr->nwarm_paths; i++) {
		struct code_map m = { .path = pr->warm_paths[i], .owner = CLASSIFY_MPI };

		probe_library_once(pr, bpf, p, &m);
	}
}
