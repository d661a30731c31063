// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The node's metrics as the sinks update them: jobs, their live processes,
 * OOM kills; and the label escaping the exposition (metrics_render.c)
 * uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

struct mx_job *metrics_job_add(struct metrics *m, const char *id, const char *user, uid_t uid)
{
	struct mx_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = strdup(id ? id : "");
	j->user = strdup(user ? user : "");
	if (!j->id || !j->user) {
		free(j->id);
		free(j->user);
		free(j);
		return NULL;
	}
	j->uid = uid;
	j->next = m->jobs;
	m->jobs = j;
	return j;
}

int metrics_detail_parse(const char *s, enum mx_detail *out)
{
	if (!strcmp(s, "job"))
		*out = MX_DETAIL_JOB;
	else if (!strcmp(s, "rank"))
		*out = MX_DETAIL_RANK;
	else
		return -1;
	return 0;
}

void metrics_oom_count(struct metrics *m, const struct mx_job *j, int rank)
{
	struct mx_oom *o;

	if (rank < 0)
		rank = -1;
	for (unsigned int i = 0; i < m->noom; i++)
		if (m->oom[i].rank == rank && m->oom[i].uid == j->uid &&
		    !strncmp(m->oom[i].job, j->id, sizeof(o->job) - 1)) {
			m->oom[i].kills++;
			return;
		}
	if (m->noom < METRICS_OOM_KEEP) {
		o = &m->oom[m->noom++];
	} else {
		o = &m->oom[m->oom_next];
		m->oom_next = (m->oom_next + 1) % METRICS_OOM_KEEP;
	}
	snprintf(o->job, sizeof(o->job), "%s", j->id);
	o->uid = j->uid;
	o->rank = rank;
	o->kills = 1;
}

static void proc_free(struct mx_proc *p)
{
	free(p->comps);
	free(p);
}

void metrics_job_remove(struct metrics *m, struct mx_job *j)
{
	struct mx_job **pp;

	for (pp = &m->jobs; *pp && *pp != j; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = j->next;
	while (j->procs) {
		struct mx_proc *p = j->procs;

		j->procs = p->next;
		proc_free(p);
	}
	free(j->id);
	free(j->user);
	free(j);
}

int metrics_proc_update(struct mx_job *j, struct mx_proc **slot, int rank, const char *step,
			const struct mx_comp *total, const struct mx_comp *comps, size_t n)
{
	struct mx_proc *p = *slot;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->next = j->procs;
		if (p->next)
			p->next->pprev = &p->next;
		p->pprev = &j->procs;
		j->procs = p;
		*slot = p;
	}
	if (n > p->cap) {
		struct mx_comp *c = realloc(p->comps, n * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->comps = c;
		p->cap = n;
	}
	p->rank = rank;
	snprintf(p->step, sizeof(p->step), "%s", step ? step : "");
	p->total = *total;
	memcpy(p->comps, comps, n * sizeof(*comps));
	p->ncomps = n;
	return 0;
}

void metrics_proc_remove(struct mx_proc **slot)
{
	struct mx_proc *p = *slot;

	if (!p)
		return;
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	proc_free(p);
	*slot = NULL;
}

/*
 * Length of the valid UTF-8 sequence at p (1-4), 0 when p does not start
 * one: a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned int c = p[0], cp;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;	/* also the terminating NUL: cut short */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * A label value as the text format wants it: valid UTF-8 (a job ID or a
 * step is whatever bytes a user's environment held, and one invalid byte
 * makes Prometheus reject the whole page, every job's series with it),
 * each invalid byte written as the four characters \xHH and a backslash of
 * the ID's own as two (so that the bytes 0xff and the text "\xff" stay
 * distinct), then backslash, quote and newline escaped for the format.
 */
void metrics_put_label(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	while (*p) {
		size_t n = utf8_len(p);

		if (!n) {
			fprintf(f, "\\\\x%02x", *p++);
			continue;
		}
		if (*p == '\\')
			fputs("\\\\\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}
