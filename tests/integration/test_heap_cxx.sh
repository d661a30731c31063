#!/bin/bash
# --heap on a C++ program: operator new only forwards, so the blocks a
# std::vector or a new[] gets must be counted at the code that said `new`
# (the program's functions: app; its own C++ library's: lib:libcxxtruth.so),
# never inside libstdc++'s operator new (issue 11: LULESH's domain arrays
# were one row at libstdc++.so:_Znwm+0x1c). mpi_cxx launched under
# `--heap`: heap_sites.csv against what it allocates by construction (and
# heap_sites_peak.csv: everything is live at its peak, in the middle), and
# the default attribution still within 2% of truth with the probes in place.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lang_truth.sh"

NP=2
UNIT_MIB=8
it_setup
TOOL_ARGS=(--heap)
truth_launched "$NP" cxx 0.02 "$TMPD/bin/mpi_cxx" --log-dir @LOGS@ --go-file @GO@ \
	--unit-mib "$UNIT_MIB" --plateau-ms 600
log "export --at peak --value heap (folded)"
"$MEMATTR_BIN" export "$TMPD/out.launched" --at peak --value heap -o "$TMPD/peak.folded" ||
	fail "export --at peak --value heap failed"
log "checking heap_sites.csv and heap_sites_peak.csv: check_heap_cxx.py"
"$PY" "$IT_DIR/check_heap_cxx.py" "$TMPD/out.launched" --ranks "$NP" --unit-mib "$UNIT_MIB" \
	--folded-peak "$TMPD/peak.folded" ||
	fail "heap_sites.csv or heap_sites_peak.csv of the C++ program differs from what it allocated (above)"
pass
