#!/bin/bash
# Attribution against ground truth under MPICH (Debian's 4.0.2, ch4:ucx),
# attached late: test_truth_attribution's 4-rank mpi_truth job, launched
# with hydra (mpirun.mpich) the way a batch job runs it: the launcher, its
# proxy and the ranks all inherit SLURM_JOB_ID, and `--job ID` after the
# start matches all three by it. The launcher (comm mpirun.mpich) and
# hydra_pmi_proxy must be followed, not accounted (no pid-P.csv); ranks are
# named by PMI_RANK; libmpich is mpi; every component within 5% of its
# truth at every plateau (check_truth.py). UCX's libucm hooks mmap and brk
# in these ranks, so this holds only with libucm a forwarder
# (uprobe_specs/mpich.spec, "Forwarders").
IT_MPI=mpich
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
truth_start_job 4 truth "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
truth_attach_check 4 truth 0.05
grep -q ',mpi,' "$TMPD/out.attached/rank-0.csv" || fail "no mpi component in rank-0.csv"
! grep -q ',lib:libmpich.so,' "$TMPD/out.attached/rank-0.csv" ||
	fail "libmpich counted as lib:libmpich.so, not mpi"
pass
