// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the enabled modes probe, from the specs; and the set freed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_links.h"
#include "probes.h"

/* What each malloc-family function takes, by name. */
static const struct {
	const char *name;
	enum heap_kind kind;
} heap_functions[] = {
	{ "malloc", HEAP_MALLOC },		{ "valloc", HEAP_MALLOC },
	{ "pvalloc", HEAP_MALLOC },		{ "calloc", HEAP_CALLOC },
	{ "realloc", HEAP_REALLOC },		{ "reallocarray", HEAP_REALLOCARRAY },
	{ "memalign", HEAP_MEMALIGN },		{ "aligned_alloc", HEAP_MEMALIGN },
	{ "posix_memalign", HEAP_POSIX_MEMALIGN }, { "free", HEAP_FREE },
};

static enum heap_kind heap_kind_of(const char *name)
{
	for (size_t i = 0; i < sizeof(heap_functions) / sizeof(heap_functions[0]); i++)
		if (!strcmp(heap_functions[i].name, name))
			return heap_functions[i].kind;
	return HEAP_NONE;
}

static int add_target(struct probes *pr, const struct spec_rule *r, bool mpi, uint32_t cookie)
{
	struct probe_target *t = realloc(pr->targets, (pr->ntargets + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	pr->targets = t;
	t[pr->ntargets++] = (struct probe_target){
		.rule = r, .component = mpi ? CLASSIFY_MPI : CLASSIFY_LIBC, .mpi = mpi, .cookie = cookie,
	};
	return 0;
}

int probes_init(struct probes *pr, const struct spec_set *specs, const struct mpi_catalog *mpi,
		bool mpi_calls, bool heap, bool verbose, char *err, size_t errlen)
{
	uint32_t nmpi = 0, nheap = 0;

	memset(pr, 0, sizeof(*pr));
	pr->mpi_calls = mpi_calls;
	pr->heap = heap;
	pr->verbose = verbose;
	for (size_t i = 0; i < specs->n; i++) {
		const struct spec_rule *r = &specs->rules[i];
		enum heap_kind kind;

		if (heap && r->kind == SPEC_FORWARD_ALLOCATOR) {
			const struct spec_rule **v = realloc(pr->allocators,
							     (pr->nallocators + 1) * sizeof(*v));

			if (!v)
				goto nomem;
			pr->allocators = v;
			v[pr->nallocators++] = r;
			continue;
		}
		if (r->kind != SPEC_FUNCTION)
			continue;
		if (mpi_calls && !strcmp(r->component, "mpi")) {
			/* The catalogue's number: the growth tables are indexed by it. */
			uint32_t id = mpi_catalog_id(mpi, r->pattern);

			if (!id)
				continue;	/* past MPI_FN_MAX */
			if (add_target(pr, r, true, id))
				goto nomem;
			nmpi++;
		} else if (heap && !strcmp(r->component, "libc")) {
			kind = heap_kind_of(r->pattern);
			if (kind == HEAP_NONE) {
				fprintf(stderr, "memattr-bpf: warning: %s:%d: '%s' is not a malloc-family function; --heap ignores it\n",
					r->file, r->line, r->pattern);
				continue;
			}
			if (add_target(pr, r, false, kind))
				goto nomem;
			nheap++;
		}
	}
	if (mpi_calls && !nmpi) {
		snprintf(err, errlen, "--mpi-calls: no spec lists a 'function' of component mpi");
		probes_free(pr);
		return -1;
	}
	if (heap && !nheap) {
		snprintf(err, errlen, "--heap: no spec lists a malloc-family 'function' of component libc");
		probes_free(pr);
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	probes_free(pr);
	return -1;
}

void probes_free(struct probes *pr)
{
	probes_close_warm(pr);
	for (size_t i = 0; i < pr->nwarm_paths; i++)
		free(pr->warm_paths[i]);
	symbol_cache_free(&pr->symbols);
	free(pr->targets);
	free(pr->allocators);
	memset(pr, 0, sizeof(*pr));
}
