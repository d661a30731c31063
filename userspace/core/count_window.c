// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stddef.h>

#include "count_window.h"

static unsigned int find(const struct count_windows *ws, uint64_t start, uint64_t end)
{
	unsigned int i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].start == start && ws->w[i].end == end)
			break;
	return i;
}

const struct count_window *count_window_find(const struct count_windows *ws, uint64_t start,
					     uint64_t end)
{
	unsigned int i = find(ws, start, end);

	return i < ws->n ? &ws->w[i] : NULL;
}

static void remove_at(struct count_windows *ws, unsigned int i)
{
	ws->w[i] = ws->w[--ws->n];
}

void count_window_set(struct count_windows *ws, uint64_t start, uint64_t end, uint64_t lo,
		      uint64_t hi)
{
	unsigned int i = find(ws, start, end), smallest = 0;

	/* Nothing to save: a small region, or one whose first and last pages are both out. */
	if (end - start < COUNT_WINDOW_MIN || lo >= hi || (lo <= start && hi >= end)) {
		if (i < ws->n)
			remove_at(ws, i);
		return;
	}
	if (i == ws->n && ws->n == COUNT_WINDOWS_MAX) {
		for (i = 1; i < ws->n; i++)
			if (ws->w[i].end - ws->w[i].start < ws->w[smallest].end - ws->w[smallest].start)
				smallest = i;
		if (ws->w[smallest].end - ws->w[smallest].start >= end - start)
			return;
		i = smallest;
	} else if (i == ws->n) {
		ws->n++;
	}
	ws->w[i] = (struct count_window){ start, end, lo, hi };
}

void count_window_drop(struct count_windows *ws, uint64_t start, uint64_t end)
{
	unsigned int i = 0;

	while (i < ws->n) {
		if (start < ws->w[i].end && end > ws->w[i].start)
			remove_at(ws, i);
		else
			i++;
	}
}

void count_window_clear(struct count_windows *ws)
{
	ws->n = 0;
}
