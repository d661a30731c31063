// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness: a spec file (--spec, read as root). The input is
 * written to a scratch file and loaded with spec_load_file, as the tool
 * does, then matched against a few paths and thread names.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "spec.h"

static char path[64];
static int fd = -1;

static void cleanup(void)
{
	unlink(path);
}

static const char *const paths[] = {
	"/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4",
	"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so",
	"/dev/shm/vader_segment.node1.1234.0",
	"/lib/x86_64-linux-gnu/libc.so.6",
	"[heap]",
	"",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec_set set;
	char err[512];

	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/memattr-fuzz-spec.%d", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			abort();
		atexit(cleanup);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	spec_init(&set);
	if (!spec_load_file(&set, path, err, sizeof(err))) {
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			spec_component_for_path(&set, paths[i]);
		spec_component_for_thread(&set, "progress");
	}
	spec_free(&set);
	return 0;
}
