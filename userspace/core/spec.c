// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uprobe_specs/ parser and matcher. See spec.h for the format.
 *
 * Errors name the file and line so a user editing a spec sees where it went
 * wrong. A file that fails leaves the set as it was before the file: the
 * rules it added are dropped, so a caller that reports and carries on never
 * runs with half a file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safe_open.h"
#include "spec.h"

#define MAX_TOKENS	5	/* keyword, argument, +OFF, HEX, and one to detect extras */

void spec_init(struct spec_set *set)
{
	set->rules = NULL;
	set->n = 0;
	set->cap = 0;
}

static void rule_free(struct spec_rule *r)
{
	free(r->pattern);
	free(r->library);
	free(r->file);
	r->pattern = NULL;
	r->library = NULL;
	r->file = NULL;
}

void spec_free(struct spec_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		rule_free(&set->rules[i]);
	free(set->rules);
	spec_init(set);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool valid_component(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= SPEC_NAME_MAX)
		return false;
	for (const char *p = name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
			continue;
		if (!strchr("_:.-", *p))
			return false;
	}
	return true;
}

static int add_rule(struct spec_set *set, enum spec_kind kind, const char *pattern,
		    const char *component, const char *file, int line)
{
	struct spec_rule *r;

	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 32;
		struct spec_rule *rules = realloc(set->rules, cap * sizeof(*rules));

		if (!rules)
			return -ENOMEM;
		set->rules = rules;
		set->cap = cap;
	}
	r = &set->rules[set->n];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->line = line;
	snprintf(r->component, sizeof(r->component), "%s", component);
	r->pattern = strdup(pattern);
	r->file = strdup(file);
	if (!r->pattern || !r->file) {
		rule_free(r);
		return -ENOMEM;
	}
	set->n++;
	return 0;
}

/*
 * Split a line into at most MAX_TOKENS whitespace-separated words, stopping
 * at a comment. '#' starts a comment only at the start of a word, so a
 * pattern may still contain one ("lib#1.so" is a pattern, "lib #x" is
 * "lib" and a comment).
 */
