// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes.h"
#include "procfs.h"

/* Where the loader looks when nothing else says (Debian's multiarch layout first). */
#define DEFAULT_LIB_DIRS "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib"

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

void probes_close_warm(struct probes *pr)
{
	for (size_t i = 0; i < pr->nwarm_fds; i++)
		close(pr->warm_fds[i]);
	pr->nwarm_fds = 0;
}

/* Append k descriptors to a growing list. -ENOMEM leaves the list as it was. */
static int append_fds(int **fds, size_t *n, const int *add, size_t k)
{
	int *v;

	if (!k)
		return 0;
	v = realloc(*fds, (*n + k) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v + *n, add, k * sizeof(*v));
	*fds = v;
	*n += k;
	return 0;
}

int probes_move_links(struct proc *p, int **fds, size_t *n)
{
	if (append_fds(fds, n, p->link_fds, p->nlinks))
		return -ENOMEM;
	free(p->link_fds);
	p->link_fds = NULL;
	p->nlinks = 0;
	return 0;
}

int probes_move_warm(struct probes *pr, int **fds, size_t *n)
{
	if (append_fds(fds, n, pr->warm_fds, pr->nwarm_fds))
		return -ENOMEM;
	pr->nwarm_fds = 0;
	return 0;
}

void probes_free(struct probes *pr)
{
	probes_close_warm(pr);
	for (size_t i = 0; i < pr->nwarm_paths; i++)
		free(pr->warm_paths[i]);
	for (size_t i = 0; i < pr->nfiles; i++)
		elfsym_free(&pr->files[i]);
	free(pr->targets);
	free(pr->allocators);
	memset(pr, 0, sizeof(*pr));
}

