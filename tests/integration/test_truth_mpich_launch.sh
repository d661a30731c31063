#!/bin/bash
# Attribution against ground truth under MPICH, traced from the launch:
# `memattr-bpf -- mpirun.mpich -np 2 mpi_truth.mpich` as a sudo user runs it.
# hydra's launcher (comm mpirun.mpich) and its proxy (hydra_pmi_proxy, a
# fork of the launcher that execs) are followed, not accounted: only
# rank-R.csv files, no pid-P.csv. Every component within 5% of its truth at
# every plateau (check_truth.py); MPI_Init's memory is in mpi's baseline.
# UCX's libucm hooks mmap and brk in these ranks, so this holds only with
# libucm a forwarder (uprobe_specs/mpich.spec, "Forwarders").
IT_MPI=mpich
source "$(dirname "$0")/lib.sh"

NP=2
UNIT_MIB=1

it_setup
OUT=$TMPD/out
launch_under_tool "$OUT" "$NP" -- "$TMPD/bin/mpi_truth.mpich" --log-dir "$LOGS" --go-file "$GO_FILE" \
	--unit-mib "$UNIT_MIB" --plateau-ms 600
wait_ranks "$NP" 30
wait_events truth ready "$NP" 30
start_sampler "$TMPD/sampler.csv"
go

wait_tool_ok 120 "the launched job ended"
stop_sampler
for r in $(seq 0 $((NP - 1))); do
	grep -q '^end,' "$LOGS/truth-rank-$r.csv" || fail "rank $r never reached its end (job output: $(tail -5 "$TMPD/tool.out"))"
done
check_no_bpf_leftovers
extra=$(cd "$OUT" && ls pid-*.csv 2>/dev/null || true)
[ -z "$extra" ] || fail "hydra's launcher or proxy was accounted as a process of the job: $extra"
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
! grep -q ',lib:libmpich.so,' "$OUT/rank-0.csv" || fail "libmpich counted as lib:libmpich.so, not mpi"
log "checking attribution: check_truth.py"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" \
	--log-dir "$LOGS" --t-line "$T_LINE" || fail "attribution differs from the ground truth (above)"
pass
