// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_attach.h"
#include "infer_read.h"
#include "tracker.h"

static struct sink_inferred *find(const struct tracker *t, const struct session *s)
{
	for (size_t i = 0; i < t->ninferred; i++)
		if (t->inferred[i].session == s->id)
			return &t->inferred[i].sum;
	return NULL;
}

static struct sink_inferred *find_or_add(struct tracker *t, const struct session *s)
{
	struct sink_inferred *sum = find(t, s);
	struct tracker_inferred *m;

	if (sum)
		return sum;
	m = realloc(t->inferred, (t->ninferred + 1) * sizeof(*m));
	if (!m)
		return NULL;
	t->inferred = m;
	memset(&m[t->ninferred], 0, sizeof(*m));
	m[t->ninferred].session = s->id;
	return &m[t->ninferred++].sum;
}

/* One process's figures into its session's: components by name (ids are per session). */
static void add(struct sink_inferred *sum, const struct proc_inferred *in,
		const struct classifier *cls)
{
	sum->processes++;
	sum->seconds += in->seconds;
	sum->wall_seconds += in->wall_seconds;
	sum->bytes_read += in->bytes_read;
	sum->allocations += in->allocations;
	sum->unattributed += in->unattributed;
	sum->budget_hits += in->budget_hit;
	for (unsigned int i = 0; i < in->n; i++) {
		const char *name = classify_name(cls, in->by[i].owner);
		unsigned int k;

		for (k = 0; k < sum->n && strcmp(sum->by[k].name, name); k++)
			;
		if (k == sum->n) {
			if (k == SINK_INFERRED_COMPS)
				continue;	/* the first 16 components met: a job has fewer */
			snprintf(sum->by[k].name, sizeof(sum->by[k].name), "%s", name);
			sum->n++;
		}
		sum->by[k].bytes += in->by[i].bytes;
	}
}

void infer_attach(struct tracker *t, struct session *s, struct proc *p)
{
	unsigned int mib = t->opt->infer_budget_mib ? t->opt->infer_budget_mib :
			   INFER_DEFAULT_BUDGET_MIB;
	struct sink_inferred *sum;
	struct proc_inferred in;

	if (proc_infer(p, &s->cls, mib == UINT_MAX ? 0 : (uint64_t)mib << 20, &in))
		return;		/* gone, or not readable: its memory stays unattributed */
	if (t->opt->verbose)
		fprintf(stderr, "memattr-bpf: pid %d: inferred owners of %llu allocations in %.3f s "
			"(%llu MiB read%s, %u running threads stopped to read their registers), "
			"%llu MiB left unattributed\n", p->pid,
			(unsigned long long)in.allocations, in.seconds,
			(unsigned long long)(in.bytes_read >> 20), in.budget_hit ? ", budget hit" : "",
			in.threads_stopped, (unsigned long long)(in.unattributed >> 20));
	sum = find_or_add(t, s);
	if (sum)
		add(sum, &in, &s->cls);
}

void infer_attach_counters(const struct tracker *t, const struct session *s,
			   struct sink_inferred *out)
{
	const struct sink_inferred *sum = find(t, s);

	if (sum)
		*out = *sum;
}

void infer_attach_forget(struct tracker *t, const struct session *s)
{
	for (size_t i = 0; i < t->ninferred; i++)
		if (t->inferred[i].session == s->id) {
			t->inferred[i] = t->inferred[--t->ninferred];
			return;
		}
}

void infer_attach_free(struct tracker *t)
{
	free(t->inferred);
	t->inferred = NULL;
	t->ninferred = 0;
}
