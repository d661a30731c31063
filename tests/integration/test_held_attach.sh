#!/bin/bash
# Memory held before the tool attaches (issue 31): a 2-rank mpi_held job
# allocates everything -- the program's large malloc, 1 KiB mallocs, a block
# held only by a local of main, a struct pointing at two arrays, a direct
# mmap, MPI_Alloc_mem's block, a thread arena's mallocs; libtruth.so's large
# malloc, 1 KiB mallocs and mmap held in its statics -- then the tool
# attaches by --job. Nothing recorded who asked for that memory: its owners
# are inferred from who holds it (docs/attribution.md, "Attaching to a running job").
# app and lib:libtruth.so must each be within 5% of their whole known size
# (check_truth.py --absolute) while everything is held and after the large
# blocks are released (traced frees, exact: they show whether the inferred
# regions had the blocks' bounds). Without the inference both are ~0.
# run_info.csv must count what was inferred and its cost.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TRUTH_CHECK_ARGS=(--absolute)
truth_start_job 2 held "$TMPD/bin/mpi_held$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 4 --plateau-ms 1500
truth_attach_check 2 held 0.05
info=$TMPD/out.attached/run_info.csv
for key in infer_processes infer_cpu_s infer_bytes_read inferred_unattributed_bytes 'inferred_bytes:app'; do
	grep -q "^$key," "$info" || fail "run_info.csv has no $key row: $(cat "$info")"
done
log "inferred: $(grep -E '^(infer|inferred)' "$info" | tr '\n' ' ')"
pass
