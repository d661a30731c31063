// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Frame names as their programmers wrote them: C++ symbols through the C++
 * runtime's own demangler (libstdc++'s __cxa_demangle, looked up at run
 * time: a C program that never exports C++ frames loads nothing), gfortran
 * module procedures (__mod_MOD_proc) as mod::proc. A name either cannot
 * read stays as it is.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle(void)
{
	static cxa_demangle_fn fn;
	static int tried;
	void *h;

	if (tried)
		return fn;
	tried = 1;
	fn = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (fn)
		return fn;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	return fn;
}

bool ex_cxx_demangler(void)
{
	return cxa_demangle() != NULL;
}

/* gfortran: "__grid_mod_MOD_alloc_fields" -> "grid_mod::alloc_fields". */
static int fortran_module(const char *in, char *out, size_t len)
{
	const char *mod;

	if (strncmp(in, "__", 2))
		return -1;
	mod = strstr(in + 2, "_MOD_");
	if (!mod || mod == in + 2 || !mod[5])
		return -1;
	snprintf(out, len, "%.*s::%s", (int)(mod - in - 2), in + 2, mod + 5);
	return 0;
}

void ex_demangle(const char *in, char *out, size_t len)
{
	cxa_demangle_fn fn;
	char *d;
	int status = -1;

	if (!strncmp(in, "_Z", 2) && (fn = cxa_demangle())) {
		d = fn(in, NULL, NULL, &status);
		if (d && !status) {
			snprintf(out, len, "%s", d);
			free(d);
			return;
		}
		free(d);
	}
	if (!fortran_module(in, out, len))
		return;
	snprintf(out, len, "%s", in);
}
