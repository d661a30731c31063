#!/bin/bash
# Under sudo, --output is made with the invoking user's rights (issue 32,
# finding 10): `SUDO_UID=<user> memattr-bpf --output ~user/link/out`, where
# link points into a directory only root may write, is refused in one line
# and creates nothing there; the user's own path works as before, the
# directory and its files the user's. A directory not the user's (a shared
# one such as /tmp) is refused: root replaces and removes files in it.
source "$(dirname "$0")/lib.sh"

it_setup
UID_=$(id -u "$TEST_USER") GID_=$(id -g "$TEST_USER")
U=$TMPD/u
install -d -o "$TEST_USER" -g "$GID_" -m 0755 "$U"
ROOTONLY=$TMPD/rootonly
install -d -m 0700 "$ROOTONLY"
ln -s "$ROOTONLY" "$U/link"
chown -h "$TEST_USER" "$U/link"

rc=0
SUDO_UID=$UID_ SUDO_GID=$GID_ SUDO_USER=$TEST_USER "$MEMATTR_BIN" --quiet --output "$U/link/out" -- /bin/true \
	>"$TMPD/a.out" 2>"$TMPD/a.err" || rc=$?
[ "$rc" -ne 0 ] || fail "--output through a link into a root-only directory: exit 0"
[ ! -e "$ROOTONLY/out" ] || fail "$ROOTONLY/out was created ($(stat -c '%U %a' "$ROOTONLY/out")) through the user's link"
[ "$(wc -l <"$TMPD/a.err")" -eq 1 ] || fail "more than one line: $(cat "$TMPD/a.err")"
log "refused (exit $rc): $(cat "$TMPD/a.err")"

# A shared directory (sticky, like /tmp): root would replace or remove other
# users' files in it (summary.csv, run_info.csv), sticky bit or not.
SHARED=$TMPD/shared
install -d -m 1777 "$SHARED"
echo "another user's" >"$SHARED/summary.csv"
rc=0
SUDO_UID=$UID_ SUDO_GID=$GID_ SUDO_USER=$TEST_USER "$MEMATTR_BIN" --quiet --output "$SHARED" -- /bin/true \
	>"$TMPD/s.out" 2>"$TMPD/s.err" || rc=$?
[ "$rc" -ne 0 ] || fail "--output in a shared directory of root's: exit 0"
assert_eq "$(cat "$SHARED/summary.csv")" "another user's" "the other user's summary.csv"
[ "$(wc -l <"$TMPD/s.err")" -eq 1 ] || fail "more than one line: $(cat "$TMPD/s.err")"
log "shared directory refused (exit $rc): $(cat "$TMPD/s.err")"

SUDO_UID=$UID_ SUDO_GID=$GID_ SUDO_USER=$TEST_USER "$MEMATTR_BIN" --quiet --output "$U/out" -- /bin/sleep 0.5 \
	>"$TMPD/b.out" 2>"$TMPD/b.err" || fail "--output in the user's own directory: exit $?: $(cat "$TMPD/b.err")"
assert_eq "$(stat -c %U "$U/out")" "$TEST_USER" "owner of $U/out"
for f in "$U/out"/*; do
	assert_eq "$(stat -c %U "$f")" "$TEST_USER" "owner of $f"
done
ls "$U/out" | grep -q '^pid-.*\.csv$' || fail "no timeline in $U/out: $(ls "$U/out")"
log "the user's own path: $(ls "$U/out" | tr '\n' ' ')"
pass
