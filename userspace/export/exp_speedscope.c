// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * speedscope's own JSON format (its file-format-spec: a file of shared
 * frames and "sampled" profiles, each sample a stack of frame indices,
 * root first, with a weight): one profile per process, weights in
 * "bytes", so the viewer shows sizes and each rank is one tab.
 */
#include <inttypes.h>
#include <string.h>

#include "export.h"

/* Length of the UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void ex_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n = utf8_len(p);

		if (!n) {
			/* Names come from files anyone may write: the JSON must stay valid. */
			fputs("\\ufffd", f);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

static const char *const value_name[EX_NVALUES] = {
	[EX_RSS] = "resident bytes", [EX_PSS] = "proportional bytes",
	[EX_INUSE] = "live heap bytes", [EX_INUSE_OBJ] = "live heap blocks",
	[EX_ALLOC] = "heap bytes allocated", [EX_ALLOC_OBJ] = "heap allocations",
};

static void moment(const struct ex_profile *pr, const struct ex_proc *p, char *out, size_t len)
{
	snprintf(out, len, "%s, %.3f s", pr->at == EX_AT_PEAK ? "at its peak" :
		 pr->at == EX_AT_END ? "at the end" : "at", p->t);
}

static void write_profile(FILE *f, const struct ex_profile *pr, enum ex_value v, uint32_t proc)
{
	const struct ex_proc *p = &pr->procs[proc];
	int64_t total = 0;
	bool first = true;
	char label[64], when[64], title[256];

	for (size_t i = 0; i < pr->nsamples; i++)
		if (pr->samples[i].proc == proc && pr->samples[i].v[v] > 0)
			total = rp_sat_add(total, pr->samples[i].v[v]);
	ex_proc_label(p, label, sizeof(label));
	moment(pr, p, when, sizeof(when));
	snprintf(title, sizeof(title), "%s (pid %d): %s %s", label, p->pid, value_name[v], when);
	fputs("{\"type\":\"sampled\",\"name\":", f);
	ex_json_str(f, title);
	/* Counts are not bytes: speedscope's "none" unit shows them as plain numbers. */
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRId64 ",\"samples\":[",
		v == EX_INUSE_OBJ || v == EX_ALLOC_OBJ ? "none" : "bytes", total);
	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];

		if (s->proc != proc || s->v[v] <= 0)
			continue;
		fputs(first ? "[" : ",[", f);
		for (uint32_t k = 0; k < s->depth; k++)
			fprintf(f, "%s%" PRIu32, k ? "," : "", s->frames[k]);
		fputc(']', f);
		first = false;
	}
	fputs("],\"weights\":[", f);
	first = true;
	for (size_t i = 0; i < pr->nsamples; i++) {
		const struct ex_sample *s = &pr->samples[i];

		if (s->proc != proc || s->v[v] <= 0)
			continue;
		fprintf(f, "%s%" PRId64, first ? "" : ",", s->v[v]);
		first = false;
	}
	fputs("]}", f);
}

int ex_write_speedscope(FILE *f, const struct ex_profile *pr, enum ex_value v, char *err,
			size_t errlen)
{
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < pr->nframes; i++) {
		const struct ex_frame *fr = &pr->frames[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		ex_json_str(f, ex_str(pr, fr->name));
		/* The component as the frame's file: speedscope shows and groups by it. */
		fputs(",\"file\":", f);
		ex_json_str(f, ex_str(pr, pr->mappings[fr->mapping]));
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	for (uint32_t p = 0; p < pr->nprocs; p++) {
		if (p)
			fputc(',', f);
		write_profile(f, pr, v, p);
	}
	fprintf(f, "],\"name\":\"memattr-bpf: %s\",\"activeProfileIndex\":0,"
		"\"exporter\":\"memattr-bpf export\"}\n", value_name[v]);
	if (ferror(f)) {
		snprintf(err, errlen, "write error");
		return -1;
	}
	return 0;
}
