// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The output formats: a new one is a writer file and a line here. */
#include <string.h>

#include "export.h"

static const struct ex_writer writers[] = {
	{ "folded", false, ex_write_folded },
	{ "speedscope", false, ex_write_speedscope },
	{ "pprof", true, ex_write_pprof },
};

const struct ex_writer *ex_writer_find(const char *name)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (!strcmp(writers[i].name, name))
			return &writers[i];
	return NULL;
}

const char *ex_writer_names(void)
{
	return "folded, speedscope, pprof";
}
