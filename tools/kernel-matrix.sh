#!/bin/bash
# The kernel matrix: boot Debian's own kernels under qemu (software
# emulation: no KVM needed) with this machine's root file system shared
# read-only into the VM over virtio-fs, and run tools/vmtest/guest.sh there
# against the tree already built on the host (make, make workloads, the
# unit tests). One VM per kernel, one after the other, each bounded by
# VM_TIMEOUT seconds; on failure the VM's console log is printed.
#
#   tools/kernel-matrix.sh [KERNEL...]     KERNEL: 6.1 (Debian 12), 6.12
#                                          (bookworm-backports); default both
# As root. Kernels and initramfs are cached under MATRIX_CACHE
# (/var/cache/memattr-kernels): a rerun downloads nothing.
set -euo pipefail
# MATRIX_SCRIPT: the script the VM runs instead of tools/vmtest/guest.sh
# (e.g. one check: MATRIX_SCRIPT=tools/vmtest/vm_oom.sh); a relative path
# is the caller's. The VM runs it from its root: made absolute here.
if [ -n "${MATRIX_SCRIPT:-}" ]; then
	case $MATRIX_SCRIPT in /*) ;; *) MATRIX_SCRIPT=$PWD/$MATRIX_SCRIPT ;; esac
	[ -f "$MATRIX_SCRIPT" ] && [ -x "$MATRIX_SCRIPT" ] ||
		{ echo "kernel-matrix: MATRIX_SCRIPT $MATRIX_SCRIPT is no executable file" >&2; exit 1; }
fi
cd "$(dirname "$0")/.."
REPO=$(pwd)
CACHE=${MATRIX_CACHE:-/var/cache/memattr-kernels}
VM_TIMEOUT=${VM_TIMEOUT:-900}
VM_MEM=${VM_MEM:-2048}
VIRTIOFSD=${VIRTIOFSD:-/usr/lib/qemu/virtiofsd}
if [ $# -gt 0 ]; then KERNELS=("$@"); else KERNELS=(6.1 6.12); fi

die() { echo "kernel-matrix: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (virtiofsd shares the root file system; the VM loads BPF)"
# qemu (virtiofsd comes with it), the initramfs's busybox, cpio, and what
# reads the kernels' modules (xz, objcopy).
tools/install-deps.sh qemu-system-x86 busybox-static cpio xz-utils binutils >/dev/null
[ -x "$VIRTIOFSD" ] || die "no virtiofsd at $VIRTIOFSD (Debian 12: qemu-system-common)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
[ -x /bin/busybox ] || die "no /bin/busybox (apt-get install busybox-static)"
[ -x "$REPO/memattr-bpf" ] || die "build first: make && make workloads"

# Debian's package of each kernel of the matrix (the newest the archive has).
kernel_pattern() {
	case $1 in
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' ;;
	6.12) echo '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' ;;
	*) die "unknown kernel $1 (known: 6.1 6.12)" ;;
	esac
}

# bookworm-backports, from the mirror the machine's Debian sources name.
ensure_backports() {
	grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	local uri
	uri=$(grep -rhsE '^(URIs:|deb) ' /etc/apt/sources.list /etc/apt/sources.list.d/ |
		grep -oE 'https?://[^ ]*/debian/?( |$)' | head -1 | tr -d ' ')
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uri" >/etc/apt/sources.list.d/memattr-backports.sources
	apt-get update -qq
}

