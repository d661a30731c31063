// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which program a run traced, from run_info.csv's command_line: the model
 * refuses to fit runs of two different programs together.
 *
 * The line is one a shell can rerun (main.c's join_args: plain words, or
 * words in single quotes with '\'' for a quote). After "--" come the
 * launchers (mpirun, srun, env, ...) with their options, then the program.
 * Whether an option takes a value is guessed: a known valued option, or a
 * following word that is a number or an assignment. A run that attached
 * (--job, --pid) names no program: "" and it is not compared.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MAX_WORDS	64

/* Programs that run the program: skipped, with their options. */
static const char *const launchers[] = {
	"mpirun", "mpiexec", "orterun", "prterun", "srun", "aprun", "jsrun", "ibrun",
	"mpiexec.hydra", "env", "time", "nice", "numactl", "taskset", "stdbuf", "chrt", "flux",
	NULL,
};

/* Options of those that take a value (two for the -mca/-genv kind). */
static const char *const valued[] = {
	"-n", "-np", "-N", "-c", "-x", "-H", "-host", "--host", "-hostfile", "--hostfile",
	"-machinefile", "--machinefile", "-f", "--map-by", "-map-by", "--bind-to", "-bind-to",
	"--rank-by", "-ppn", "--ntasks", "--ntasks-per-node", "--nodes", "-w", "--nodelist",
	"-p", "--partition", "-t", "--time", "--mpi", "--cpus-per-task", "-wdir", "--wdir",
	"-C", "--physcpubind", "--cpunodebind", "-m", "--membind", "-u", "--unset", NULL,
};
static const char *const valued2[] = { "-mca", "--mca", "-gmca", "--gmca", "-genv", "-env", NULL };

static bool in(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static const char *base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static bool is_launcher(const char *w)
{
	const char *b = base(w);

	/* mpirun.openmpi, mpiexec.mpich, ... */
	return in(launchers, b) || !strncmp(b, "mpirun.", 7) || !strncmp(b, "mpiexec.", 8);
}

/* A word that can only be an option's value: a count or list, or NAME=VALUE. */
static bool value_like(const char *w)
{
	return strspn(w, "0123456789,:-") == strlen(w) || (strchr(w, '=') && w[0] != '-');
}

/* Split into words (in place, in buf); returns the count. */
static size_t split_words(char *buf, char **w, size_t max)
{
	size_t n = 0;
	char *r = buf, *o = buf;

	while (*r && n < max) {
		while (*r == ' ')
			r++;
		if (!*r)
			break;
		w[n++] = o;
		while (*r && *r != ' ') {
			if (*r == '\'') {
				r++;
				while (*r && *r != '\'')
					*o++ = *r++;
				if (*r)
					r++;
			} else if (*r == '\\' && r[1]) {
				*o++ = r[1];
				r += 2;
			} else {
				*o++ = *r++;
			}
		}
		if (*r)
			r++;
		*o++ = '\0';
	}
	return n;
}

void md_app_name(const char *cmdline, char *out, size_t len)
{
	char *buf = strdup(cmdline), *w[MAX_WORDS];
	size_t n, i = 0;

	out[0] = '\0';
	if (!buf || !len) {
		free(buf);
		return;
	}
	n = split_words(buf, w, MAX_WORDS);
	while (i < n && strcmp(w[i], "--"))
		i++;
	for (i++; i < n; i++) {
		if (strchr(w[i], '=') && w[i][0] != '-')
			continue;	/* env's NAME=VALUE */
		if (!is_launcher(w[i]))
			break;
		/* "flux run", "flux mpi" */
		if (!strcmp(base(w[i]), "flux") && i + 1 < n && w[i + 1][0] != '-')
			i++;
		while (i + 1 < n && w[i + 1][0] == '-') {
			const char *opt = w[++i];

			if (!strcmp(opt, "--"))
				break;
			if (strchr(opt, '='))
				continue;
			if (in(valued2, opt))
				i += 2;
			else if (i + 1 < n && (in(valued, opt) || value_like(w[i + 1])))
				i++;
		}
	}
	if (i < n)
		snprintf(out, len, "%s", base(w[i]));
	free(buf);
}
