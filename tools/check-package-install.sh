#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Installs the Debian packages tools/check-package.sh built, the way a site
# does (apt-get install ./*.deb), runs the demo with the installed
# /usr/sbin/memattr-bpf (tools/demo.sh --bin), checks that systemd and man
# find what the packages put in place, then purges them and every package
# apt pulled in with them: the machine is left as it was found.
#   sudo tools/check-package-install.sh PKGDIR   (check-package.sh's OUTDIR)
# For CI's fresh root machine. On a machine where memattr-bpf is installed
# already (a package, or make install into /usr), it changes nothing: it
# says so and exits 0 (a skip), since purging would remove the owner's copy.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
pkgdir=$(realpath "${1:?usage: check-package-install.sh PKGDIR}")
fail=0
bad() { echo "check-package-install: FAIL: $*" >&2; fail=1; }
skip() { echo "check-package-install: SKIP: $*" >&2; exit 0; }

[ "$(id -u)" -eq 0 ] || { echo "check-package-install: must run as root" >&2; exit 1; }
arch=$(dpkg --print-architecture)
debs=("$pkgdir"/memattr-bpf_*_"$arch".deb "$pkgdir"/memattr-bpf-slurm_*_"$arch".deb)
for d in "${debs[@]}"; do
	[ -f "$d" ] || { echo "check-package-install: no $d (run tools/check-package.sh $pkgdir)" >&2; exit 1; }
done
for p in memattr-bpf memattr-bpf-slurm; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = not-installed ] || skip "package $p is on this machine already ($st)"
done
for f in /usr/sbin/memattr-bpf /etc/memattr-bpf /lib/systemd/system/memattr-bpf.service \
	 /usr/lib/memattr-bpf /usr/share/memattr-bpf; do
	[ ! -e "$f" ] || skip "$f exists (memattr-bpf installed by other means)"
done

# What apt may add besides ours (dependencies), to purge exactly those after.
before=$(mktemp /tmp/memattr-pkgs.XXXXXX)
dpkg-query -W -f='${db:Status-Status} ${Package}\n' | awk '$1 == "installed" { print $2 }' | sort >"$before"
restore() {
	local after added
	after=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' | awk '$1 != "not-installed" { print $2 }' | sort)
	added=$(comm -13 "$before" <(echo "$after") | tr '\n' ' ')
	if [ -n "${added// }" ]; then
		echo "check-package-install: purging $added"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $added >"$pkgdir/purge.log" 2>&1 ||
			{ echo "check-package-install: FAIL: apt-get purge (log: $pkgdir/purge.log)" >&2; fail=1; }
	fi
	rm -f "$before"
	for f in /usr/sbin/memattr-bpf /etc/memattr-bpf /lib/systemd/system/memattr-bpf.service; do
		[ ! -e "$f" ] || { echo "check-package-install: FAIL: $f left after the purge" >&2; fail=1; }
	done
}
trap 'restore; [ $fail = 0 ] || exit 1; echo "check-package-install: OK (installed, demo run, purged)"' EXIT

echo "check-package-install: apt-get install ${debs[*]}"
# Absolute paths: apt takes an argument with a slash for a file, not a package name.
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[@]}" \
	>"$pkgdir/install.log" 2>&1; then
	tail -20 "$pkgdir/install.log" >&2
	bad "apt-get install (log: $pkgdir/install.log)"
	exit 1
fi
ver=$(dpkg-query -W -f='${Version}' memattr-bpf)
echo "check-package-install: memattr-bpf $ver installed"

# What the packages put where the system looks for it.
[ -x /usr/sbin/memattr-bpf ] || bad "no /usr/sbin/memattr-bpf"
unit=/lib/systemd/system/memattr-bpf.service
[ -f "$unit" ] || bad "no $unit"
grep -q '^ExecStart=/usr/sbin/memattr-bpf daemon' "$unit" || bad "$unit: ExecStart is not /usr/sbin/memattr-bpf daemon"
if [ -d /run/systemd/system ]; then
	systemctl cat memattr-bpf.service >/dev/null || bad "systemctl does not know memattr-bpf.service"
	[ "$(systemctl is-enabled memattr-bpf.service 2>/dev/null || true)" != enabled ] ||
		bad "memattr-bpf.service enabled by the install (it must not be)"
	systemctl is-active --quiet memattr-bpf.service && bad "memattr-bpf.service started by the install"
fi
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify "$unit" >"$pkgdir/verify.log" 2>&1 || bad "systemd-analyze verify $unit: $(cat "$pkgdir/verify.log")"
fi
[ -f /etc/memattr-bpf/memattr-bpf.conf ] || bad "no /etc/memattr-bpf/memattr-bpf.conf"
for m in "$top"/docs/man/*.[1-8]; do
	n=${m##*/}
	where=$(man -w "${n##*.}" "${n%.*}" 2>/dev/null || true)
	[ "$where" = "/usr/share/man/man${n##*.}/$n.gz" ] || bad "man -w ${n##*.} ${n%.*}: '$where'"
done
man -w memattr-bpf >/dev/null 2>&1 || bad "man -w memattr-bpf finds nothing"

# The demo, with the installed binary and its installed specs.
out=$pkgdir/demo-out
rm -rf "$out"
if ! "$top/tools/demo.sh" --bin /usr/sbin/memattr-bpf "$out" >"$pkgdir/demo.log" 2>&1; then
	tail -20 "$pkgdir/demo.log" >&2
	bad "tools/demo.sh --bin /usr/sbin/memattr-bpf (log: $pkgdir/demo.log)"
else
	grep -q '^demo.sh: running /usr/sbin/memattr-bpf' "$pkgdir/demo.log" || bad "the demo did not run /usr/sbin/memattr-bpf"
	for r in 0 1 2 3; do
		[ -s "$out/rank-$r.csv" ] || bad "the demo wrote no $out/rank-$r.csv"
		grep -Eq "^ +$r +[0-9]+ +[0-9.]+ " "$pkgdir/demo.log" || bad "no peak row of rank $r in the demo's output"
	done
	[ -s "$out/summary.csv" ] && [ -s "$out/report.html" ] || bad "the demo wrote no summary.csv or report.html"
	# The installed specs name the MPI library: the demo's ranks have an mpi component.
	awk -F, 'NR > 1 && $4 == "mpi" && $5 > 0 { found = 1 } END { exit !found }' "$out/rank-0.csv" ||
		bad "rank 0 has no mpi component: the installed specs were not used?"
	echo "check-package-install: the demo ran from the package: $(grep -c . "$out/summary.csv") summary rows, report.html"
fi