# Prints the extracted package directory of kernel $1, downloading it once.
fetch_kernel() {
	local pattern pkg dir
	pattern=$(kernel_pattern "$1")
	pkg=$(apt-cache pkgnames linux-image-"$1" 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
	if [ -z "$pkg" ] && [ "$1" != 6.1 ]; then
		ensure_backports >&2
		pkg=$(apt-cache pkgnames linux-image-"$1" 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
	fi
	if [ -z "$pkg" ]; then	# offline: what the cache holds
		pkg=$(ls "$CACHE" 2>/dev/null | grep -E "$pattern" | sort -V | tail -1 || true)
		[ -n "$pkg" ] || die "no package for kernel $1 in apt's lists nor in $CACHE"
	fi
	dir=$CACHE/$pkg
	if [ ! -e "$dir/.done" ]; then
		mkdir -p "$CACHE/deb" && rm -rf "$dir"
		(cd "$CACHE/deb" && apt-get download -q "$pkg" >&2) || die "cannot download $pkg"
		dpkg-deb -x "$CACHE"/deb/"${pkg}"_*.deb "$dir"
		touch "$dir/.done"
	fi
	echo "$dir"
}

# Modules the initramfs loads, each after those it depends on (read from
# each module's .modinfo: the package has no modules.dep, depmod makes it
# at install). MODS holds their files, relative to the modules directory.
MODS=()
module_file() {	# moddir name: its file, empty when built in
	find "$1" -name "$2.ko" -o -name "$2.ko.xz" | head -1
}
module_cat() {
	case $1 in *.xz) xz -dc "$1" ;; *) cat "$1" ;; esac
}
add_module() {	# moddir name
	local f d
	f=$(module_file "$1" "$2")
	[ -n "$f" ] || return 0
	[[ " ${MODS[*]} " == *" $f "* ]] && return 0
	for d in $(module_cat "$f" >"$WORK/mod.ko" && objcopy -O binary --only-section=.modinfo "$WORK/mod.ko" /dev/stdout |
		tr '\0' '\n' | sed -n 's/^depends=//p' | tr , ' '); do
		add_module "$1" "$d"
	done
	MODS+=("$f")
}

