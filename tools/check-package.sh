#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Builds the Debian packages from a clean copy of the committed tree (git
# archive HEAD), runs lintian on them, checks their contents and runs the
# extracted binary's --version and --help. Installs nothing on this machine.
# Needs: dpkg-dev, debhelper, lintian and the Build-Depends of debian/control
# (dpkg-checkbuilddeps says which are missing), and /sys/kernel/btf/vmlinux or
# MEMATTR_VMLINUX_H=FILE. About 2 minutes on 2 cores (build ~90 s, lintian ~25 s).
#   tools/check-package.sh [OUTDIR]     (default: a new directory under /tmp)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$(mktemp -d /tmp/memattr-pkg.XXXXXX)}
fail=0
bad() { echo "check-package: FAIL: $*" >&2; fail=1; }

rm -rf "$out/src" && mkdir -p "$out/src"
git -C "$top" archive HEAD | tar -x -C "$out/src"
echo "check-package: building in $out/src"
start=$(date +%s)
if ! (cd "$out/src" && dpkg-buildpackage -b -us -uc -j2) > "$out/build.log" 2>&1; then
	tail -30 "$out/build.log" >&2
	echo "check-package: FAIL: dpkg-buildpackage (log: $out/build.log)" >&2
	exit 1
fi
echo "check-package: built in $(( $(date +%s) - start )) s"
ver=$(cd "$out/src" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
main=$out/memattr-bpf_${ver}_$arch.deb
slurm=$out/memattr-bpf-slurm_${ver}_$arch.deb
[ -f "$main" ] && [ -f "$slurm" ] || { echo "check-package: FAIL: no $main or $slurm" >&2; exit 1; }

# lintian: errors fail; warnings are listed (overrides in debian/*.lintian-overrides).
lintian --pedantic "$out"/memattr-bpf_"${ver}"_"$arch".changes > "$out/lintian.log" 2>&1 || true
grep -v '^running with root privileges' "$out/lintian.log" || true
if grep -q '^E:' "$out/lintian.log"; then bad "lintian errors ($out/lintian.log)"; fi

# Contents.
has() { dpkg-deb -c "$1" | awk '{print $6}' | grep -qx "./$2" || bad "$(basename "$1") lacks /$2"; }
has "$main" usr/sbin/memattr-bpf
for s in "$top"/uprobe_specs/*.spec; do has "$main" "usr/share/memattr-bpf/uprobe_specs/${s##*/}"; done
for m in "$top"/docs/man/*.[1-8]; do
	n=${m##*/}
	[ "$n" = memattr_spank.8 ] && pkg=$slurm || pkg=$main
	has "$pkg" "usr/share/man/man${n##*.}/$n.gz"
done
for d in user-guide attribution operations reliability; do	# the README's docs/ (dh_compress: .gz past 4 KiB)
	dpkg-deb -c "$main" | awk '{print $6}' | grep -qx "./usr/share/doc/memattr-bpf/docs/$d.md\(.gz\)\?" ||
		bad "$(basename "$main") lacks /usr/share/doc/memattr-bpf/docs/$d.md"
done
has "$main" lib/systemd/system/memattr-bpf.service
has "$main" etc/memattr-bpf/memattr-bpf.conf
has "$slurm" usr/lib/memattr-bpf/memattr_spank.so
has "$slurm" usr/share/doc/memattr-bpf-slurm/examples/plugstack-memattr.conf
dpkg-deb --ctrl-tarfile "$main" | tar -xO ./conffiles | grep -qx /etc/memattr-bpf/memattr-bpf.conf ||
	bad "/etc/memattr-bpf/memattr-bpf.conf is not a conffile"
# Not enabled on install: no "enable" outside the was-enabled branch.
dpkg-deb --ctrl-tarfile "$main" | tar -xO ./postinst | grep -q 'deb-systemd-helper --quiet was-enabled' ||
	bad "postinst: the unit's handling is not dh_installsystemd --no-enable's"
dpkg-deb --ctrl-tarfile "$main" | tar -xO ./postinst | grep -q 'systemctl.*start' &&
	bad "postinst starts the service"

# The extracted package: its binary, its paths, its unit.
root=$out/root && rm -rf "$root" && mkdir -p "$root"
dpkg-deb -x "$main" "$root" && dpkg-deb -x "$slurm" "$root"
"$root/usr/sbin/memattr-bpf" --version | grep -q "memattr-bpf $(echo "$ver" | sed 's/-[^-]*$//')" ||
	bad "--version does not say the package's upstream version"
"$root/usr/sbin/memattr-bpf" --help > /dev/null || bad "--help"
"$root/usr/sbin/memattr-bpf" daemon --help > /dev/null || bad "daemon --help"
grep -aq /usr/share/memattr-bpf/uprobe_specs "$root/usr/sbin/memattr-bpf" || bad "binary's spec dir is not /usr/share/..."
grep -aq /usr/sbin/memattr-bpf "$root/usr/lib/memattr-bpf/memattr_spank.so" || bad "plugin's memattr-bpf path is not /usr/sbin"
unit=$root/lib/systemd/system/memattr-bpf.service
grep -q '^ExecStart=/usr/sbin/memattr-bpf ' "$unit" || bad "unit's ExecStart is not /usr/sbin"
if command -v systemd-analyze > /dev/null; then
	systemd-analyze security --offline=yes --root="$root" memattr-bpf.service 2>&1 | tail -1
fi

[ $fail = 0 ] && echo "check-package: OK ($out)" || exit 1
