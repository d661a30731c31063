// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>

#include "proc_table.h"

#define MIN_BUCKETS	64

void proc_table_init(struct proc_table *t)
{
	t->buckets = NULL;
	t->nbuckets = 0;
	t->n = 0;
	t->first = t->last = NULL;
}

void proc_table_free(struct proc_table *t)
{
	free(t->buckets);
	proc_table_init(t);
}

static size_t slot(size_t nbuckets, pid_t pid)
{
	/* Pids are dense and sequential: a multiplicative hash spreads them. */
	return ((uint32_t)pid * 2654435761u) & (nbuckets - 1);
}

struct proc *proc_table_find(const struct proc_table *t, pid_t pid)
{
	struct proc *p;

	if (!t->nbuckets)
		return NULL;
	for (p = t->buckets[slot(t->nbuckets, pid)]; p; p = p->hash_next)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* Keep the load at most 1: rehash into twice as many buckets. */
static int grow(struct proc_table *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : MIN_BUCKETS;
	struct proc **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (struct proc *p = t->first; p; p = p->next) {
		size_t i = slot(n, p->pid);

		p->hash_next = b[i];
		b[i] = p;
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return 0;
}

int proc_table_add(struct proc_table *t, struct proc *p)
{
	size_t i;

	p->prev = t->last;
	p->next = NULL;
	if (t->n + 1 > t->nbuckets) {
		/* Link it first so the rehash places it too. */
		if (t->last)
			t->last->next = p;
		else
			t->first = p;
		t->last = p;
		if (grow(t)) {
			t->last = p->prev;
			if (t->last)
				t->last->next = NULL;
			else
				t->first = NULL;
			return -ENOMEM;
		}
		t->n++;
		return 0;
	}
	i = slot(t->nbuckets, p->pid);
	p->hash_next = t->buckets[i];
	t->buckets[i] = p;
	if (t->last)
		t->last->next = p;
	else
		t->first = p;
	t->last = p;
	t->n++;
	return 0;
}

void proc_table_remove(struct proc_table *t, struct proc *p)
{
	struct proc **pp = &t->buckets[slot(t->nbuckets, p->pid)];

	while (*pp && *pp != p)
		pp = &(*pp)->hash_next;
	if (*pp)
		*pp = p->hash_next;
	if (p->prev)
		p->prev->next = p->next;
	else
		t->first = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		t->last = p->prev;
	p->prev = p->next = p->hash_next = NULL;
	t->n--;
}
