// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memattr-bpf: where did each rank's memory go, and who took it.
 *
 * The commands, one file each: argv[1] names one of the table's, and it
 * runs with argv from its name on; anything else is the tracing command
 * (trace.c) with the whole command line. Reading a run's files (report,
 * merge, model, export, diff) needs no root and no BPF: nothing is touched before this choice.
 * A new command is a file, a line here and a line in cli_usage()
 * (docs/ARCHITECTURE.md, "Add a subcommand").
 */
#include <stddef.h>
#include <string.h>

#include "daemon.h"
#include "diff_cmd.h"
#include "export_cmd.h"
#include "merge.h"
#include "model.h"
#include "report.h"
#include "report_cmd.h"
#include "trace.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the name; returns the exit status */
	const char *help;			/* one line: what cli_usage() says of it */
};

static const struct command commands[] = {
	{ "daemon", daemon_main, "every job on this node (memattr-bpf daemon --help)" },
	{ "report", report_cmd_main, "DIR/report.html from a run's CSVs, with the memory model given more runs" },
	{ "merge",  merge_main,  "one dataset from a job's per-node datasets" },
	{ "model",  model_main,  "per-component memory model from runs at several rank counts" },
	{ "export", export_main, "a run's resident memory as folded stacks, speedscope or pprof" },
	{ "diff",   diff_main,   "two runs per rank and component; --fail-above PCT gates growth" },
};

int main(int argc, char **argv)
{
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
	return trace_main(argc, argv);
}
