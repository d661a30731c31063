// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>

#include "tracker.h"
#include "user_specs.h"

/* A library or path rule of a --spec file (not of the shipped specs). */
static bool user_rule(const struct tracker *t, const struct spec_rule *r)
{
	for (size_t k = 0; k < t->opt->nspecs; k++)
		if (!strcmp(r->file, t->opt->specs[k]))
			return r->kind == SPEC_LIBRARY || r->kind == SPEC_PATH;
	return false;
}

void user_specs_note(struct tracker *t, const struct proc *p)
{
	if (!t->spec_mapped)
		return;
	for (size_t i = 0; i < t->specs->n; i++) {
		const struct spec_rule *r = &t->specs->rules[i];

		if (t->spec_mapped[i] || !user_rule(t, r))
			continue;
		for (size_t k = 0; k < p->nmaps && !t->spec_mapped[i]; k++)
			t->spec_mapped[i] = spec_rule_matches(r, p->maps[k].path);
	}
}

void user_specs_warn(const struct tracker *t)
{
	if (!t->spec_mapped)
		return;
	for (size_t i = 0; i < t->specs->n; i++) {
		const struct spec_rule *r = &t->specs->rules[i];

		if (user_rule(t, r) && !t->spec_mapped[i])
			fprintf(stderr, "memattr-bpf: warning: %s:%d: no traced process mapped a file matching '%s'\n",
				r->file, r->line, r->pattern);
	}
}
