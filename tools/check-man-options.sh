#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Every long option the code accepts is in its man page, and every option a
# man page lists (an entry of OPTIONS or KEYS) is one the code accepts.
# Sources of truth: userspace/cmd/cli.c's long_opts[] (memattr-bpf(8)),
# userspace/cmd/daemon_cfg.c's keys[] and the options daemon_cfg_parse_args
# handles itself (memattr-bpf-daemon(8); the keys also memattr-bpf.conf(5)),
# userspace/merge/merge.c's opts[] (memattr-bpf-merge(1)), userspace/model/model.c's
# opts[] (memattr-bpf-model(1)), userspace/cmd/export_cmd.c's and diff_cmd.c's opts[]
# (memattr-bpf-export(1), memattr-bpf-diff(1)),
# userspace/core/spec.c's keywords[], "component" and the forward kinds
# parse_forward takes (memattr-spec(5)), userspace/spank/spank_plugin.c's
# options[] (memattr_spank(8)).
# Usage: tools/check-man-options.sh [SRCDIR]   (exit 1 on any mismatch)
set -euo pipefail

top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
man=$top/docs/man
fail=0

# Names in a getopt_long table: { "name", ...
getopt_names() {
	awk -v tbl="$2" '$0 ~ tbl"\\[\\] = \\{" { on = 1; next }
		on && /^[[:space:]]*};/ { exit }
		on && match($0, /\{ *"[a-z0-9-]+"/) {
			s = substr($0, RSTART, RLENGTH); gsub(/[{ "]/, "", s); print s }' "$1"
}

# [DK_X] = "name" in daemon_cfg.c's keys[].
daemon_keys() {
	awk '/static const char \*const keys\[DK_NR\]/ { on = 1; next }
		on && /};/ { exit }
		on { while (match($0, /= *"[a-z0-9-]+"/)) {
			s = substr($0, RSTART, RLENGTH); gsub(/[= "]/, "", s); print s
			$0 = substr($0, RSTART + RLENGTH) } }' "$1"
}

# The options daemon_cfg_parse_args takes before the keys: "--help", "--verbose", key "config".
daemon_own() {
	sed -n '/^int daemon_cfg_parse_args/,/^}/p' "$1" |
		grep -o -e 'strcmp(a, "--[a-z-]*")' -e 'strcmp(key, "[a-z-]*")' |
		sed 's/.*"-*\([a-z-]*\)")/\1/'
}

# Options a page lists: the lines following .TP in the section named $2,
# "\-\-name" (roff) as "name".
listed() {
	awk -v sec="$2" '/^\.SH / { on = ($2 == sec); next }
		on && /^\.TP/ { tp = 1; next }
		on && tp { print; tp = 0 }' "$1" |
		grep -o '\\-\\-[A-Za-z0-9_\\-]*' | sed -e 's/\\-/-/g' -e 's/^--//' | sort -u || true
}

# .TP entries of KEYS: the key is the first word after .BI/.B.
listed_keys() {
	awk '/^\.SH / { on = ($2 == "KEYS"); next }
		on && /^\.TP/ { tp = 1; next }
		on && tp { print $2; tp = 0 }' "$1" | sed 's/\\-/-/g' | sort -u
}

# check PAGE WHAT "code names" "page names"
check() {
	local page=$1 what=$2 code=$3 doc=$4 n
	for n in $code; do
		grep -qx -- "$n" <<<"$doc" || { echo "$page: $what '$n' is accepted by the code but not documented"; fail=1; }
	done
	for n in $doc; do
		grep -qx -- "$n" <<<"$code" || { echo "$page: $what '$n' is documented but the code does not accept it"; fail=1; }
	done
}

# Statements of a spec file: keywords[] ({ "library", SPEC_LIBRARY }),
# "component", "forward KIND" as parse_forward compares tok[1], "WORD
# variable" for variables[] ({ "rank", SPEC_RANK_VARIABLE }), "launcher", "patched".
spec_statements() {
	awk '/keywords\[\] = \{/ { on = 1; next }
		on && /};/ { exit }
		on && match($0, /\{ *"[a-z]+"/) {
			s = substr($0, RSTART, RLENGTH); gsub(/[{ "]/, "", s); print s }' "$1"
	awk '/variables\[\] = \{/ { on = 1; next }
		on && /};/ { exit }
		on && match($0, /\{ *"[a-z]+"/) {
			s = substr($0, RSTART, RLENGTH); gsub(/[{ "]/, "", s); print s "-variable" }' "$1"
	grep -q 'strcmp(tok\[0\], "component")' "$1" && echo component
	grep -q 'strcmp(tok\[0\], "launcher")' "$1" && echo launcher
	grep -q 'strcmp(tok\[0\], "patched")' "$1" && echo patched
	sed -n '/^static int parse_forward/,/^}/p' "$1" |
		grep -o 'strcmp(tok\[1\], "[a-z]*")' | sed 's/.*"\([a-z]*\)")/forward-\1/'
}

# .TP entries of STATEMENTS: the keyword, "forward-KIND" for forward's,
# "WORD-variable" for the variable lines.
listed_statements() {
	awk '/^\.SH / { on = ($2 == "STATEMENTS"); next }
		on && /^\.TP/ { tp = 1; next }
		on && tp { gsub(/"/, "");
			print ($2 == "forward" ? "forward-" $3 : $3 == "variable" ? $2 "-variable" : $2); tp = 0 }' "$1" | sort -u
}

cli=$(getopt_names "$top/userspace/cmd/cli.c" long_opts | sort -u)
daemon=$( { daemon_keys "$top/userspace/cmd/daemon_cfg.c"; daemon_own "$top/userspace/cmd/daemon_cfg.c"; } | sort -u)
keys=$(daemon_keys "$top/userspace/cmd/daemon_cfg.c" | sort -u)
merge=$(getopt_names "$top/userspace/merge/merge.c" opts | sort -u)
model=$(getopt_names "$top/userspace/model/model.c" opts | sort -u)
export=$(getopt_names "$top/userspace/cmd/export_cmd.c" opts | sort -u)
diff=$(getopt_names "$top/userspace/cmd/diff_cmd.c" opts | sort -u)
spank=$(getopt_names "$top/userspace/spank/spank_plugin.c" options | sort -u)
spec=$(spec_statements "$top/userspace/core/spec.c" | sort -u)

for v in cli daemon keys merge model export diff spec spank; do
	[ -n "${!v}" ] || { echo "check-man-options: no $v options found in the sources (did the tables move?)"; exit 1; }
done

check memattr-bpf.8 option "$cli" "$(listed "$man/memattr-bpf.8" OPTIONS)"
check memattr-bpf-daemon.8 option "$daemon" "$(listed "$man/memattr-bpf-daemon.8" OPTIONS)"
check memattr-bpf.conf.5 key "$keys" "$(listed_keys "$man/memattr-bpf.conf.5")"
check memattr-bpf-merge.1 option "$merge" "$(listed "$man/memattr-bpf-merge.1" OPTIONS)"
check memattr-bpf-model.1 option "$model" "$(listed "$man/memattr-bpf-model.1" OPTIONS)"
check memattr-bpf-export.1 option "$export" "$(listed "$man/memattr-bpf-export.1" OPTIONS)"
check memattr-bpf-diff.1 option "$diff" "$(listed "$man/memattr-bpf-diff.1" OPTIONS)"
check memattr_spank.8 option "$spank" "$(listed "$man/memattr_spank.8" OPTIONS)"
check memattr-spec.5 statement "$spec" "$(listed_statements "$man/memattr-spec.5")"

[ $fail = 0 ] && echo "check-man-options: $(wc -w <<<"$cli $daemon $keys $merge $model $export $diff $spec $spank") options, keys and statements, each in its man page"
exit $fail
