// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Brendan Gregg's folded stacks: "root;child;leaf VALUE" per line, what
 * flamegraph.pl, inferno and speedscope read. With more than one process
 * each stack starts with the process ("rank 3"), so one graph shows every
 * rank side by side and --rank is not needed to tell them apart.
 */
#include <inttypes.h>
#include <string.h>

#include "export.h"

void ex_folded_name(const char *s, char *out, size_t len)
{
	size_t i = 0;

	if (!len)
		return;
	/* ';' separates frames and a line break ends the stack: neither may be in a name. */
	for (; *s && i + 1 < len; s++) {
		unsigned char c = (unsigned char)*s;

		out[i++] = c == ';' ? ':' : c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	out[i] = '\0';
}

void ex_proc_label(const struct ex_proc *p, char *out, size_t len)
{
	if (p->rank >= 0)
		snprintf(out, len, "rank %d", p->rank);
	else
		snprintf(out, len, "pid %d", p->pid);
}

int ex_write_folded(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err, size_t errlen)
{
	char name[512];

	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];

		if (s->v[v] <= 0)
			continue;
		if (pr->nprocs > 1) {
			ex_proc_label(&pr->procs[s->proc], name, sizeof(name));
			fprintf(f, "%s;", name);
		}
		for (uint32_t k = 0; k < s->depth; k++) {
			ex_folded_name(ex_str(pr, pr->frames[s->frames[k]].name), name, sizeof(name));
			fprintf(f, "%s%s", k ? ";" : "", name);
		}
		fprintf(f, " %" PRId64 "\n", s->v[v]);
	}
	if (ferror(f)) {
		snprintf(err, errlen, "write error");
		return -1;
	}
	return 0;
}
