#!/bin/bash
# The arm64 build (make ARCH=arm64 cross) on Debian's arm64 cloud kernel
# under qemu-system-aarch64 (software emulation): an initramfs with the
# tool, the arm64 libraries it links (from the :arm64 packages) and an
# arm64 busybox; tools/arm64/init loads the BPF object and traces one
# small program. Passes when the tool exits 0 there.
#   tools/arm64/vm-load.sh [6.1|6.12]
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
CACHE=${MATRIX_CACHE:-/var/cache/memattr-kernels}
VER=${1:-6.1}
VM_TIMEOUT=${VM_TIMEOUT:-300}
die() { echo "arm64 vm-load: $*" >&2; exit 1; }
[ -x build-arm64/memattr-bpf ] || die "build first: make ARCH=arm64 cross"
command -v qemu-system-aarch64 >/dev/null || die "apt-get install qemu-system-arm"

case $VER in
6.1) pattern='^linux-image-6\.1\.0-[0-9]+-cloud-arm64-unsigned$' ;;
6.12) pattern='^linux-image-6\.12\.[0-9]+\+deb12-cloud-arm64-unsigned$' ;;
*) die "unknown kernel $VER" ;;
esac
fetch() {	# package arch-suffix: prints its extracted directory
	local pkg=$1 dir=$CACHE/$1
	if [ ! -e "$dir/.done" ]; then
		mkdir -p "$CACHE/deb" && rm -rf "$dir"
		(cd "$CACHE/deb" && apt-get download -q "$pkg:arm64" >&2) || die "cannot download $pkg:arm64"
		dpkg-deb -x "$(ls "$CACHE"/deb/"${pkg}"_*_arm64.deb | tail -1)" "$dir"
		touch "$dir/.done"
	fi
	echo "$dir"
}
kpkg=$(apt-cache pkgnames linux-image-"$VER" 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
[ -n "$kpkg" ] || kpkg=$(ls "$CACHE" | grep -E "$pattern" | sort -V | tail -1 || true)
[ -n "$kpkg" ] || die "no arm64 kernel package for $VER (dpkg --add-architecture arm64; apt-get update)"
kdir=$(fetch "$kpkg")
bdir=$(fetch busybox-static)

WORK=$(mktemp -d /tmp/memattr-arm64vm.XXXXXX)
QEMU_PID=""
cleanup() {
	[ -z "$QEMU_PID" ] || { kill "$QEMU_PID" 2>/dev/null; wait "$QEMU_PID" 2>/dev/null; } || true
	rm -rf "$WORK"
}
trap cleanup EXIT
tree=$WORK/tree
mkdir -p "$tree"/{bin,proc,sys,dev,lib,usr/lib}
cp "$bdir/bin/busybox" "$tree/bin/busybox"
cp tools/arm64/init "$tree/init"
cp build-arm64/memattr-bpf "$tree/memattr-bpf"
cp -r uprobe_specs "$tree/uprobe_specs"
# The libraries the tool needs, and theirs: the arm64 packages' files.
todo=(build-arm64/memattr-bpf) seen=" "
while [ ${#todo[@]} -gt 0 ]; do
	f=${todo[0]}
	todo=("${todo[@]:1}")
	for n in $(aarch64-linux-gnu-readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[[ $seen == *" $n "* ]] && continue
		seen+="$n "
		p=$(ls /lib/aarch64-linux-gnu/"$n" /usr/lib/aarch64-linux-gnu/"$n" 2>/dev/null | head -1)
		[ -n "$p" ] || die "no arm64 $n (install its :arm64 package)"
		mkdir -p "$tree/$(dirname "$p")"
		cp -L "$p" "$tree/$p"
		todo+=("$p")
	done
done
cp -L /lib/ld-linux-aarch64.so.1 "$tree/lib/"
(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz"

log=$WORK/console.log
start=$EPOCHREALTIME
# One host thread for both vCPUs, as tools/kernel-matrix.sh says why.
qemu-system-aarch64 -accel tcg,thread=single -M virt -cpu max -smp 2 -m 1024 -nographic -no-reboot \
	-kernel "$(echo "$kdir"/boot/vmlinuz-*)" -initrd "$WORK/initrd.gz" \
	-append "console=ttyAMA0 panic=-1 quiet" </dev/null >"$log" 2>&1 &
QEMU_PID=$!
for _ in $(seq $((VM_TIMEOUT * 10))); do
	kill -0 "$QEMU_PID" 2>/dev/null || break
	sleep 0.1
done
cleanup_qemu=$QEMU_PID
kill "$cleanup_qemu" 2>/dev/null || true
wait "$cleanup_qemu" 2>/dev/null || true
QEMU_PID=""
status=$(grep -a -oE 'MEMATTR-VM-STATUS [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
tr -d '\r' <"$log" | grep -av '^\[ ' | sed -n '/arm64 guest:/,$p'
printf 'arm64 vm-load: %s: %s in %.0f s\n' "$kpkg" "$([ "$status" = 0 ] && echo pass || echo "FAIL (status ${status:-none})")" \
	"$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
[ "$status" = 0 ]
