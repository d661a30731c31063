#!/bin/bash
# --attribution sampled: no program at any page fault, pages counted at
# samples. The mpi_truth job of test_truth_attribution, attached, must come
# out with every component within 5% of its truth at each plateau, as the
# exact mode does; the tool must hold no link to ma_rss_stat or
# ma_fault_user (nothing runs at a fault of any process), and run_info.csv
# must say the mode and how often it counted pages.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

it_setup
TOOL_ARGS=(--attribution sampled)
no_fault_programs() {
	local prog
	for prog in ma_rss_stat ma_fault_user; do
		! "$PY" "$IT_DIR/bpf_leftovers.py" --linked-by "$TOOL_PID" "$prog" >"$TMPD/fault_progs.txt" ||
			fail "sampled attribution, yet the tool holds a link to $prog: $(cat "$TMPD/fault_progs.txt")"
	done
}
TRUTH_TOOL_CHECK=no_fault_programs
truth_attached 4 truth 0.05 "$TMPD/bin/mpi_truth$MPI_SUFFIX" --log-dir @LOGS@ --go-file @GO@ --unit-mib 1 --plateau-ms 700
info=$TMPD/out.attached/run_info.csv
grep -qx 'modes,sampled' "$info" || fail "run_info.csv does not say modes,sampled: $(grep '^modes,' "$info")"
counts=$(awk -F, '$1 == "sampled_counts_touched" || $1 == "sampled_counts_all" { n += $2 } END { print n + 0 }' "$info")
[ "$counts" -gt 0 ] || fail "run_info.csv counts no page count; the truth job's plateaus need them"
pass
