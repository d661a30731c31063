#!/bin/bash
# test_slurm_attach with a Slurm that tracks processes without cgroups
# (proctrack/linuxproc, task/none): the env -i ranks are in no job cgroup
# and carry no Slurm variable, so --job finds them through
# `scontrol listpids` alone.
SLURM_PROCTRACK=linuxproc
source "$(dirname "$0")/test_slurm_attach.sh"
