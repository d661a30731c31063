// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `memattr-bpf report DIR [RUN...]`: report/ writes the page and model/
 * fits the runs; this joins them (model/ reads runs with report/'s reader,
 * so report/ cannot call model/ itself). The model's section is made whole
 * in memory before the page is written: a failed fit leaves no page.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "report.h"
#include "report_cmd.h"

int report_cmd_main(int argc, char **argv)
{
	char err[MD_ERRLEN], *html = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if (argc <= 2)
		return report_main(argc, argv);
	for (int i = 1; i < argc; i++)
		if (!argv[i][0] || argv[i][0] == '-') {
			report_usage(stderr);
			return 2;
		}
	f = open_memstream(&html, &len);
	if (!f) {
		fprintf(stderr, "memattr-bpf report: out of memory\n");
		return 1;
	}
	ret = md_model_html(f, argv + 1, (size_t)(argc - 1), err, sizeof(err));
	if (fclose(f) && !ret) {
		snprintf(err, sizeof(err), "cannot make the model's section: %s", strerror(errno));
		ret = -1;
	}
	if (ret) {
		fprintf(stderr, "memattr-bpf report: the model of %d runs: %s\n", argc - 1, err);
		free(html);
		return 1;
	}
	ret = report_dir(argv[1], html);
	free(html);
	return ret;
}
