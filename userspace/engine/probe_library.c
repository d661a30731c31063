// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_batch.h"
#include "probe_library.h"

/*
 * Where to probe target in file: its entry, or the spec's +OFF when the
 * function starts with the bytes the spec names (a build where it does not
 * gets the entry, which is always safe, and a warning).
 */
static uint64_t probe_offset(struct probe_target *tg, const char *path, uint64_t entry)
{
	const struct spec_rule *r = tg->rule;
	unsigned char buf[SPEC_EXPECT_MAX];
	int fd;
	bool same = false;

	if (!r->offset)
		return entry;
	/* The guard bytes come from the file the probe goes into (same path, same links). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0) {
		same = pread(fd, buf, r->nexpect, (off_t)entry) == (ssize_t)r->nexpect &&
		       !memcmp(buf, r->expect, r->nexpect);
		close(fd);
	}
	if (same)
		return entry + r->offset;
	if (!tg->entry_fallback_warned)
		fprintf(stderr, "memattr-bpf: warning: %s in %s does not start as %s:%d expects; probing its entry (slower)\n",
			r->pattern, path, r->file, r->line);
	tg->entry_fallback_warned = true;
	return entry;
}

/* Does --heap probe `forward allocator` functions in the file at path of p now? */
static bool in_allocator_file(const struct probes *pr, const struct proc *p, const char *path)
{
	if (!pr->heap || p->heap_deferred)
		return false;
	for (size_t i = 0; i < pr->nallocators; i++)
		if (spec_allocator_in(pr->allocators[i], path))
			return true;
	return false;
}

/*
 * The `forward allocator` functions the file defines, probed as malloc is:
 * the size first, the block returned. The outermost call of a thread is
 * the one counted, so a block from operator new counts once, at new's
 * caller, and the malloc inside it is not counted again.
 */
static void add_allocators(const struct probes *pr, struct probe_batch *b,
			   const struct elfsym_table *syms, const char *path)
{
	static const struct probe_target allocator = { .cookie = HEAP_MALLOC };

	for (size_t i = 0; i < pr->nallocators; i++) {
		const struct spec_rule *r = pr->allocators[i];

		if (!spec_allocator_in(r, path))
			continue;
		for (size_t f = 0; f < syms->nfuncs; f++) {
			uint64_t entry;

			if (!fnmatch(r->pattern, syms->funcs[f].name, 0) &&
			    !elfsym_func_offset(syms, syms->funcs[f].name, &entry))
				probe_batch_add_once(b, &allocator, entry);
		}
	}
}

/* Probe every target defined in one library of p; aliases (one address) once. */
static void probe_file(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
		       const struct code_map *m)
{
	char path[PATH_MAX + 32];
	const struct elfsym_table *syms;
	struct probe_batch *b;

	/*
	 * The file as the process sees it (its root: a container has its own
	 * libc): the offsets, the guard bytes and the probe all come from it.
	 */
	snprintf(path, sizeof(path), "/proc/%d/root%s", p->pid, m->path);
	syms = symbol_cache_get(&pr->symbols, path);
	if (!syms) {
		/* A process that already exited is a normal event, not a failure. */
		if (kill(p->pid, 0) && errno == ESRCH)
			return;
		pr->failed++;
		fprintf(stderr, "memattr-bpf: warning: cannot read the symbols of %s (pid %d): not probed\n",
			m->path, p->pid);
		return;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < pr->ntargets; i++) {
		struct probe_target *tg = &pr->targets[i];
		uint64_t entry;

		if (tg->component != m->owner || elfsym_func_offset(syms, tg->rule->pattern, &entry))
			continue;
		tg->found = true;
		probe_batch_add_once(b, tg, probe_offset(tg, path, entry));
	}
	if (!b->mpi && in_allocator_file(pr, p, m->path))
		add_allocators(pr, b, syms, m->path);
	probe_batch_attach(pr, bpf, p, b, path);
	free(b);
}

static bool already_probed(const struct proc *p, const char *path)
{
	for (size_t i = 0; i < p->nprobed; i++)
		if (!strcmp(p->probed_paths[i], path))
			return true;
	return false;
}

bool probe_library_wanted(const struct probes *pr, const struct proc *p, const struct code_map *m)
{
	for (size_t i = 0; i < pr->ntargets; i++)
		if (pr->targets[i].component == m->owner &&
		    (pr->targets[i].mpi || !p->heap_deferred))
			return true;
	return in_allocator_file(pr, p, m->path);
}

static bool remember_probed(struct proc *p, const char *path)
{
	char **v = realloc(p->probed_paths, (p->nprobed + 1) * sizeof(*v));

	if (!v)
		return false;
	p->probed_paths = v;
	v[p->nprobed] = strdup(path);
	if (!v[p->nprobed])
		return false;
	p->nprobed++;
	return true;
}

bool probe_library_once(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
			const struct code_map *m)
{
	if (already_probed(p, m->path) || !remember_probed(p, m->path))
		return false;
	probe_file(pr, bpf, p, m);
	return true;
}
