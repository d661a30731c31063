#!/bin/bash
# The SPANK plugin writes as the job's user (issue 32, finding 3): under a
# real Slurm, --memattr-dir comes from the user, so slurmstepd (root) must
# never create, chown or unlink anything there with root's rights, nor
# follow a symlink the user planted, nor take the node's name from the
# user's environment.
#  1. sbatch --memattr --memattr-dir=<a root-owned directory>: it stays
#     root's, its mode and entries untouched (a planted <node>.log kept).
#  2. srun --memattr --memattr-dir=<the same>: refused by srun (the user),
#     nothing there changed.
#  3. sbatch --memattr-dir=<user dir>/link/out, link -> another directory of
#     the user's: nothing is made through the link.
#  4. The user's own directory, with SLURMD_NODENAME=fake in the submit
#     environment: traced and merged as before, files the user's, the node
#     directory named by Slurm (node1, or the host), not "fake".
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/slurm_lib.sh"

SPANK_SO=${SPANK_SO:-$REPO/memattr_spank.so}
[ -f "$SPANK_SO" ] || fail "no $SPANK_SO (make builds it where libslurm-dev is installed)"
it_setup
cp "$MEMATTR_BIN" "$TMPD/bin/memattr-bpf"
cp "$SPANK_SO" "$TMPD/bin/memattr_spank.so"
ln -sfn "$REPO/uprobe_specs" "$TMPD/bin/uprobe_specs"
chmod 755 "$TMPD/bin/memattr-bpf" "$TMPD/bin/memattr_spank.so"
export SLURM_PLUGSTACK="required $TMPD/bin/memattr_spank.so bin=$TMPD/bin/memattr-bpf"
slurm_start

WORK=$TMPD/work
install -d -o "$TEST_USER" -g "$(id -g "$TEST_USER")" "$WORK"
HOST=$(hostname)
# Root's directory, with files on every name the plugin might use.
ROOTDIR=$TMPD/rootdir
install -d -m 0755 "$ROOTDIR"
for n in "$SLURM_NODE" "$HOST" "$(hostname -s)" fake; do
	echo "root's $n" >"$ROOTDIR/$n.log"
done
snapshot() { (cd "$1" && find . -printf '%p %U %G %m %i %s\n' | sort); }
snapshot "$ROOTDIR" >"$TMPD/root.before"

# sbatch_wait SCRIPT_LINES...: a 1-task batch job as the user, waited for; its id in BJOB.
sbatch_wait() {
	printf '%s\n' '#!/bin/bash' '#SBATCH -n 1' "#SBATCH -o $WORK/batch.%j.out" "$@" >"$WORK/b.sbatch"
	chown "$TEST_USER" "$WORK/b.sbatch"
	BJOB=$(cd "$WORK" && slurm_as_user env "${SUBMIT_ENV[@]}" sbatch --parsable b.sbatch) || fail "sbatch failed"
	local t0=$EPOCHREALTIME
	while squeue -h -j "$BJOB" 2>/dev/null | grep -q .; do
		elapsed_since "$t0" 60 && fail "batch job $BJOB still queued or running after 60 s"
		sleep 0.2
	done
}
SUBMIT_ENV=(MEMATTR_UNUSED=1)

log "1. sbatch --memattr --memattr-dir=$ROOTDIR (root's)"
sbatch_wait "#SBATCH --memattr --memattr-dir=$ROOTDIR" 'true'
snapshot "$ROOTDIR" >"$TMPD/root.after"
diff "$TMPD/root.before" "$TMPD/root.after" >"$TMPD/root.diff" ||
	fail "sbatch: the root-owned --memattr-dir changed: $(cat "$TMPD/root.diff")"
grep -q "memattr: the step runs untraced: .*$ROOTDIR" "$WORK/batch.$BJOB.out" ||
	fail "sbatch: the user is not told why the step runs untraced: $(cat "$WORK/batch.$BJOB.out")"
log "sbatch: $ROOTDIR untouched (owner, mode, entries, the planted logs); the user told why"
# A user's mistake must not take the node down (a failed batch launch drains it).
sinfo -h -n "$SLURM_NODE" -o %t | grep -Eq 'idle|mix|alloc' || fail "node $SLURM_NODE is $(sinfo -h -n "$SLURM_NODE" -o %t) after the refused batch step"

log "2. srun --memattr --memattr-dir=$ROOTDIR (root's)"
# srun is the user: it refuses before anything runs (the nodes would refuse too, as in 1).
if (cd "$WORK" && slurm_as_user timeout 60 srun -n1 --memattr --memattr-dir="$ROOTDIR" true) >"$TMPD/srun.out" 2>&1; then
	fail "srun with a root-owned --memattr-dir ran: $(tail -3 "$TMPD/srun.out")"
fi
grep -q "memattr-dir $ROOTDIR: not a directory you can write" "$TMPD/srun.out" ||
	fail "srun: no clear error for a root-owned --memattr-dir: $(cat "$TMPD/srun.out")"
snapshot "$ROOTDIR" >"$TMPD/root.after"
diff "$TMPD/root.before" "$TMPD/root.after" >"$TMPD/root.diff" ||
	fail "srun: the root-owned --memattr-dir changed: $(cat "$TMPD/root.diff"); srun: $(tail -3 "$TMPD/srun.out")"
log "srun: $ROOTDIR untouched"

log "3. a symlink in --memattr-dir"
install -d -o "$TEST_USER" "$WORK/real"
ln -s "$WORK/real" "$WORK/link"
chown -h "$TEST_USER" "$WORK/link"
sbatch_wait "#SBATCH --memattr --memattr-dir=$WORK/link/out" 'true'
[ ! -e "$WORK/real/out" ] || fail "the plugin followed $WORK/link: $(ls -la "$WORK/real/out")"
grep -q "'link' in it is a symbolic link" "$WORK/batch.$BJOB.out" ||
	fail "sbatch: no word of the symlink: $(cat "$WORK/batch.$BJOB.out")"
log "sbatch: nothing made through $WORK/link"

log "4. the user's own directory, SLURMD_NODENAME=fake submitted"
SUBMIT_ENV=(SLURMD_NODENAME=fake)
OK=$WORK/ok
sbatch_wait "#SBATCH --memattr --memattr-dir=$OK" 'sleep 1'
t0=$EPOCHREALTIME
until [ -f "$OK/job/report.html" ]; do
	elapsed_since "$t0" 30 && fail "no merged dataset in $OK: $(ls -laR "$OK" 2>&1 | head -20); job: $(cat "$WORK/batch.$BJOB.out" 2>/dev/null); slurmd: $(grep -i memattr "$SLURM_DIR/slurmd.log" | tail -3)"
	sleep 0.3
done
NODE=$(find "$OK" -mindepth 1 -maxdepth 1 -type d ! -name job -printf '%f\n')
[ "$NODE" = "$SLURM_NODE" ] || [ "$NODE" = "$HOST" ] ||
	fail "node directory '$NODE': not Slurm's name for the node ($SLURM_NODE) nor the host ($HOST)"
for f in "$OK" "$OK/$NODE" "$OK/$NODE.log" "$OK/$NODE/run_info.csv" "$OK/job/summary.csv"; do
	assert_eq "$(stat -c %U "$f")" "$TEST_USER" "owner of $f"
done
grep -q '^finished,1$' "$OK/$NODE/run_info.csv" || fail "the node's run_info.csv is not final"
check_no_bpf_leftovers
log "own directory: traced, merged, the user's files, node directory '$NODE'"
pass
