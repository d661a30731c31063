#!/bin/bash
# Under sudo, --output is made with the invoking user's rights (issue 32,
# finding 10): `SUDO_UID=<user> memattr-bpf --output ~user/link/out`, where
# link points into a directory only root may write, is refused in one line
# and creates nothing there; the user's own path works as before, the
# directory and its files the user's.
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

SUDO_UID=$UID_ SUDO_GID=$GID_ SUDO_USER=$TEST_USER "$MEMATTR_BIN" --quiet --output "$U/out" -- /bin/sleep 0.5 \
	>"$TMPD/b.out" 2>"$TMPD/b.err" || fail "--output in the user's own directory: exit $?: $(cat "$TMPD/b.err")"
assert_eq "$(stat -c %U "$U/out")" "$TEST_USER" "owner of $U/out"
for f in "$U/out"/*; do
	assert_eq "$(stat -c %U "$f")" "$TEST_USER" "owner of $f"
done
ls "$U/out" | grep -q '^pid-.*\.csv$' || fail "no timeline in $U/out: $(ls "$U/out")"
log "the user's own path: $(ls "$U/out" | tr '\n' ' ')"
pass
