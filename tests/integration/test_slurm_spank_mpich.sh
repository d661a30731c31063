#!/bin/bash
# test_slurm_spank with MPICH: the same 4-rank step built with mpicc.mpich,
# launched with srun --mpi=pmi2 (what works for MPICH under this Slurm).
IT_MPI=mpich
source "$(dirname "$0")/test_slurm_spank.sh"