# Prints the initramfs of kernel directory $1 (busybox, the virtio-fs modules, /init).
make_initrd() {
	local kdir=$1 moddir f m out tree sum
	moddir=$(echo "$kdir"/lib/modules/*)
	sum=$(cat "$REPO/tools/vmtest/init" /bin/busybox | sha256sum | cut -c1-12)
	out=$kdir/initrd-$sum.cpio.gz
	[ -e "$out" ] && { echo "$out"; return 0; }
	tree=$(mktemp -d)
	mkdir -p "$tree"/{bin,proc,sys,dev,modules,newroot}
	cp /bin/busybox "$tree/bin/busybox"
	cp "$REPO/tools/vmtest/init" "$tree/init"
	MODS=()
	for m in virtio_pci virtiofs; do
		add_module "$moddir" "$m"
	done
	: >"$tree/modules.order"
	for f in "${MODS[@]}"; do
		m=$(basename "$f" .xz)
		module_cat "$f" >"$tree/modules/$m"
		echo "$m" >>"$tree/modules.order"
	done
	(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$tree"
	echo "$out"
}

# The VMs run the workloads as the host's tests do: as this user.
TEST_USER=${MEMATTR_TEST_USER:-memattr-test}
id -u "$TEST_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$TEST_USER" || id -u "$TEST_USER" >/dev/null

WORK=$(mktemp -d /tmp/memattr-matrix.XXXXXX)
RESULTS=${MATRIX_RESULTS:-/tmp/memattr-matrix-results}
QEMU_PID=""
VFSD_PID=""
stop_vm() {
	local p
	for p in $QEMU_PID $VFSD_PID; do
		kill "$p" 2>/dev/null || true
	done
	for p in $QEMU_PID $VFSD_PID; do
		wait "$p" 2>/dev/null || true
	done
	QEMU_PID=""
	VFSD_PID=""
}
cleanup() {
	stop_vm
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_vm NAME KDIR: boot, run the guest script, 0 when it said so.
run_vm() {
	local name=$1 kdir=$2 initrd kernel log sock rootro status start results
	kernel=$(echo "$kdir"/boot/vmlinuz-*)
	initrd=$(make_initrd "$kdir")
	log=$WORK/console-$name.log
	sock=$WORK/vfs-$name.sock
	rootro=$WORK/root-$name
	mkdir -p "$rootro"
	# The host's root file system, read-only on the host side too: a bind
	# mount in a mount namespace of virtiofsd's own.
	unshare -m --propagation private sh -c \
		'mount --bind / "$1" && mount -o remount,bind,ro "$1" && exec "$3" --socket-path="$2" -o source="$1" -o cache=always -o sandbox=chroot' \
		sh "$rootro" "$sock" "$VIRTIOFSD" >"$WORK/virtiofsd-$name.log" 2>&1 &
	VFSD_PID=$!
	# A writable directory for what a failed check leaves (MATRIX_RESULTS).
	results=$RESULTS/$name
	rm -rf "$results" && mkdir -p "$results"
	"$VIRTIOFSD" --socket-path="$sock.out" -o source="$results" -o cache=none -o sandbox=chroot \
		>"$WORK/virtiofsd-out-$name.log" 2>&1 &
	VFSD_PID="$VFSD_PID $!"
	for _ in $(seq 100); do [ -S "$sock" ] && [ -S "$sock.out" ] && break; sleep 0.05; done
	[ -S "$sock" ] && [ -S "$sock.out" ] || { cat "$WORK"/virtiofsd*-"$name".log; die "virtiofsd did not start"; }
	start=$EPOCHREALTIME
	# One host thread for both vCPUs: multi-threaded TCG (qemu 7.2) lets a
	# vCPU run a stale translation of kernel text the other vCPU patched.
	# Switching a static key (the page-fault tracepoint's, in exc_page_fault)
	# then leaves an int3 that no text_poke claims and the guest dies in
	# exc_int3; toggling that tracepoint through tracefs while the other
	# vCPU faults does it within seconds on 6.12 (and hangs 6.1), with no BPF.
	qemu-system-x86_64 -accel "${MATRIX_ACCEL:-tcg,thread=single}" -cpu max -smp 2 -m "$VM_MEM" -nographic -no-reboot \
		-object memory-backend-memfd,id=mem,size="${VM_MEM}M",share=on -numa node,memdev=mem \
		-chardev socket,id=vfs,path="$sock" -device vhost-user-fs-pci,chardev=vfs,tag=hostroot \
		-chardev socket,id=out,path="$sock.out" -device vhost-user-fs-pci,chardev=out,tag=results \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet loglevel=5 watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=120 ${MATRIX_UNIT:+MEMATTR_VM_UNIT=1} memattr.script=${MATRIX_SCRIPT:-$REPO/tools/vmtest/guest.sh}" \
		</dev/null >"$log" 2>&1 &
	QEMU_PID=$!
	local waited=0
	while kill -0 "$QEMU_PID" 2>/dev/null && [ "$waited" -lt "$((VM_TIMEOUT * 10))" ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	kill -0 "$QEMU_PID" 2>/dev/null && echo "kernel-matrix: $name: timed out after ${VM_TIMEOUT}s" >>"$log"
	stop_vm
	cp "$log" "$results/console.log"
	status=$(grep -a -oE 'MEMATTR-VM-STATUS [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
	# A kernel that complained while the tool ran failed, whatever the checks said
	# (up to the status line: the guest's init exits after it, which the kernel
	# reports as a panic that powers the VM off).
	if sed -n '/MEMATTR-VM-STATUS/q;p' "$log" |
		grep -aqE 'BUG:|Oops|WARNING: CPU|soft lockup|hung_task|rcu_sched detected stall|self-detected stall|Kernel panic'; then
		echo "kernel-matrix: $name: the kernel reported an error (console below)" >>"$log"
		status=${status:+kernel-error}
		status=${status:-none}
	fi
	printf 'kernel-matrix: %s (%s): %s in %.0f s\n' "$name" "$(basename "$kernel")" \
		"$([ "$status" = 0 ] && echo pass || echo "FAIL (status ${status:-none})")" \
		"$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
	if [ "$status" != 0 ] || [ -n "${MATRIX_VERBOSE:-}" ]; then
		[ -z "$(ls -A "$results")" ] || echo "kernel-matrix: $name: what the failed checks left is in $results"
		echo "---- console of $name ----"
		tr -d '\r' <"$log"
		echo "---- end of console of $name ----"
	fi
	[ "$status" = 0 ]
}

failed=()
for k in "${KERNELS[@]}"; do
	kdir=$(fetch_kernel "$k")
	# No second boot: a VM that hangs or panics is a bug to find (its console is above).
	run_vm "$k" "$kdir" || failed+=("$k")
done
[ ${#failed[@]} -eq 0 ] || die "failed on: ${failed[*]}"
echo "kernel-matrix: every kernel passed (${KERNELS[*]})"
