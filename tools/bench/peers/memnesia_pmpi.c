// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The memnesia method, re-implemented for the benchmarks: a PMPI wrapper
 * library (LD_PRELOAD) that reads /proc/self/smaps before and after every
 * MPI call it wraps and charges the change of the process's PSS across the
 * call to MPI. At MPI_Finalize each rank writes $MEMNESIA_OUT/memnesia.<rank>
 * (calls wrapped, PSS charged to MPI, last and peak PSS seen).
 *
 * Wrapped: the calls the benchmark workloads make (point-to-point,
 * collectives, waits). MPI_Init/MPI_Finalize are wrapped to set up and
 * report, as memnesia does.
 *
 *   mpicc -shared -fPIC -O2 memnesia_pmpi.c -o libmemnesia_pmpi.so
 *   mpirun -x LD_PRELOAD=$PWD/libmemnesia_pmpi.so -x MEMNESIA_OUT=DIR -np 2 prog
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF (8u << 20)
static char smaps_buf[BUF];
static long long mpi_bytes, last_pss, peak_pss;
static unsigned long long calls;

/* Sum of every mapping's Pss, in bytes; -1 on error. */
static long long smaps_pss(void)
{
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;
	long long kb = 0;

	if (fd < 0)
		return -1;
	while (len < BUF - 1 && (n = read(fd, smaps_buf + len, BUF - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	smaps_buf[len] = 0;
	for (char *p = smaps_buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (p[0] == 'P' && !strncmp(p, "Pss:", 4))
			kb += strtoll(p + 4, NULL, 10);
	return kb * 1024;
}

#define BEFORE long long before_ = smaps_pss()
#define AFTER                                                        \
	do {                                                         \
		long long after_ = smaps_pss();                      \
		if (before_ >= 0 && after_ >= 0)                     \
			mpi_bytes += after_ - before_;               \
		last_pss = after_;                                   \
		if (after_ > peak_pss)                               \
			peak_pss = after_;                           \
		calls++;                                             \
	} while (0)

int MPI_Init(int *argc, char ***argv)
{
	BEFORE;
	int r = PMPI_Init(argc, argv);
	AFTER;
	return r;
}

int MPI_Finalize(void)
{
	const char *dir = getenv("MEMNESIA_OUT");
	int rank = 0;

	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (dir) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/memnesia.%d", dir, rank);
		f = fopen(path, "w");
		if (f) {
			fprintf(f, "calls %llu\nmpi_pss_bytes %lld\nlast_pss_bytes %lld\npeak_pss_bytes %lld\n",
				calls, mpi_bytes, last_pss, peak_pss);
			fclose(f);
		}
	}
	return PMPI_Finalize();
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	BEFORE;
	int r = PMPI_Send(buf, count, dt, dest, tag, comm);
	AFTER;
	return r;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
	     MPI_Status *st)
{
	BEFORE;
	int r = PMPI_Recv(buf, count, dt, src, tag, comm, st);
	AFTER;
	return r;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	BEFORE;
	int r = PMPI_Isend(buf, count, dt, dest, tag, comm, req);
	AFTER;
	return r;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	BEFORE;
	int r = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
	AFTER;
	return r;
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
	BEFORE;
	int r = PMPI_Wait(req, st);
	AFTER;
	return r;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
	BEFORE;
	int r = PMPI_Waitall(n, reqs, sts);
	AFTER;
	return r;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
		 void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag,
		 MPI_Comm comm, MPI_Status *st)
{
	BEFORE;
	int r = PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag,
			      comm, st);
	AFTER;
	return r;
}

int MPI_Barrier(MPI_Comm comm)
{
	BEFORE;
	int r = PMPI_Barrier(comm);
	AFTER;
	return r;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	BEFORE;
	int r = PMPI_Bcast(buf, count, dt, root, comm);
	AFTER;
	return r;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		  MPI_Comm comm)
{
	BEFORE;
	int r = PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
	AFTER;
	return r;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
		 MPI_Datatype rdt, MPI_Comm comm)
{
	BEFORE;
	int r = PMPI_Alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm);
	AFTER;
	return r;
}