static int tokenize(char *line, char **tok)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' ||
		       *p == '\v' || *p == '\f')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == MAX_TOKENS)
			return n + 1;
		tok[n++] = p;
		while (*p && !strchr(" \t\r\n\v\f", *p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static const struct {
	const char *word;
	enum spec_kind kind;
} keywords[] = {
	{ "library",	SPEC_LIBRARY },
	{ "path",	SPEC_PATH },
	{ "function",	SPEC_FUNCTION },
	{ "thread",	SPEC_THREAD },
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "+OFF HEX" of a function line; the bytes guard against another build. */
static int parse_offset(struct spec_rule *r, const char *off, const char *hex)
{
	size_t len = strlen(hex);
	unsigned long v;
	char *end;

	if (off[0] != '+' || !off[1])
		return -1;
	errno = 0;
	v = strtoul(off + 1, &end, 0);
	if (errno || *end || !v || v >= 4096)
		return -1;
	/* The guard must cover every byte before the offset, or another build could put it mid-instruction. */
	if (!len || len % 2 || len / 2 > SPEC_EXPECT_MAX || len / 2 < v)
		return -1;
	for (size_t i = 0; i < len; i += 2) {
		int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		r->expect[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	r->nexpect = len / 2;
	r->offset = v;
	return 0;
}

/*
 * "forward library GLOB" / "forward function GLOB" / "forward allocator
 * LIBGLOB FUNCGLOB": code that only passes memory requests on. It names no
 * component, so it may stand anywhere.
 */
static int parse_forward(struct spec_set *set, char **tok, int n, const char *path,
			 int lineno, char *err, size_t errlen)
{
	bool allocator = n == 4 && !strcmp(tok[1], "allocator");
	enum spec_kind kind;

	if (!allocator && (n != 3 || (strcmp(tok[1], "library") && strcmp(tok[1], "function")))) {
		set_err(err, errlen, "%s:%d: want 'forward library GLOB', 'forward function GLOB' or 'forward allocator LIBRARY-GLOB FUNCTION-GLOB'",
			path, lineno);
		return -1;
	}
	if (allocator)
		kind = SPEC_FORWARD_ALLOCATOR;
	else
		kind = !strcmp(tok[1], "library") ? SPEC_FORWARD_LIBRARY : SPEC_FORWARD_FUNCTION;
	if (add_rule(set, kind, tok[n - 1], "", path, lineno))
		goto nomem;
	if (allocator && !(set->rules[set->n - 1].library = strdup(tok[2]))) {
		rule_free(&set->rules[--set->n]);
		goto nomem;
	}
	return 0;
nomem:
	set_err(err, errlen, "%s:%d: %s", path, lineno, strerror(ENOMEM));
	return -1;
}

/* An environment variable's name as shells write them: [A-Za-z_][A-Za-z0-9_]*. */
static bool valid_variable(const char *name)
{
	if (!((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_'))
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* "WORD variable NAME": where a process's rank is, best kind first (spec.h). */
static const struct {
	const char *word;
	enum spec_kind kind;
} variables[] = {
	{ "rank",	SPEC_RANK_VARIABLE },
	{ "pmi",	SPEC_PMI_VARIABLE },
	{ "task",	SPEC_TASK_VARIABLE },
};

#define NVARIABLES	(sizeof(variables) / sizeof(variables[0]))

static int variable_kind(const char *word)
{
	for (size_t i = 0; i < NVARIABLES; i++)
		if (!strcmp(word, variables[i].word))
			return (int)i;
	return -1;
}

/*
 * "rank variable NAME" / "pmi variable NAME" / "task variable NAME" /
 * "launcher COMM": who a process is. Like forward lines, they name no
 * component.
 */
static int parse_identity(struct spec_set *set, char **tok, int n, const char *path,
			  int lineno, char *err, size_t errlen)
{
	enum spec_kind kind;
	const char *name;

	if (!strcmp(tok[0], "launcher")) {
		if (n != 2 || strlen(tok[1]) > SPEC_COMM_MAX || strchr(tok[1], '/')) {
			set_err(err, errlen, "%s:%d: want 'launcher NAME' (a process name: at most %d characters, no '/')",
				path, lineno, SPEC_COMM_MAX);
			return -1;
		}
		kind = SPEC_LAUNCHER;
		name = tok[1];
	} else {
		if (n != 3 || strcmp(tok[1], "variable") || !valid_variable(tok[2])) {
			set_err(err, errlen, "%s:%d: want '%s variable NAME' (NAME: letters, digits and '_', not a digit first)",
				path, lineno, tok[0]);
			return -1;
		}
		kind = variables[variable_kind(tok[0])].kind;
		name = tok[2];
	}
	if (add_rule(set, kind, name, "", path, lineno)) {
		set_err(err, errlen, "%s:%d: %s", path, lineno, strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/* "patched FUNCTION": a libc entry point interposers rewrite. */
static int parse_patched(struct spec_set *set, char **tok, int n, const char *path, int lineno,
			 char *err, size_t errlen)
{
	if (n != 2 || !valid_variable(tok[1])) {
		set_err(err, errlen, "%s:%d: want 'patched FUNCTION' (a C symbol: letters, digits and '_', not a digit first)",
			path, lineno);
		return -1;
	}
	if (add_rule(set, SPEC_PATCHED, tok[1], "", path, lineno)) {
		set_err(err, errlen, "%s:%d: %s", path, lineno, strerror(ENOMEM));
		return -1;
	}
	return 0;
}

static int parse_line(struct spec_set *set, char *line, const char *path, int lineno,
		      char *component, char *err, size_t errlen)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(line, tok);
	bool is_component;
	size_t k;

	if (!n)
		return 0;
	if (!strcmp(tok[0], "forward"))
		return parse_forward(set, tok, n, path, lineno, err, errlen);
	if (variable_kind(tok[0]) >= 0 || !strcmp(tok[0], "launcher"))
		return parse_identity(set, tok, n, path, lineno, err, errlen);
	if (!strcmp(tok[0], "patched"))
		return parse_patched(set, tok, n, path, lineno, err, errlen);
	is_component = !strcmp(tok[0], "component");
	for (k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (!strcmp(tok[0], keywords[k].word))
			break;
	if (!is_component && k == sizeof(keywords) / sizeof(keywords[0])) {
		set_err(err, errlen, "%s:%d: unknown keyword '%s'", path, lineno, tok[0]);
		return -1;
	}
	if (n < 2) {
		set_err(err, errlen, "%s:%d: missing argument to '%s'", path, lineno, tok[0]);
		return -1;
	}
	if (n > 2 && !(n == 4 && !is_component && keywords[k].kind == SPEC_FUNCTION)) {
		set_err(err, errlen, "%s:%d: extra arguments to '%s'", path, lineno, tok[0]);
		return -1;
	}
	if (is_component) {
		if (!valid_component(tok[1])) {
			set_err(err, errlen,
				"%s:%d: invalid component name '%s' (want [a-z0-9_:.-], at most %d characters)",
				path, lineno, tok[1], SPEC_NAME_MAX - 1);
			return -1;
		}
		strcpy(component, tok[1]);
		return 0;
	}
	if (!component[0]) {
		set_err(err, errlen, "%s:%d: '%s' before any 'component' line",
			path, lineno, tok[0]);
		return -1;
	}
	if (add_rule(set, keywords[k].kind, tok[1], component, path, lineno)) {
		set_err(err, errlen, "%s:%d: %s", path, lineno, strerror(ENOMEM));
		return -1;
	}
	if (n == 4 && parse_offset(&set->rules[set->n - 1], tok[2], tok[3])) {
		rule_free(&set->rules[--set->n]);
		set_err(err, errlen, "%s:%d: want 'function NAME +OFFSET HEXBYTES' (offset 1-%d, and at least that many bytes of hex, at most %d), got '%s %s'",
			path, lineno, SPEC_EXPECT_MAX, SPEC_EXPECT_MAX, tok[2], tok[3]);
		return -1;
	}
	return 0;
}

/* A spec is a few KiB of text; a larger file is not one (/dev/zero, a log). */
#define SPEC_MAX_FILE	(1 << 20)

int spec_load_file(struct spec_set *set, const char *path, char *err, size_t errlen)
{
	char component[SPEC_NAME_MAX] = "";
	size_t first = set->n, cap = 0;
	char *line = NULL;
	int lineno = 0, ret = 0;
	ssize_t len;
	FILE *f;

	/*
	 * Read as root from wherever --spec points: a regular file only (a
	 * FIFO would block forever, /dev/zero never end), not through a
	 * symlink or a hard link a user planted.
	 */
	f = safe_fopenat(AT_FDCWD, path, 0, SPEC_MAX_FILE);
	if (!f) {
		set_err(err, errlen, "%s: %s", path, safe_open_strerror(errno));
		return -1;
	}
	errno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		/* A NUL inside a line would hide the rest of it: not a text file. */
		if (strlen(line) != (size_t)len) {
			set_err(err, errlen, "%s:%d: NUL byte in line", path, lineno);
			ret = -1;
			break;
		}
		ret = parse_line(set, line, path, lineno, component, err, errlen);
		if (ret)
			break;
		errno = 0;
	}
	/* getline fails on a directory (EISDIR) or an I/O error. */
	if (!ret && ferror(f)) {
		set_err(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		ret = -1;
	}
	free(line);
	fclose(f);
	if (ret) {
		while (set->n > first)
			rule_free(&set->rules[--set->n]);
	}
	return ret;
}

static int spec_filter(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	/* Like the shell's *.spec: hidden files (editor leftovers) are skipped. */
	return d->d_name[0] != '.' && len > 5 && !strcmp(d->d_name + len - 5, ".spec");
}

/* Byte order, not the locale's: the same tree loads the same way everywhere. */
static int name_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int spec_load_dir(struct spec_set *set, const char *dir, char *err, size_t errlen)
{
	struct dirent **names;
	char path[PATH_MAX];
	int n, ret = 0;

	n = scandir(dir, &names, spec_filter, name_order);
	if (n < 0) {
		set_err(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (!ret) {
			if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) >=
			    (int)sizeof(path)) {
				set_err(err, errlen, "%s/%s: %s", dir, names[i]->d_name,
					strerror(ENAMETOOLONG));
				ret = -1;
			} else {
				ret = spec_load_file(set, path, err, errlen);
			}
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

/* "libmpi.so" also matches "libmpi.so.40.30.4": try GLOB.* as well. */
static bool library_match(const char *pattern, const char *base)
{
	char versioned[NAME_MAX + 8];
	size_t len;

	if (!fnmatch(pattern, base, 0))
		return true;
	len = strlen(pattern);
	if (len < 3 || strcmp(pattern + len - 3, ".so"))
		return false;
	if (snprintf(versioned, sizeof(versioned), "%s.*", pattern) >= (int)sizeof(versioned))
		return false;
	return !fnmatch(versioned, base, 0);
}

/* The file name part of a path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool spec_rule_matches(const struct spec_rule *r, const char *path)
{
	const char *base;

	if (!path || !path[0])
		return false;
	base = base_name(path);
	if (r->kind == SPEC_LIBRARY)
		return base[0] && library_match(r->pattern, base);
	/* No FNM_PATHNAME: "/tmp/ompi.*" covers the whole session tree. */
	if (r->kind == SPEC_PATH)
		return !fnmatch(r->pattern, path, 0);
	return false;
}

const char *spec_component_for_path(const struct spec_set *set, const char *path)
{
	for (size_t i = 0; i < set->n; i++)
		if (spec_rule_matches(&set->rules[i], path))
			return set->rules[i].component;
	return NULL;
}

const char *spec_component_for_thread(const struct spec_set *set, const char *comm)
{
	if (!comm)
		return NULL;
	for (size_t i = 0; i < set->n; i++) {
		const struct spec_rule *r = &set->rules[i];

		if (r->kind == SPEC_THREAD && !fnmatch(r->pattern, comm, 0))
			return r->component;
	}
	return NULL;
}

bool spec_forwards_library(const struct spec_set *set, const char *path)
{
	const char *base;

	if (!path || !path[0])
		return false;
	base = base_name(path);
	for (size_t i = 0; i < set->n; i++)
		if (set->rules[i].kind == SPEC_FORWARD_LIBRARY &&
		    library_match(set->rules[i].pattern, base))
			return true;
	return false;
}

bool spec_allocator_in(const struct spec_rule *r, const char *path)
{
	if (r->kind != SPEC_FORWARD_ALLOCATOR || !path || !path[0])
		return false;
	return base_name(path)[0] && library_match(r->library, base_name(path));
}

/* An allocator's functions forward like a forward function's, in whichever file. */
static bool forwards_functions(const struct spec_rule *r)
{
	return r->kind == SPEC_FORWARD_FUNCTION || r->kind == SPEC_FORWARD_ALLOCATOR;
}

bool spec_forwards_function(const struct spec_set *set, const char *name)
{
	if (!name || !name[0])
		return false;
	for (size_t i = 0; i < set->n; i++)
		if (forwards_functions(&set->rules[i]) && !fnmatch(set->rules[i].pattern, name, 0))
			return true;
	return false;
}

bool spec_has_forward_functions(const struct spec_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (forwards_functions(&set->rules[i]))
			return true;
	return false;
}

static bool listed(const char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

size_t spec_rank_variables(const struct spec_set *set, bool tasks, const char **names, size_t max)
{
	size_t n = 0;

	if (!set)
		return 0;
	/* variables[] is in the order they count. */
	for (size_t k = 0; k < NVARIABLES; k++) {
		if (!tasks && variables[k].kind == SPEC_TASK_VARIABLE)
			continue;
		for (size_t i = 0; i < set->n && n < max; i++)
			if (set->rules[i].kind == variables[k].kind &&
			    !listed(names, n, set->rules[i].pattern))
				names[n++] = set->rules[i].pattern;
	}
	return n;
}

size_t spec_patched_functions(const struct spec_set *set, const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; set && i < set->n && n < max; i++)
		if (set->rules[i].kind == SPEC_PATCHED && !listed(names, n, set->rules[i].pattern))
			names[n++] = set->rules[i].pattern;
	return n;
}

bool spec_is_launcher(const struct spec_set *set, const char *comm)
{
	if (!set || !comm)
		return false;
	for (size_t i = 0; i < set->n; i++)
		if (set->rules[i].kind == SPEC_LAUNCHER && !strcmp(set->rules[i].pattern, comm))
			return true;
	return false;
}