const struct elfsym_table *probes_symbols(struct probes *pr, const char *path)
{
	struct elfsym_table t;
	struct stat st;

	/* Keyed by the file itself: after an upgrade, or in a container, one path names another file. */
	if (stat(path, &st))
		return NULL;
	for (size_t i = 0; i < pr->nfiles; i++) {
		const struct elfsym_table *f = &pr->files[i];

		if (f->dev != (uint64_t)st.st_dev || f->ino != (uint64_t)st.st_ino ||
		    f->size != (uint64_t)st.st_size ||
		    f->mtime_ns != (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec)
			continue;
		/* Keep the most recently used last: the first is evicted. */
		t = pr->files[i];
		memmove(&pr->files[i], &pr->files[i + 1], (pr->nfiles - i - 1) * sizeof(t));
		pr->files[pr->nfiles - 1] = t;
		return &pr->files[pr->nfiles - 1];
	}
	if (elfsym_load(&t, path))
		return NULL;
	if (pr->nfiles == PROBES_MAX_FILES) {
		elfsym_free(&pr->files[0]);
		memmove(&pr->files[0], &pr->files[1], (pr->nfiles - 1) * sizeof(t));
		pr->nfiles--;
	}
	pr->files[pr->nfiles++] = t;
	return &pr->files[pr->nfiles - 1];
}

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

static void keep_link(struct probes *pr, struct proc *p, int fd, size_t nprobes)
{
	int *v;

	if (fd < 0) {
		pr->failed += nprobes;
		return;
	}
	v = realloc(p->link_fds, (p->nlinks + 1) * sizeof(*v));
	if (!v) {
		close(fd);
		pr->failed += nprobes;
		return;
	}
	p->link_fds = v;
	p->link_fds[p->nlinks++] = fd;
	pr->attached += nprobes;
}

/* Entry probes of every target, return probes of those that return memory. */
struct probe_batch {
	uint64_t off[2][PROBES_MAX_PER_FILE];
	uint64_t cookie[2][PROBES_MAX_PER_FILE];
	size_t n[2];
	bool mpi;
};

static void batch_add(struct probe_batch *b, const struct probe_target *tg, uint64_t off)
{
	bool with_return = tg->mpi || tg->cookie != HEAP_FREE;

	if (b->n[0] >= PROBES_MAX_PER_FILE)
		return;
	b->mpi = tg->mpi;
	b->off[0][b->n[0]] = off;
	b->cookie[0][b->n[0]++] = tg->cookie;
	if (!with_return)
		return;
	/*
	 * The return probe sits with the entry probe: the offsets the specs
	 * allow come before any push, so the return address is still at the
	 * stack pointer there, which is all a return probe needs.
	 */
	b->off[1][b->n[1]] = off;
	b->cookie[1][b->n[1]++] = tg->cookie;
}

/*
 * One link for all returns, then one for all entries (detaching costs a
 * grace period per link). Returns first: a call that enters between the two
 * attaches must not be seen entering without its return, or the thread's
 * nesting depth would stay up for good; a return without its entry is
 * ignored by the programs.
 */
static void attach_batch(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
			 const struct probe_batch *b, const char *path)
{
	enum uprobe_prog enter = b->mpi ? UPROBE_MPI_ENTER : UPROBE_HEAP_ENTER;
	enum uprobe_prog leave = b->mpi ? UPROBE_MPI_EXIT : UPROBE_HEAP_EXIT;
	int fd;

	if (!b->n[0])
		return;
	if (b->n[1]) {
		fd = tracer_attach_uprobes(bpf, leave, p->pid, path, b->off[1], b->cookie[1], b->n[1]);
		keep_link(pr, p, fd, b->n[1]);
		if (fd < 0) {
			if (pr->verbose)
				fprintf(stderr, "memattr-bpf: cannot probe %s (pid %d): %s\n", path,
					p->pid, strerror(-fd));
			pr->failed += b->n[0];
			return;
		}
	}
	fd = tracer_attach_uprobes(bpf, enter, p->pid, path, b->off[0], b->cookie[0], b->n[0]);
	if (fd < 0 && pr->verbose)
		fprintf(stderr, "memattr-bpf: cannot probe %s (pid %d): %s\n", path, p->pid,
			strerror(-fd));
	keep_link(pr, p, fd, b->n[0]);
	if (fd < 0)
		return;
	if (b->mpi)
		p->mpi_probed = true;
	else
		p->heap_probed = true;
}

/*
 * Warm one MPI library: attach its whole batch filtered to the tool's own
 * pid. The tool never maps the library, so no breakpoint goes anywhere, but
 * the kernel's uprobe objects for the file now exist and each rank's attach
 * at exec costs a small part of the first one's.
 */
static void prewarm_file(struct probes *pr, struct bpf_tracer *bpf, const char *path)
{
	const struct elfsym_table *syms = probes_symbols(pr, path);
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
			batch_add(b, tg, entry);
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
	snprintf(dirs, sizeof(dirs), "%s%s%s", ld ? ld : "", ld ? ":" : "", DEFAULT_LIB_DIRS);
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

/* Add a probe unless one is at that offset already (aliases: one address, several names). */
static void batch_add_once(struct probe_batch *b, const struct probe_target *tg, uint64_t off)
{
	for (size_t k = 0; k < b->n[0]; k++)
		if (b->off[0][k] == off)
			return;
	batch_add(b, tg, off);
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
				batch_add_once(b, &allocator, entry);
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
	syms = probes_symbols(pr, path);
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
		batch_add_once(b, tg, probe_offset(tg, path, entry));
	}
	if (!b->mpi && in_allocator_file(pr, p, m->path))
		add_allocators(pr, b, syms, m->path);
	attach_batch(pr, bpf, p, b, path);
	free(b);
}

static bool already_probed(const struct proc *p, const char *path)
{
	for (size_t i = 0; i < p->nprobed; i++)
		if (!strcmp(p->probed_paths[i], path))
			return true;
	return false;
}

/* Does a mode probe the file m of p now (--heap waits on a deferred process)? */
static bool wanted(const struct probes *pr, const struct proc *p, const struct code_map *m)
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

/* Probe one library of p unless it already was. True when it is probed now. */
static bool probe_once(struct probes *pr, struct bpf_tracer *bpf, struct proc *p,
		       const struct code_map *m)
{
	if (already_probed(p, m->path) || !remember_probed(p, m->path))
		return false;
	probe_file(pr, bpf, p, m);
	return true;
}

/*
 * Where the loader will find name: the first of dirs (':'-separated) that
 * has it, resolved into out (PATH_MAX bytes).
 */
static bool find_in_dirs(const char *dirs, const char *origin, const char *name,
			 char out[PATH_MAX])
{
	char buf[PATH_MAX], *save = NULL, *dir;
	char *copy = strdup(dirs);
	bool found = false;

	if (!copy)
		return false;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		/* Relative entries would resolve against the tool's own directory. */
		if (dir[0] != '/' && dir[0] != '$')
			continue;
		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 7, name);
		else if (!strncmp(dir, "${ORIGIN}", 9))
			snprintf(buf, sizeof(buf), "%s%s/%s", origin, dir + 9, name);
		else
			snprintf(buf, sizeof(buf), "%s/%s", dir, name);
		found = realpath(buf, out) != NULL;
	}
	free(copy);
	return found;
}

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
			bool is_code, found;

			/* The loader's order: LD_LIBRARY_PATH, DT_RUNPATH, then the default directories. */
			found = (ldpath && find_in_dirs(ldpath, origin, nd.names[i], lib)) ||
				(nd.runpath && find_in_dirs(nd.runpath, origin, nd.names[i], lib)) ||
				find_in_dirs(DEFAULT_LIB_DIRS, origin, nd.names[i], lib);
			if (!found)
				continue;
			m.owner = classify_path(cls, lib, exe, &is_code);
			m.path = lib;
			mpi_program |= m.owner == CLASSIFY_MPI;
			if (pass && wanted(pr, p, &m))
				probe_once(pr, bpf, p, &m);
		}
		if (!pass)
			p->heap_deferred = !mpi_program && !p->from_scan;
	}
	environ_free(&env);
	elfsym_needed_free(&nd);
}

static void warn_missing_functions(struct probes *pr, const struct proc *p);

void probes_update(struct probes *pr, struct bpf_tracer *bpf, struct proc *p, double now)
{
	bool probed_any = false;

	if (p->heap_deferred && now - p->born_time >= PROBES_HEAP_DEFER_S)
		p->heap_deferred = false;
	for (size_t i = 0; i < p->nmaps; i++)
		if (wanted(pr, p, &p->maps[i]))
			probed_any |= probe_once(pr, bpf, p, &p->maps[i]);
	if (probed_any)
		warn_missing_functions(pr, p);
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

bool probes_waiting(const struct probes *pr, const struct proc *p)
{
	return (pr->mpi_calls && !p->mpi_probed) || (pr->heap && !p->heap_probed);
}

void probes_detach(struct proc *p)
{
	for (size_t i = 0; i < p->nlinks; i++)
		close(p->link_fds[i]);
	free(p->link_fds);
	p->link_fds = NULL;
	p->nlinks = 0;
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

		probe_once(pr, bpf, p, &m);
	}
}
