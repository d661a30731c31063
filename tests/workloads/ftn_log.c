// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ground-truth log of mpi_ftn, for Fortran through ISO_C_BINDING: the
 * same event log and expect file as the C workloads (common.h), so
 * check_truth.py --prefix ftn checks it. Strings come NUL-terminated.
 */
#include "common.h"

static FILE *expect_log;

void ftn_log_open(const char *dir, int rank)
{
	char where[4096];

	log_open(dir, "ftn", rank);
	snprintf(where, sizeof(where), "%s/expect-rank-%d.csv", dir, rank);
	expect_log = fopen(where, "w");
	if (!expect_log)
		die("mpi_ftn: cannot write %s: %s", where, strerror(errno));
	fprintf(expect_log, "plateau,first_event,last_event,component,bytes\n");
	fflush(expect_log);
}

void ftn_log_event(const char *event, long long bytes)
{
	log_event(event, (size_t)bytes);
}

/* app holds app_bytes of growth; mpi none. */
void ftn_expect(const char *plateau, const char *first, const char *last, long long app_bytes)
{
	fprintf(expect_log, "%s,%s,%s,app,%lld\n", plateau, first, last, app_bytes);
	fprintf(expect_log, "%s,%s,%s,mpi,0\n", plateau, first, last);
	fprintf(expect_log, "%s,%s,%s,lib:libgfortran.so,0\n", plateau, first, last);
	fflush(expect_log);
}

/*
 * The program holds app_bytes in all (mpi_held_ftn: memory held before the
 * tool attaches, checked with check_truth.py --absolute): no other row.
 */
void ftn_expect_app(const char *plateau, const char *first, const char *last, long long app_bytes)
{
	fprintf(expect_log, "%s,%s,%s,app,%lld\n", plateau, first, last, app_bytes);
	fflush(expect_log);
}

void ftn_wait_go(const char *go_file, int rank)
{
	wait_for_go(rank, go_file[0] ? go_file : NULL, 60);
}

void ftn_sleep_ms(long long ms)
{
	sleep_ms((long)ms);
}

void ftn_close(void)
{
	fclose(expect_log);
	log_close();
}
