/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `memattr-bpf report DIR [RUN...]`: the report, with the memory model when given several runs. */
#ifndef MEMATTR_REPORT_CMD_H
#define MEMATTR_REPORT_CMD_H

/*
 * argv[0] is "report". DIR alone: report_main's page. With RUNs (other
 * runs of the program, RUN or RUN:SIZE as `model` takes them), the model
 * of DIR and the RUNs is fitted first and shown in the page; a model that
 * cannot be fitted fails the command (one line, exit 1, no page written).
 * Returns the exit status (2: usage).
 */
int report_cmd_main(int argc, char **argv);

#endif
