#!/bin/bash
# A spec naming a library or an MPI function the target does not have is a
# warning that names it (file:line), not an error: tracing goes on, the run
# exits 0 and its CSVs are complete.
source "$(dirname "$0")/lib.sh"

NP=2
it_setup
SPEC=$TMPD/site.spec
cat >"$SPEC" <<'SPEC_EOF'
component mpi
library libnot-installed-anywhere.so
function MPI_Not_A_Function
SPEC_EOF
chmod 644 "$SPEC"

uid=$(id -u "$TEST_USER")
gid=$(id -g "$TEST_USER")
OUT=$TMPD/out
TOOL_ERR=$TMPD/tool.err
log "starting: memattr-bpf --spec $SPEC --mpi-calls -- mpirun ... mpi_hold"
(no_sigpipe env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root SUDO_UID="$uid" SUDO_GID="$gid" \
	"$MEMATTR_BIN" --spec "$SPEC" --mpi-calls --output "$OUT" -- \
	mpirun --oversubscribe -np "$NP" "$TMPD/bin/mpi_hold" --hold-mib 4 --hold-s 1) \
	>"$TMPD/tool.out" 2>"$TOOL_ERR" || fail "tool exited non-zero; stderr: $(cat "$TOOL_ERR")"
grep -q "warning: .*site.spec:3.*MPI_Not_A_Function\|warning: MPI_Not_A_Function (.*site.spec:3)" "$TOOL_ERR" ||
	fail "no warning naming MPI_Not_A_Function at site.spec:3; stderr: $(cat "$TOOL_ERR")"
grep -q "warning: .*site.spec:2: .*libnot-installed-anywhere.so" "$TOOL_ERR" ||
	fail "no warning naming libnot-installed-anywhere.so at site.spec:2; stderr: $(cat "$TOOL_ERR")"
log "warnings: $(grep -c warning "$TOOL_ERR")"
grep warning "$TOOL_ERR" | sed 's/^/    /'
check_no_bpf_leftovers
run_checker "$OUT" --ranks "$NP"
pass
