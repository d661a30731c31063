#!/bin/bash
# Prints a vmlinux.h for ARCH (arm64), made from the BTF of Debian's
# cloud kernel for that architecture (bookworm-backports' 6.12: new
# enough for every type the programs name; CO-RE relocates them to the
# kernel they load on), not from the build host's kernel. The kernel
# package is downloaded once into MATRIX_CACHE (/var/cache/memattr-kernels)
# and its BTF carved from its boot image.
#   tools/arm64/vmlinux-h.sh arm64 > build-arm64/vmlinux.h
set -euo pipefail
arch=${1:-arm64}
CACHE=${MATRIX_CACHE:-/var/cache/memattr-kernels}
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "vmlinux-h.sh: $*" >&2; exit 1; }

pattern="^linux-image-6\.12\.[0-9]+\+deb12-cloud-$arch-unsigned\$"
pkg=$(apt-cache pkgnames linux-image-6.12 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
[ -n "$pkg" ] || pkg=$(ls "$CACHE" 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
[ -n "$pkg" ] || die "no $pattern in apt's lists (bookworm-backports, dpkg --add-architecture $arch, apt-get update) nor in $CACHE"
dir=$CACHE/$pkg
if [ ! -e "$dir/.done" ]; then
	mkdir -p "$CACHE/deb" && rm -rf "$dir"
	(cd "$CACHE/deb" && apt-get download -q "$pkg:$arch" >&2) || die "cannot download $pkg:$arch"
	dpkg-deb -x "$CACHE"/deb/"${pkg}"_*_"$arch".deb "$dir"
	touch "$dir/.done"
fi
[ -s "$dir/btf" ] || "$here/btf-from-image.py" "$dir"/boot/vmlinuz-* "$dir/btf" >&2
bpftool btf dump file "$dir/btf" format c
