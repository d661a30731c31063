#!/bin/bash
# A library dlopen'ed after attach: a 2-rank mpi_dlopen job, attached by
# --job before the plugin exists in any rank; then each rank dlopen()s
# libplugin.so (never linked in), which mallocs (R+1)*N MiB and mmaps
# (R+1)*M MiB for itself, frees it and is dlclose()d. The rank files must
# show a `lib:libplugin.so` component holding exactly what the plugin holds
# (within 5%) at the plateau after the allocation, nothing before the
# dlopen, nothing after the dlclose, and `app` must not take the plugin's
# memory (check_truth.py against the workload's own expect-rank-R.csv).
# Then issue 10's case: a second job whose plugin mallocs 32 MiB at once
# after the dlopen (no plateau, so no maps read in between): the malloc'd
# block and the mapping must be the plugin's within 2%.
source "$(dirname "$0")/lib.sh"

NP=2
MALLOC_MIB=8
MMAP_MIB=4
JOB_ID=$((300000 + RANDOM * 32 + RANDOM % 32))

it_setup
start_job "$NP" -x "SLURM_JOB_ID=$JOB_ID" -- "$TMPD/bin/mpi_dlopen" --log-dir "$LOGS" \
	--go-file "$GO_FILE" --malloc-mib "$MALLOC_MIB" --mmap-mib "$MMAP_MIB" --plateau-ms 800
wait_ranks "$NP" 30
wait_events dlopen ready "$NP" 30

OUT=$TMPD/out
start_tool --job "$JOB_ID" --output "$OUT"
wait_tool_ready 30
# The plugin must really arrive after the attach, or this proves nothing.
for r in "${!RANK_PID[@]}"; do
	if grep -q 'libplugin\.so' "/proc/${RANK_PID[$r]}/maps"; then
		fail "rank $r maps libplugin.so before the go: the test would not exercise a late dlopen"
	fi
done
start_sampler "$TMPD/sampler.csv"
go
wait_job_ok 60
wait_tool_ok 15 "the job ended"
stop_sampler
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv"
for r in $(seq 0 $((NP - 1))); do
	grep -q ',lib:libplugin\.so,' "$OUT/rank-$r.csv" ||
		fail "rank-$r.csv has no lib:libplugin.so component (components seen: $(cut -d, -f4 "$OUT/rank-$r.csv" | sort -u | tr '\n' ' '))"
	peak=$(awk -F, '$4 == "lib:libplugin.so" && $5 > m { m = $5 } END { printf "%.2f", m / 1048576 }' "$OUT/rank-$r.csv")
	log "rank $r: lib:libplugin.so peak rss $peak MiB (plugin held $(((r + 1) * (MALLOC_MIB + MMAP_MIB))) MiB)"
done
log "checking attribution: check_truth.py --prefix dlopen"
"$PY" "$IT_DIR/check_truth.py" "$OUT" --ranks "$NP" --sampler "$TMPD/sampler.csv" \
	--log-dir "$LOGS" --prefix dlopen --t-line "$T_LINE" ||
	fail "the plugin's memory is not where the workload says it is (above)"

log "second job: the plugin mallocs 32 MiB at once after the dlopen"
source "$IT_DIR/lang_truth.sh"
truth_attached "$NP" dlopen 0.02 "$TMPD/bin/mpi_dlopen" --log-dir @LOGS@ --go-file @GO@ \
	--malloc-mib 32 --mmap-mib 16 --plateau-ms 600 --at-once 1 --default-malloc 1
pass
