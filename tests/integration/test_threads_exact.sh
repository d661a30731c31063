#!/bin/bash
# RSS changes made on every CPU at once add up exactly. In a 2-rank
# mpi_threads job, each rank's 8 threads touch 8 MiB each together, then
# give half back and touch it again 4 times: the kernel's RSS counter moves
# on both CPUs at once, folding per-CPU slots into its shared count again
# and again. The tool computes each change from the counter's count and
# this CPU's slot (bpf/memattr.bpf.c, struct mm_anchor); with smaps read
# only at attach (--pss-interval 1 hour), the program's resident memory at
# the plateau comes from those changes alone, and must grow from what the
# program held before by exactly what the threads hold (64 MiB per rank),
# to within 2 pages. Not 2%: a tracer that followed only the counter's
# shared count (not the per-CPU slots) is off by the slots' residue, up to
# 31 pages per CPU here and 255 per CPU on a 128-core node (about 128 MiB
# there), and a slot read on the wrong CPU or a count not exchanged shows
# the same way.
# --handoff then runs the job again with one thread giving back what the
# others have just touched: the threads fill their blocks and wait (no
# memory syscall: their last pages are still runs in the kernel, each a
# single record for a thread's consecutive faults) while the main thread
# unmaps the upper half of every block. The other threads' runs must reach
# user space before that munmap's record (bpf/memattr.bpf.c,
# end_other_runs): a run that came after its region was gone could not be
# placed (`events_unplaced`), and the half that stays would lose pages.
source "$(dirname "$0")/lib.sh"

NP=2
THREADS=8
MIB=8

it_setup

# run_variant NAME TRUTH_MIB [mpi_threads options]: one job, its check.
run_variant() {
	local name=$1 truth=$2 job_id=$((900000 + RANDOM * 32 + RANDOM % 32))
	shift 2
	rm -f "$GO_FILE" "$STOP_FILE" "$LOGS"/threads-rank-*.csv
	start_job "$NP" -x "SLURM_JOB_ID=$job_id" -- "$TMPD/bin/mpi_threads" --log-dir "$LOGS" \
		--go-file "$GO_FILE" --stop-file "$STOP_FILE" --threads "$THREADS" --mib "$MIB" "$@"
	wait_ranks "$NP" 30
	wait_events threads ready "$NP" 30

	OUT=$TMPD/out-$name
	start_tool --job "$job_id" --output "$OUT" --pss-interval 3600000
	wait_tool_ready 30
	go
	wait_events threads plateau "$NP" 60
	# Two samples inside the plateau.
	sleep 0.5
	touch "$STOP_FILE"
	wait_job_ok 60
	wait_tool_ok 15 "the job ended"
	check_no_bpf_leftovers

	log "$name: checking each rank's app at the plateau against $truth MiB"
	"$PY" - "$OUT" "$NP" "$truth" <<'PY' || fail "$name: RSS changes on several CPUs did not add up (above)"
import csv, sys
out, np, truth_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
page, bad = 4096, 0
for r in range(np):
    rows = list(csv.DictReader(open(f"{out}/rank-{r}.csv")))
    app = [int(x["rss_bytes"]) for x in rows if x["component"] == "app"]
    if not app:
        print(f"rank {r}: no app rows"); bad += 1; continue
    # Before the go: the program's own pages; the plateau is the last it held.
    base, held = app[0], app[-1]
    err = (held - base - truth_mib * 2**20) // page
    ok = abs(err) <= 2
    print(f"{'ok' if ok else 'FAIL'} rank {r}: app grew by {(held - base) / 2**20:.3f} MiB "
          f"(from {base / 2**20:.3f} MiB), the threads hold {truth_mib} MiB: off by {err:+d} pages, tolerance 2")
    bad += not ok
sys.exit(1 if bad else 0)
PY
	# The run must not have hidden losses: no drops, every fault placed.
	grep -q '^dropped_events,0$' "$OUT/run_info.csv" || fail "$name: events were dropped: $(grep dropped "$OUT/run_info.csv")"
	grep -q '^events_unplaced,0$' "$OUT/run_info.csv" ||
		fail "$name: faults in no known region: $(grep unplaced "$OUT/run_info.csv")"
}

run_variant together "$((THREADS * MIB))" --rounds 4
run_variant handoff "$((THREADS * MIB / 2))" --handoff
pass
