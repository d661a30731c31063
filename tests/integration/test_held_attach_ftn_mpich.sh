#!/bin/bash
# test_held_attach_ftn under MPICH (hydra, ch4:ucx): the same job, built with
# MPICH's compilers, and the same checks.
IT_MPI=mpich IT_TEST_NAME=$(basename "$0" .sh) exec bash "$(dirname "$0")/test_held_attach_ftn.sh"
