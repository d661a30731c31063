#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Validation on real applications nobody here wrote (issue 10): builds public
# MPI mini-apps from source directories you give it, runs each under
# memattr-bpf (launched under the tool, and attached late), and compares the
# tool's figures with what the kernel itself shows (/proc/PID/status VmHWM,
# /proc/PID/smaps per mapping), read by tools/validate/sampler.py beside
# every run. Prints a Markdown table and writes everything raw under a
# results directory it names.
#
#   sudo tools/validate/run.sh --lulesh DIR --hpccg DIR --cloverleaf DIR [--lammps] \
#        [--mpi openmpi|mpich|both] [--results DIR] [--repeat N] [--no-repeat]
#        [--modes launch,attach] [--attach-delay S] [--update-doc BENCHMARKS.md]
#        [--hold-every S] [--hold-for S]
#
#   --lulesh DIR      LULESH 2.0 sources (github.com/LLNL/LULESH)
#   --hpccg DIR       HPCCG sources (github.com/Mantevo/HPCCG)
#   --cloverleaf DIR  CloverLeaf_ref sources (github.com/UK-MAC/CloverLeaf_ref)
#   --lammps          also LAMMPS as Debian ships it (apt-get install lammps;
#                     /usr/bin/lmp over liblammps.so, built for Open MPI, so
#                     not run with MPICH): an application built by nobody
#                     here either, whose own code is in a shared library.
#                     Its `app` in the table is the tool's app plus
#                     lib:liblammps.so, and the library's mappings count as
#                     the binary's in the smaps yardstick
#                     (at least one of the four; the others are skipped)
#   --mpi M           openmpi, mpich or both (default: both when Debian's
#                     mpich is installed, else openmpi; a missing MPI that was
#                     asked for is an error)
#   --results DIR     where everything goes (default /tmp/memattr-validate-<UTC time>)
#   --repeat N        determinism: HPCCG, 2 ranks, launched, N times (default 10;
#                     first MPI only); --no-repeat skips it
#   --modes LIST      launch,attach (default both); sampled: launched under the
#                     tool (exact, as launch), the job held at a gate (gate.sh)
#                     until a second tool, --attribution sampled --pid <gate>,
#                     traces it: both see the ranks from their exec, so that
#                     both attributions of the same run can be compared (table.py:
#                     each component's largest error, as a share of `total`)
#   --hold-every S    --modes sampled: every S seconds stop every rank
#                     (SIGSTOP, tools/validate/hold.py) for --hold-for seconds
#                     (default 0.5), then SIGCONT; the windows go to the run's
#                     holds.csv, and table.py compares the two tools only on
#                     samples inside them (a stopped rank's memory cannot
#                     change: both tools see the same instant); each hold's
#                     resident mappings of every rank in hold_maps/. 0: never.
#                     Default: 1 for LULESH (its `total` moves 7-19% between
#                     samples, so the steady-`total` comparison finds nothing
#                     to compare), 0 for the others. The holds lengthen the
#                     run; the application's own times mean nothing then.
#   --attach-delay S  attach this long after every rank is running and holds
#                     its memory (default 1.5; see "The late attach" below)
#   --tool PATH       memattr-bpf binary (default: the repo's ./memattr-bpf)
#   --update-doc FILE also put the tables into FILE's "latest run" block
#                     (BENCHMARKS.md, section "Validation on real applications")
#   --overhead N      instead of the validation runs: what the tool costs these
#                     applications. N pairs per application and MPI at its
#                     larger rank count, each the job alone, then the job
#                     launched under the tool (alternating, so that drift of
#                     the machine falls on both); wall time of the whole job
#                     and the time the application reports for its own
#                     compute loop. With --update-doc: FILE's overhead block.
#   --overhead-under tool|daemon
#                     what the traced run of each pair runs under: tool (the
#                     default), `memattr-bpf -- mpirun ...`; daemon, the node
#                     service as a site leaves it on (`memattr-bpf daemon`,
#                     its defaults), started before the run and stopped after
#                     it, outside the timed part, the job carrying a batch
#                     job ID as under a scheduler (PBS_JOBID, which the
#                     daemon takes and neither launcher here acts on alone;
#                     Open MPI 4.1's mpirun crashes on FLUX_JOB_ID, SLURM_JOB_ID
#                     would make it launch through srun); the run fails
#                     unless the daemon wrote every rank's timeline.
#   --overhead-ranks larger|all
#                     --overhead at each application's larger rank count
#                     (default), or at every one (LULESH 1 and 8, the others
#                     2 and 4: on a 2-core host, 2 ranks = cores and 4 or 8
#                     oversubscribed)
#   --tool-args "ARGS" more arguments for the traced run's tool or daemon in
#                     --overhead runs (e.g. "--attribution sampled")
#
# Sizes (per rank: weak scaling, so every rank holds about the same):
#   HPCCG  128x64x128 rows per rank (~440 MiB), 2 and 4 ranks, 150 CG iterations
#          (64x64x64 ran 0.8-1.3 s with MPICH on 2 ranks here: a late attach met its end)
#   LULESH -s 30 (~30^3 elements per rank), 1 and 8 ranks (it needs a cube
#          number of ranks: 2 and 4 are not allowed); -i 200 on 1 rank, -i 30 on 8
#   CloverLeaf 640x640 cells split over the ranks, 120 steps, 2 and 4 ranks
#   LAMMPS Lennard-Jones melt, 4 x 20^3 atoms split over the ranks, 600 steps,
#          2 and 4 ranks
# Each run takes 3-15 s on 2 cores. Override with HPCCG_DIMS, LULESH_SIZE,
# LULESH_ITERS_1, LULESH_ITERS_8, CLOVER_CELLS, CLOVER_STEPS, LAMMPS_BOX,
# LAMMPS_STEPS.
#
# The late attach (--modes attach) must meet a job that still runs and
# already holds its memory; the tool's attach takes 1-15 s here (more ranks
# than cores leave it little CPU), and a job of the sizes above can end
# before it (LULESH, 8 ranks, MPICH: over 0.5 s before the tool was ready).
# So each attach run (tools/validate/attach_plan.py):
#  - waits, once every rank runs, until the ranks' VmRSS sum reaches 90% of
#    the largest the launch run of the same application, MPI and ranks saw
#    (at most 30 s), then --attach-delay: the tool attaches to memory
#    already held (without a launch run: the delay alone);
#  - gets a job long enough to outlive the tool's attach by twice
#    ATTACH_MARGIN (default 2 s): its steps (LULESH -i, CloverLeaf end_step,
#    LAMMPS run; never fewer than above) sized from the launch run's pace
#    (its time from ranks up to end, the application's own time for its
#    steps, when its memory was held) and the longest attach this
#    validation measured so far with the same MPI and ranks (else the
#    longest per rank with this MPI times the ranks: the tool gets less CPU
#    beside more ranks, e.g. LULESH with MPICH, 1 rank 1.4 s, 8 ranks
#    6-15 s; else ATTACH_EST_S, default 5 s);
#  - is judged after: the ranks must outlive the tool's "tracing" line by
#    ATTACH_MARGIN. A try that did not (or whose tool traced nothing) is
#    kept in attach_tries/ and run again, sized from its own pace and the
#    attach time it measured, with at least twice its steps, up to 3 tries.
#    HPCCG's iterations are fixed in its source (150): never resized, only
#    judged.
# The run's meta.txt (and validate.log) says what was done: attach_plan
# (the sizing), attach_steps, held_wait_s, held_at_attach_pct (the ranks'
# memory at the tool's start, as a share of their peak in the run),
# attach_tool_s, attach_outlived_s, attach_try. held_at_attach_pct is
# against the run's own peak, which a lengthened LULESH raises (its heap
# grows over the iterations): 72-82% on 8 ranks where the wait had seen
# the launch run's 90%.
#
# Jobs run as the unprivileged user memattr-test (MEMATTR_TEST_USER), the tool
# as root, as on a real node: launched as `memattr-bpf --output D -- mpirun ...`
# with sudo's environment (SUDO_UID: the tool runs the job as that user), or
# attached late as `memattr-bpf --output D --job <launcher pid>`.
#
# Exit status: 0 when every build and run succeeded; 1 when any failed (every
# failure is listed at the end and marked in the table; the other runs still
# go on); 2 for a usage error. Only processes this script started are ever
# signalled (pid + start time, tools/lib/pidtrack.sh).

set -uo pipefail
ORIG_ARGS=("$@")

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/pidtrack.sh
source "$REPO/tools/lib/pidtrack.sh"
source "$REPO/tools/lib/detach.sh"
source "$REPO/tools/lib/clover_deck.sh"
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

usage() { sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "validate: $*" >&2; exit 2; }

SRC_LULESH="" SRC_HPCCG="" SRC_CLOVER="" LAMMPS=""
TOOL_ARGS=()
MPIS="" RES="" REPEAT=10 MODES="launch,attach" ATTACH_DELAY=1.5 DOC="" OVERHEAD=0 OVERHEAD_UNDER=tool OVERHEAD_RANKS=larger
HOLD_EVERY="" HOLD_FOR=0.5
TOOL=${MEMATTR_BIN:-$REPO/memattr-bpf}
TEST_USER=${MEMATTR_TEST_USER:-memattr-test}
while [ $# -gt 0 ]; do
	case $1 in
	--lulesh) SRC_LULESH=${2:?}; shift 2 ;;
	--hpccg) SRC_HPCCG=${2:?}; shift 2 ;;
	--cloverleaf) SRC_CLOVER=${2:?}; shift 2 ;;
	--lammps) LAMMPS=$(readlink -f /usr/bin/lmp 2>/dev/null || true); [ -n "$LAMMPS" ] || LAMMPS=missing; shift ;;
	--mpi) MPIS=${2:?}; shift 2 ;;
	--results) RES=${2:?}; shift 2 ;;
	--repeat) REPEAT=${2:?}; shift 2 ;;
	--no-repeat) REPEAT=0; shift ;;
	--modes) MODES=${2:?}; shift 2 ;;
	--attach-delay) ATTACH_DELAY=${2:?}; shift 2 ;;
	--hold-every) HOLD_EVERY=${2:?}; shift 2 ;;
	--hold-for) HOLD_FOR=${2:?}; shift 2 ;;
	--tool) TOOL=${2:?}; shift 2 ;;
	--update-doc) DOC=${2:?}; shift 2 ;;
	--overhead) OVERHEAD=${2:?}; shift 2 ;;
	--overhead-ranks) OVERHEAD_RANKS=${2:?}; shift 2 ;;
	--overhead-under) OVERHEAD_UNDER=${2:?}; shift 2 ;;
	--tool-args) read -r -a TOOL_ARGS <<<"${2?}"; shift 2 ;;
	-h | --help) usage ;;
	*) echo "validate: unknown argument '$1'" >&2; usage ;;
	esac
done

HPCCG_DIMS=${HPCCG_DIMS:-128 64 128}
LULESH_SIZE=${LULESH_SIZE:-30}
LULESH_ITERS_1=${LULESH_ITERS_1:-200}
LULESH_ITERS_8=${LULESH_ITERS_8:-30}
CLOVER_CELLS=${CLOVER_CELLS:-640}
CLOVER_STEPS=${CLOVER_STEPS:-120}
LAMMPS_BOX=${LAMMPS_BOX:-20}
LAMMPS_STEPS=${LAMMPS_STEPS:-600}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}	# seconds; a run past it is stopped and failed
ATTACH_MARGIN=${ATTACH_MARGIN:-2}	# seconds the job must outlive the tool's attach
ATTACH_EST_S=${ATTACH_EST_S:-5}	# the tool's attach time before one was measured
ATTACH_TRIES=3

[ "$(id -u)" -eq 0 ] || die "must run as root (the tool loads BPF programs; jobs run as $TEST_USER)"
[ -n "$SRC_LULESH$SRC_HPCCG$SRC_CLOVER$LAMMPS" ] || die "give at least one of --lulesh, --hpccg, --cloverleaf, --lammps"
[ -z "$LAMMPS" ] || [ -x "$LAMMPS" ] || die "--lammps: no /usr/bin/lmp (apt-get install lammps: Debian's build, for Open MPI)"
for d in "$SRC_LULESH" "$SRC_HPCCG" "$SRC_CLOVER"; do
	[ -z "$d" ] || [ -d "$d" ] || die "no source directory $d"
done
[ -z "$SRC_LULESH" ] || [ -f "$SRC_LULESH/lulesh.cc" ] || die "$SRC_LULESH has no lulesh.cc"
[ -z "$SRC_HPCCG" ] || [ -f "$SRC_HPCCG/HPCCG.cpp" ] || die "$SRC_HPCCG has no HPCCG.cpp"
[ -z "$SRC_CLOVER" ] || [ -f "$SRC_CLOVER/clover_leaf.f90" ] || die "$SRC_CLOVER has no clover_leaf.f90"
[ -x "$TOOL" ] || die "no tool binary at $TOOL (run make)"
[[ $OVERHEAD =~ ^[0-9]+$ ]] || die "--overhead wants a number of pairs"
case $OVERHEAD_RANKS in larger | all) ;; *) die "--overhead-ranks: '$OVERHEAD_RANKS' is not larger or all" ;; esac
case $OVERHEAD_UNDER in tool | daemon) ;; *) die "--overhead-under: tool or daemon" ;; esac
DOC_BLOCK="tools/validate/run.sh: latest run begins"
[ "$OVERHEAD" -gt 0 ] && DOC_BLOCK="tools/validate/run.sh --overhead: latest run begins"
[ "$OVERHEAD" -gt 0 ] && [ "$OVERHEAD_UNDER" = daemon ] &&
	DOC_BLOCK="tools/validate/run.sh --overhead-under daemon: latest run begins"
[ -z "$DOC" ] || grep -q "$DOC_BLOCK" "$DOC" 2>/dev/null ||
	die "--update-doc: $DOC has no '$DOC_BLOCK' block (see BENCHMARKS.md)"
id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (tests/integration creates it: useradd -m $TEST_USER)"
for m_ in ${MODES//,/ }; do
	case $m_ in launch | attach | sampled) ;; *) die "--modes: a list of launch, attach, sampled" ;; esac
done
[[ $REPEAT =~ ^[0-9]+$ ]] || die "--repeat wants a number"
[[ $ATTACH_DELAY =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--attach-delay wants seconds"
[ -z "$HOLD_EVERY" ] || [[ $HOLD_EVERY =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--hold-every wants seconds"
[[ $HOLD_FOR =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--hold-for wants seconds"
[ -z "$HOLD_EVERY" ] || awk -v e="$HOLD_EVERY" -v h="$HOLD_FOR" 'BEGIN { exit !(e == 0 || (h > 0 && h < e)) }' ||
	die "--hold-for must be above 0 and below --hold-every"

have_mpi() {	# the compiler wrappers and the launcher of one MPI
	local m=$1
	command -v "mpicxx.$m" >/dev/null && command -v "mpif90.$m" >/dev/null &&
		command -v "mpicc.$m" >/dev/null && command -v "mpirun.$m" >/dev/null
}
if [ -z "$MPIS" ]; then
	MPIS=openmpi
	if have_mpi mpich; then MPIS="openmpi mpich"; else
		echo "validate: MPICH not installed (no mpicc.mpich): Open MPI only" >&2
	fi
elif [ "$MPIS" = both ]; then
	MPIS="openmpi mpich"
fi
for m in $MPIS; do
	case $m in openmpi | mpich) ;; *) die "--mpi: openmpi, mpich or both" ;; esac
	have_mpi "$m" || die "$m asked for but its wrappers (mpicxx.$m, mpif90.$m, mpirun.$m) are not installed"
done

RES=${RES:-/tmp/memattr-validate-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$RES" || die "cannot create $RES"
RES=$(cd "$RES" && pwd)
# The test user must reach the binaries and its run directories.
chmod 755 "$RES"
T_START=$EPOCHREALTIME
FAILURES=()
LOG=$RES/validate.log
log() { printf '[validate %s] %s\n' "$(date +%T)" "$*" | tee -a "$LOG" >&2; }
fail_note() { FAILURES+=("$1"); log "FAILED: $1"; }
mono_now() { "$PY" -c 'import time; print(f"{time.monotonic():.6f}")'; }
elapsed_since() { awk -v a="$1" -v b="$EPOCHREALTIME" -v l="$2" 'BEGIN { exit !(b - a >= l) }'; }

cleanup() {
	set +e
	if [ ${#TRACKED[@]} -gt 0 ] && any_tracked_running; then
		log "stopping what this script started and is still running"
		signal_tracked INT	# the tool flushes and detaches on SIGINT
		for _ in $(seq 60); do any_tracked_running || break; sleep 0.1; done
		any_tracked_running && signal_tracked KILL
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

TEST_UID=$(id -u "$TEST_USER")
TEST_GID=$(id -g "$TEST_USER")
# What sudo leaves the tool (env_reset) plus SUDO_*: `-- CMD` then runs CMD
# as the test user, the path a user takes with `sudo memattr-bpf -- mpirun`.
# (env -i --chdir=DIR "${SUDO_VARS[@]}" tool ...)
SUDO_VARS=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	HOME=/root USER=root LOGNAME=root SUDO_USER="$TEST_USER"
	SUDO_UID="$TEST_UID" SUDO_GID="$TEST_GID")
USER_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
[ -d "$USER_HOME" ] || USER_HOME=/tmp
# (runuser -u USER -- env -i --chdir=DIR "${USER_VARS[@]}" cmd ...)
USER_VARS=(PATH=/usr/local/bin:/usr/bin:/bin HOME="$USER_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER")

TOOL_COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
TOOL_DIRTY=$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null | head -1)
# The run uses a copy of the binary: a rebuild in the repo during the run
# must not change what is measured.
# The specs travel with it: the tool looks for uprobe_specs/ next to its
# binary (else the installed ones), and this run must use the repo's.
mkdir -p "$RES/bin"
cp "$TOOL" "$RES/bin/memattr-bpf"
rm -rf "$RES/bin/uprobe_specs"
cp -r "$(dirname "$TOOL")/uprobe_specs" "$RES/bin/uprobe_specs" 2>/dev/null ||
	cp -r "$REPO/uprobe_specs" "$RES/bin/uprobe_specs" || die "no uprobe_specs/ next to $TOOL nor in $REPO"
TOOL_RUN=$RES/bin/memattr-bpf
cp "$HERE/gate.sh" "$RES/bin/gate.sh"
GATE=$RES/bin/gate.sh
{
	echo "when=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "tool_commit=$TOOL_COMMIT${TOOL_DIRTY:+ (work tree has uncommitted changes)}"
	echo "tool_binary=$TOOL sha256=$(sha256sum "$TOOL" | cut -c1-16)"
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "overhead_under=$OVERHEAD_UNDER"
	echo "tool_args=${TOOL_ARGS[*]}"
	echo "user=$TEST_USER"
	echo "mpis=$MPIS"
	for m in $MPIS; do
		case $m in
		openmpi) echo "openmpi_version=$(dpkg-query -W -f '${Version}' libopenmpi3 2>/dev/null || mpirun.openmpi --version | head -1)" ;;
		mpich) echo "mpich_version=$(dpkg-query -W -f '${Version}' libmpich12 2>/dev/null || mpirun.mpich --version | head -1)" ;;
		esac
	done
	for a in lulesh hpccg cloverleaf; do
		case $a in lulesh) d=$SRC_LULESH ;; hpccg) d=$SRC_HPCCG ;; cloverleaf) d=$SRC_CLOVER ;; esac
		[ -n "$d" ] || continue
		echo "src_$a=$d"
		echo "commit_$a=$(git -C "$d" rev-parse HEAD 2>/dev/null || echo "unknown (not a git work tree)")"
		# A checkout made with --git-dir/--work-tree has no .git: the content
		# hash still tells whether two runs built the same sources.
		echo "content_sha256_$a=$(cd "$d" && find . -type f ! -path './.git/*' -print0 | sort -z |
			xargs -0 sha256sum | sha256sum | cut -c1-16)"
	done
	echo "hpccg_dims=$HPCCG_DIMS"
	echo "lulesh_size=$LULESH_SIZE lulesh_iters_1=$LULESH_ITERS_1 lulesh_iters_8=$LULESH_ITERS_8"
	echo "clover_cells=$CLOVER_CELLS clover_steps=$CLOVER_STEPS"
	[ -z "$LAMMPS" ] || echo "lammps=$LAMMPS ($(dpkg-query -W -f '${Version}' lammps 2>/dev/null)) lammps_box=$LAMMPS_BOX lammps_steps=$LAMMPS_STEPS"
	echo "attach_delay_s=$ATTACH_DELAY attach_margin_s=$ATTACH_MARGIN attach_est_s=$ATTACH_EST_S"
	echo "hold_every_s=${HOLD_EVERY:-1 for lulesh, 0 for the others} hold_for_s=$HOLD_FOR"
	echo "command=$0 $(printf '%q ' "${ORIG_ARGS[@]}")"
} >"$RES/meta.txt" 2>/dev/null
log "results go to $RES (tool $TOOL_COMMIT; MPIs: $MPIS)"

# ---------------------------------------------------------------- builds
# Out of tree: HPCCG and LULESH compile straight from the source directory
# into the scratch dir; CloverLeaf's Makefile builds in its own directory, so
# it gets a copy of the sources. No OpenMP (threads would blur what a rank
# holds on 2 cores), the projects' usual optimisation, -g as users build.
build_app() {	# APP MPI -> prints the binary path; log in $RES/build/MPI/APP.log
	local app=$1 m=$2 b=$RES/build/$2/$1
	rm -rf "$b"
	mkdir -p "$b"
	local bl=$b.log
	case $app in
	hpccg)
		"mpicxx.$m" -O3 -g -DUSING_MPI -I"$SRC_HPCCG" "$SRC_HPCCG"/*.cpp -o "$b/test_HPCCG" >"$bl" 2>&1 &&
			echo "$b/test_HPCCG" ;;
	lulesh)
		"mpicxx.$m" -O3 -g -DUSE_MPI=1 -I"$SRC_LULESH" \
			"$SRC_LULESH"/lulesh.cc "$SRC_LULESH"/lulesh-comm.cc "$SRC_LULESH"/lulesh-viz.cc \
			"$SRC_LULESH"/lulesh-util.cc "$SRC_LULESH"/lulesh-init.cc -lm -o "$b/lulesh2.0" >"$bl" 2>&1 &&
			echo "$b/lulesh2.0" ;;
	lammps)
		# Debian's build, not ours: nothing to compile.
		echo "$LAMMPS" ;;
	cloverleaf)
		(cd "$SRC_CLOVER" && tar --exclude=.git -cf - .) | (cd "$b" && tar -xf -) &&
			make -C "$b" -j2 COMPILER=GNU OMP= MPI_COMPILER="mpif90.$m" C_MPI_COMPILER="mpicc.$m" \
				clover_leaf >"$bl" 2>&1 &&
			echo "$b/clover_leaf" ;;
	esac
}

# app_libs EXE OUT: the libraries the program maps for itself, not for MPI:
# the closure of its direct dependencies (readelf NEEDED) other than the MPI
# libraries. The sampler counts every other shared object a rank maps as
# MPI's (its plugins and what they load); this is the yardstick for `mpi`.
is_mpi_lib() {	# NAME: one of the MPI libraries themselves
	# libmpi* also matches libmpich*, libmpicxx*, libmpifort*, libmpi_mpifh*, ...
	case $1 in libmpi* | libopen-rte* | libopen-pal* | libmpl* | libpmpi*) return 0 ;; esac
	return 1
}

app_libs() {
	local exe=$1 out=$2 n p
	local -A where=()
	while read -r n p; do where[$n]=$p; done < <(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
	: >"$out"
	for n in $(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		is_mpi_lib "$n" && continue
		p=${where[$n]:-}
		[ -n "$p" ] || continue
		readlink -f "$p" >>"$out"
		# A library that links MPI itself (LAMMPS's) does not make MPI the program's.
		ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r n p; do
			is_mpi_lib "$n" || readlink -f "$p"
		done >>"$out"
	done
	sort -u -o "$out" "$out"
	[ -s "$out" ]
}

declare -A BIN=()
APPS=()
[ -n "$SRC_HPCCG" ] && APPS+=(hpccg)
[ -n "$SRC_LULESH" ] && APPS+=(lulesh)
[ -n "$SRC_CLOVER" ] && APPS+=(cloverleaf)
[ -n "$LAMMPS" ] && APPS+=(lammps)

# runs_with APP MPI: whether APP runs with MPI here. Debian builds LAMMPS
# for Open MPI only.
runs_with() {
	[ "$1" != lammps ] || [ "$2" = openmpi ]
}

# app_code_lib APP: the library that holds the application's own code, when it
# is not in the executable (LAMMPS: /usr/bin/lmp is a stub over
# liblammps.so); app_components APP: the tool components its memory is in.
app_code_lib() {
	case $1 in lammps) ldd "$LAMMPS" | awk '$1 ~ /^liblammps\.so/ { print $3; exit }' | xargs -r readlink -f ;; esac
}
app_components() {
	case $1 in lammps) echo "app,lib:liblammps.so" ;; *) echo "app" ;; esac
}

for m in $MPIS; do
	for a in "${APPS[@]}"; do
		runs_with "$a" "$m" || { log "$a: not run with $m (Debian builds it for Open MPI only)"; continue; }
		t0=$EPOCHREALTIME
		if exe=$(build_app "$a" "$m") && [ -x "$exe" ]; then
			BIN[$a.$m]=$exe
			app_libs "$exe" "$RES/build/$m/$a.libs" ||
				fail_note "cannot list the libraries of $exe (ldd/readelf)"
			log "built $a with $m in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')s: $exe"
		else
			fail_note "build $a with $m (log: $RES/build/$m/$a.log; last lines: $(tail -3 "$RES/build/$m/$a.log" 2>/dev/null | tr '\n' ' '))"
		fi
	done
done
chmod -R a+rX "$RES/build" "$RES/bin"

# ---------------------------------------------------------------- runs
ranks_for() {	# APP -> rank counts
	case $1 in lulesh) echo "1 8" ;; *) echo "2 4" ;; esac
}

# steps_of APP NP: the application's steps (time steps or iterations) at
# NP ranks, which only lengthen its run: what a rank holds does not depend
# on them. Empty for HPCCG, whose 150 iterations are fixed in its source.
steps_of() {
	case $1 in
	lulesh) if [ "$2" -gt 1 ]; then echo "$LULESH_ITERS_8"; else echo "$LULESH_ITERS_1"; fi ;;
	cloverleaf) echo "$CLOVER_STEPS" ;;
	lammps) echo "$LAMMPS_STEPS" ;;
	esac
}

# app_args APP NP WORKDIR [STEPS]: the application's arguments (and its
# input file), with STEPS steps (default: steps_of).
app_args() {
	local app=$1 np=$2 w=$3 steps=${4:-$(steps_of "$1" "$2")}
	case $app in
	hpccg) echo "$HPCCG_DIMS" ;;
	lulesh) echo "-s $LULESH_SIZE -i $steps" ;;
	cloverleaf)
		# CloverLeaf reads clover.in from its working directory (the
		# project's own deck with a smaller mesh and fewer steps).
		clover_deck "$w/clover.in" "$CLOVER_CELLS" "$steps" "$TEST_USER"
		echo "" ;;
	lammps)
		# The Lennard-Jones melt of LAMMPS's own examples (bench/in.lj), on a
		# box of 4 x 20^3 atoms: neighbour lists rebuilt every 20 steps.
		cat >"$w/in.lj" <<-EOF
			units		lj
			atom_style	atomic
			lattice		fcc 0.8442
			region		box block 0 $LAMMPS_BOX 0 $LAMMPS_BOX 0 $LAMMPS_BOX
			create_box	1 box
			create_atoms	1 box
			mass		1 1.0
			velocity	all create 3.0 87287 loop geom
			pair_style	lj/cut 2.5
			pair_coeff	1 1 1.0 1.0 2.5
			neighbor	0.3 bin
			neigh_modify	every 20 delay 0 check no
			fix		1 all nve
			thermo		100
			run		$steps
		EOF
		chown "$TEST_USER" "$w/in.lj"
		echo "-in in.lj -log none" ;;
	esac
}

# The application says it finished properly (besides its exit status, which
# a late-attached tool does not see).
app_ok() {	# APP RUNDIR
	case $1 in
	hpccg) grep -q "Final residual" "$2/job.out" ;;
	lulesh) grep -q "Run completed" "$2/job.out" ;;
	cloverleaf) grep -q "Calculation complete" "$2/work/clover.out" 2>/dev/null ;;
	lammps) grep -q "^Total wall time" "$2/job.out" ;;
	esac
}

launcher() {	# MPI NP -> the launch command as words
	case $1 in
	openmpi) echo "mpirun.openmpi --oversubscribe -np $2" ;;
	mpich) echo "mpirun.mpich -np $2" ;;
	esac
}

# wait_gone PID TIMEOUT: 0 once PID has exited (or is a zombie), 1 on timeout.
wait_gone() {
	local t0=$EPOCHREALTIME
	while pid_running "$1"; do
		elapsed_since "$t0" "$2" && return 1
		sleep 0.05
	done
	return 0
}

# count_ranks ROOT EXE: processes below ROOT running EXE.
count_ranks() {
	local n=0 c
	for c in $(descendants "$1"); do
		[ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$2" ] && n=$((n + 1))
	done
	echo "$n"
}

# find_launcher ROOT NAME TIMEOUT: the first process below ROOT running the
# MPI's launcher binary (mpirun.openmpi is orterun, mpirun.mpich is
# mpiexec.hydra), found by its executable, never by name.
find_launcher() {
	local lbin c t0=$EPOCHREALTIME
	lbin=$(readlink -f "$(command -v "$2")")
	while pid_running "$1" && ! elapsed_since "$t0" "$3"; do
		for c in $(descendants "$1"); do
			[ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$lbin" ] && { echo "$c"; return 0; }
		done
		sleep 0.02
	done
	return 1
}

# find_gate ROOT TIMEOUT: the gate.sh shell below ROOT (--modes sampled).
find_gate() {
	local c t0=$EPOCHREALTIME
	while pid_running "$1" && ! elapsed_since "$t0" "$2"; do
		for c in $(descendants "$1"); do
			tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q "^/bin/sh $GATE " &&
				{ echo "$c"; return 0; }
		done
		sleep 0.02
	done
	return 1
}

# hold_every APP: seconds between holds of a sampled run (--hold-every), 0: none.
hold_every() {
	if [ -n "$HOLD_EVERY" ]; then echo "$HOLD_EVERY"
	elif [ "$1" = lulesh ]; then echo 1
	else echo 0; fi
}

# stop_ours PID: SIGINT (the tool flushes and detaches), then SIGKILL.
stop_ours() {
	is_ours_running "$1" || return 0
	kill -INT "$1" 2>/dev/null
	wait_gone "$1" 15 || { is_ours_running "$1" && kill -KILL "$1" 2>/dev/null; }
}

# run_one APP MPI NP MODE TAG: one run; its files in $RES/runs/TAG.
# user_outdir DIR: under sudo the tool makes its output as the user, in a
# directory the user can write: the run's own directories are root's.
user_outdir() {
	mkdir -p "$1" && chown "$TEST_USER" "$1"
}

run_one() {
	local app=$1 m=$2 np=$3 mode=$4 tag=$5
	local exe=${BIN[$app.$m]:-}
	local d=$RES/runs/$tag
	[ -n "$exe" ] || { fail_note "$tag: not run ($app did not build with $m)"; return; }
	rm -rf "$d"
	mkdir -p "$d/work"
	chown "$TEST_USER" "$d/work"
	chmod 755 "$d"
	local args
	# An attach run's steps come from run_attach (RUN_STEPS), the others' from steps_of.
	args=$(app_args "$app" "$np" "$d/work" "$([ "$mode" = attach ] && echo "$RUN_STEPS")")
	local -a cmd
	read -r -a cmd <<<"$(launcher "$m" "$np") $exe $args"
	local t0=$EPOCHREALTIME tool_pid="" job_pid="" sampler_pid rc_tool=0 rc_job=0 status=ok why=""
	local -a code=()
	local lib
	lib=$(app_code_lib "$app")
	[ -z "$lib" ] || code=(--app-code "$lib")
	{
		echo "app=$app"; echo "mpi=$m"; echo "np=$np"; echo "mode=$mode"; echo "exe=$exe"
		echo "app_components=$(app_components "$app")"
	} >"$d/meta.txt"
	if [ "$mode" = launch ] || [ "$mode" = sampled ]; then
		user_outdir "$d/tool"
		local -a run_cmd=("${cmd[@]}")
		# sampled: the job waits at a gate (a shell that execs the launcher
		# once $d/work/go exists) until the sampled tool traces the gate, so
		# that both tools see the ranks from their exec. Attached to a job
		# already running, the sampled tool would infer the owners of what
		# the ranks held then (the attach inference), and the comparison
		# would measure that, not the sampled attribution.
		[ "$mode" = sampled ] && run_cmd=(/bin/sh "$GATE" "$d/work/go" "${cmd[@]}")
		echo "command=cd $d/work && sudo memattr-bpf --output $d/tool -- ${run_cmd[*]}" >>"$d/meta.txt"
		env -i --chdir="$d/work" "${SUDO_VARS[@]}" "$TOOL_RUN" --output "$d/tool" -- "${run_cmd[@]}" \
			>"$d/job.out" 2>"$d/tool.err" &
		tool_pid=$!
		track_pid "$tool_pid"
		local s_pid="" rc_s_tool=0 gate=""
		if [ "$mode" = sampled ]; then
			gate=$(find_gate "$tool_pid" 30) && track_pid "$gate"
		fi
		if [ -n "$gate" ]; then
			user_outdir "$d/tool_sampled"
			echo "sampled_command=sudo memattr-bpf --attribution sampled --output $d/tool_sampled --pid <gate pid> --ready-fd 3, the job let go once it is ready" >>"$d/meta.txt"
			"$TOOL_RUN" --attribution sampled --output "$d/tool_sampled" --pid "$gate" --ready-fd 3 \
				3>"$d/sampled.ready" >"$d/sampled.out" 2>"$d/sampled.err" &
			s_pid=$!
			track_pid "$s_pid"
			local tr=$EPOCHREALTIME
			while [ ! -s "$d/sampled.ready" ] && pid_running "$s_pid" && ! elapsed_since "$tr" 60; do
				sleep 0.02
			done
			[ -s "$d/sampled.ready" ] || { status=fail; why+="; the sampled tool never said it traced the job"; }
			touch "$d/work/go"
		elif [ "$mode" = sampled ]; then
			touch "$d/work/go"
		fi
		"$PY" "$HERE/sampler.py" --root "$tool_pid" --exe "$exe" --np "$np" --out "$d/sampler" \
			--app-libs "$RES/build/$m/$app.libs" ${code[@]+"${code[@]}"} \
			2>"$d/sampler.err" &
		sampler_pid=$!
		track_pid "$sampler_pid"
		local hold_pid="" every
		every=$(hold_every "$app")
		if [ "$mode" = sampled ] && [ "$every" != 0 ]; then
			echo "holds=every ${every}s the ranks stopped for ${HOLD_FOR}s (hold.py; windows in holds.csv)" >>"$d/meta.txt"
			"$PY" "$HERE/hold.py" --root "$tool_pid" --exe "$exe" --np "$np" --out "$d/holds.csv" \
				--every "$every" --hold "$HOLD_FOR" --maps-dir "$d/hold_maps" 2>"$d/hold.err" &
			hold_pid=$!
			track_pid "$hold_pid"
		fi
		# mpirun too, so that an interrupted run stops the job as well.
		local lp
		lp=$(find_launcher "$tool_pid" "${cmd[0]}" 30) && track_pid "$lp"
		if ! wait_gone "$tool_pid" "$RUN_TIMEOUT"; then
			status=fail why="still running after ${RUN_TIMEOUT}s"
			stop_ours "$tool_pid"
		fi
		wait "$tool_pid"; rc_tool=$?
		if [ -n "$s_pid" ]; then
			wait_gone "$s_pid" 30 || { status=fail; why+="; the sampled tool still ran 30 s after the job"; stop_ours "$s_pid"; }
			wait "$s_pid" || rc_s_tool=$?
			[ "$rc_s_tool" -eq 0 ] || { status=fail; why+="; sampled tool exit status $rc_s_tool"; }
		elif [ "$mode" = sampled ]; then
			status=fail why+="; no gate to attach the sampled tool to"
		fi
		if [ -n "$hold_pid" ]; then
			# It ends once the ranks are gone; SIGTERM continues any it holds.
			wait_gone "$hold_pid" 10 || stop_ours "$hold_pid"
			wait "$hold_pid" || { status=fail; why+="; hold.py failed: $(tail -1 "$d/hold.err")"; }
		fi
		grep -m1 '^memattr-bpf: tracing' "$d/tool.err" >/dev/null ||
			{ status=fail; why+="; tool never said it was tracing"; }
	else
		local held_txt=""
		[ "$READY_KB" -gt 0 ] && held_txt=" and their VmRSS sum reaches $READY_KB KiB (at most 30 s)"
		echo "command=(cd $d/work && ${cmd[*]}) as $TEST_USER; after every rank runs$held_txt + ${ATTACH_DELAY}s: sudo memattr-bpf --output $d/tool --job <launcher pid>" >>"$d/meta.txt"
		{ echo "attach_try=$ATTACH_TRY"; echo "attach_steps=${RUN_STEPS:-fixed}"; echo "attach_plan=$ATTACH_PLAN"; } >>"$d/meta.txt"
		runuser -u "$TEST_USER" -- env -i --chdir="$d/work" "${USER_VARS[@]}" "${cmd[@]}" >"$d/job.out" 2>&1 &
		job_pid=$!
		track_pid "$job_pid"
		"$PY" "$HERE/sampler.py" --root "$job_pid" --exe "$exe" --np "$np" --out "$d/sampler" \
			--app-libs "$RES/build/$m/$app.libs" ${code[@]+"${code[@]}"} \
			2>"$d/sampler.err" &
		sampler_pid=$!
		track_pid "$sampler_pid"
		# --job <launcher pid> follows the launcher to its ranks.
		local lpid="" tw=$EPOCHREALTIME
		lpid=$(find_launcher "$job_pid" "${cmd[0]}" 30) && track_pid "$lpid"
		while [ -n "$lpid" ] && [ "$(count_ranks "$lpid" "$exe")" -lt "$np" ] &&
			pid_running "$job_pid" && ! elapsed_since "$tw" 60; do
			sleep 0.05
		done
		local ranks_up
		ranks_up=$(mono_now)
		# The memory the launch run's ranks held, before the delay (run_attach).
		if [ "$READY_KB" -gt 0 ] && [ -n "$lpid" ]; then
			"$PY" "$HERE/attach_plan.py" held --status "$d/sampler/status.csv" --np "$np" --kb "$READY_KB" \
				--timeout 30 --pid "$job_pid" >>"$d/meta.txt"
		fi
		sleep "$ATTACH_DELAY"
		if [ -z "$lpid" ] || ! pid_running "$job_pid"; then
			status=fail why="job ended (or its launcher was not found) before the attach"
		else
			echo "launcher_pid=$lpid" >>"$d/meta.txt"
			echo "tool_start_mono_s=$(mono_now)" >>"$d/meta.txt"
			"$TOOL_RUN" --output "$d/tool" --job "$lpid" >"$d/tool.out" 2>"$d/tool.err" &
			tool_pid=$!
			track_pid "$tool_pid"
			local ta=$EPOCHREALTIME
			while ! grep -q '^memattr-bpf: tracing' "$d/tool.err" && pid_running "$tool_pid" &&
				! elapsed_since "$ta" 30; do
				sleep 0.02
			done
			if grep -q '^memattr-bpf: tracing' "$d/tool.err"; then
				echo "attach_mono_s=$(mono_now)" >>"$d/meta.txt"
				echo "attach_after_ranks_s=$(awk -v a="$ranks_up" -v b="$(mono_now)" 'BEGIN{printf "%.2f", b-a}')" >>"$d/meta.txt"
			else
				status=fail why="tool did not start tracing within 30 s"
			fi
		fi
		if ! wait_gone "$job_pid" "$RUN_TIMEOUT"; then
			status=fail why+="; job still running after ${RUN_TIMEOUT}s"
			stop_ours "$job_pid"
		fi
		wait "$job_pid"; rc_job=$?
		if [ -n "$tool_pid" ]; then
			# It exits by itself once every traced process has exited.
			if ! wait_gone "$tool_pid" 30; then
				status=fail why+="; tool still running 30 s after the job ended"
				stop_ours "$tool_pid"
			fi
			wait "$tool_pid"; rc_tool=$?
		fi
	fi
	wait_gone "$sampler_pid" 10 || stop_ours "$sampler_pid"
	local rc_s=0
	wait "$sampler_pid" || rc_s=$?
	ATTACH_SHORT=0
	local attach_txt=""
	if [ "$mode" = attach ]; then
		# Did the job outlive the tool's attach (attach_plan.py check)?
		local chk rc_chk=0 outlived tool_s held_pct
		chk=$("$PY" "$HERE/attach_plan.py" check --run "$d" --margin "$ATTACH_MARGIN") || rc_chk=$?
		echo "$chk" >>"$d/meta.txt"
		outlived=$(sed -n 's/^attach_outlived_s=//p' <<<"$chk")
		tool_s=$(sed -n 's/^attach_tool_s=//p' <<<"$chk")
		held_pct=$(sed -n 's/^held_at_attach_pct=//p' <<<"$chk")
		ATTACH_TOOL_S=$tool_s
		if [ "$rc_chk" -ne 0 ] || grep -q '^memattr-bpf: tracing 0 processes' "$d/tool.err" 2>/dev/null; then
			ATTACH_SHORT=1 status=fail
			why+="; the job did not outlive the tool's attach by ${ATTACH_MARGIN} s (tool start to tracing ${tool_s:-?} s, job on after it ${outlived:-never traced} s)"
		fi
		attach_txt="; ${RUN_STEPS:+$RUN_STEPS steps, }ranks held ${held_pct:-?}% of their peak at the tool's start, tool tracing after ${tool_s:-?} s, job on ${outlived:-?} s after"
	fi
	[ "$rc_tool" -eq 0 ] || { status=fail; why+="; tool exit status $rc_tool"; }
	[ "$rc_job" -eq 0 ] || { status=fail; why+="; job exit status $rc_job"; }
	app_ok "$app" "$d" || { status=fail; why+="; $app did not report completion (job.out)"; }
	[ "$rc_s" -eq 0 ] || { status=fail; why+="; sampler failed: $(tail -1 "$d/sampler.err")"; }
	# A rank's file named pid-P.csv (the tool did not know it as a rank) is a
	# tool defect that table.py reports; no CSV at all is a failed run.
	compgen -G "$d/tool/rank-*.csv" >/dev/null || compgen -G "$d/tool/pid-*.csv" >/dev/null ||
		{ status=fail; why+="; the tool wrote no CSV"; }
	local wall
	wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
	{ echo "wall_s=$wall"; echo "tool_rc=$rc_tool"; echo "job_rc=$rc_job"; echo "status=$status"; echo "why=${why#; }"; } >>"$d/meta.txt"
	if [ "$status" = ok ]; then
		log "$tag: ok (${wall}s$attach_txt)"
	elif [ "$ATTACH_SHORT" = 1 ] && [ "$ATTACH_RETRY_LEFT" = 1 ]; then
		log "$tag: try $ATTACH_TRY too short: ${why#; }; tried again (run_attach)"
	else
		fail_note "$tag: ${why#; }$attach_txt (files: $d)"
	fi
}

# run_attach APP MPI NP TAG: the attach run of "The late attach" above: its
# job sized (attach_plan.py size) from the launch run of the same
# application, MPI and ranks, and tried again, longer, while it ends too
# soon after the tool's attach. Each try that was too short is kept in
# $RES/attach_tries/TAG-tryN.
declare -A ATTACH_SEEN=()	# MPI.NP -> the longest attach (tool start to tracing) measured so far
declare -A ATTACH_PER_RANK=()	# MPI -> the longest of those per rank
RUN_STEPS="" READY_KB=0 ATTACH_PLAN="" ATTACH_TRY=0 ATTACH_RETRY_LEFT=0 ATTACH_SHORT=0 ATTACH_TOOL_S=""
run_attach() {
	local app=$1 m=$2 np=$3 tag=$4 try steps0 src est sz app_s prev_steps=0 kept
	steps0=$(steps_of "$app" "$np")
	src=$RES/runs/$app-$m-np$np-launch
	grep -qx 'status=ok' "$src/meta.txt" 2>/dev/null || src=""
	for try in $(seq 1 "$ATTACH_TRIES"); do
		# Measured with these ranks, else scaled from other rank counts (more
		# ranks than cores leave the tool less CPU), else ATTACH_EST_S.
		est=${ATTACH_SEEN[$m.$np]:-}
		[ -n "$est" ] || [ -z "${ATTACH_PER_RANK[$m]:-}" ] ||
			est=$(awk -v r="${ATTACH_PER_RANK[$m]}" -v n="$np" 'BEGIN { printf "%.2f", r * n }')
		est=${est:-$ATTACH_EST_S}
		RUN_STEPS=$steps0 READY_KB=0
		ATTACH_PLAN="no launch run of $app with $m on $np ranks: ${steps0:-its fixed} steps, the attach after the delay alone"
		if [ -n "$src" ]; then
			if [ -n "$steps0" ]; then
				app_s=$(app_time "$app" "$src")
				sz=$("$PY" "$HERE/attach_plan.py" size --run "$src" --np "$np" \
					--steps "$(sed -n 's/^attach_steps=//p' "$src/meta.txt" | grep . || echo "$steps0")" \
					${app_s:+--app-time "$app_s"} --delay "$ATTACH_DELAY" --est "$est" --margin "$ATTACH_MARGIN")
				RUN_STEPS=$(sed -n 's/^steps=//p' <<<"$sz")
				RUN_STEPS=${RUN_STEPS:-$steps0}	# (attach_plan.py said why on stderr)
				[ "$RUN_STEPS" -ge $((2 * prev_steps)) ] || RUN_STEPS=$((2 * prev_steps))
			else
				sz=$("$PY" "$HERE/attach_plan.py" size --run "$src" --np "$np" --fixed \
					--delay "$ATTACH_DELAY" --est "$est" --margin "$ATTACH_MARGIN")
			fi
			READY_KB=$(sed -n 's/^ready_kb=//p' <<<"$sz")
			READY_KB=${READY_KB:-0}
			ATTACH_PLAN=$(sed -n 's/^plan=//p' <<<"$sz")
			[ "$prev_steps" -eq 0 ] || ATTACH_PLAN+="; at least twice try $((try - 1))'s steps"
		elif [ "$prev_steps" -gt 0 ]; then
			RUN_STEPS=$((2 * prev_steps))
			ATTACH_PLAN="twice try $((try - 1))'s steps"
		fi
		ATTACH_TRY=$try ATTACH_SHORT=0 ATTACH_TOOL_S=""
		ATTACH_RETRY_LEFT=0
		[ -n "$steps0" ] && [ "$try" -lt "$ATTACH_TRIES" ] && ATTACH_RETRY_LEFT=1
		log "$tag: try $try: ${RUN_STEPS:-fixed} steps$([ "$READY_KB" -eq 0 ] || echo ", attach once the ranks hold $READY_KB KiB"); $ATTACH_PLAN"
		run_one "$app" "$m" "$np" attach "$tag"
		if [ -n "$ATTACH_TOOL_S" ] && awk -v a="$ATTACH_TOOL_S" -v b="${ATTACH_SEEN[$m.$np]:-0}" 'BEGIN { exit !(a > b) }'; then
			ATTACH_SEEN[$m.$np]=$ATTACH_TOOL_S
		fi
		if [ -n "$ATTACH_TOOL_S" ] && awk -v a="$ATTACH_TOOL_S" -v n="$np" -v b="${ATTACH_PER_RANK[$m]:-0}" \
			'BEGIN { exit !(a / n > b) }'; then
			ATTACH_PER_RANK[$m]=$(awk -v a="$ATTACH_TOOL_S" -v n="$np" 'BEGIN { printf "%.3f", a / n }')
		fi
		[ "$ATTACH_SHORT" = 1 ] && [ "$ATTACH_RETRY_LEFT" = 1 ] || return 0
		kept=$RES/attach_tries/$tag-try$try
		mkdir -p "$RES/attach_tries"
		rm -rf "$kept"
		mv "$RES/runs/$tag" "$kept"
		src=$kept prev_steps=$RUN_STEPS
	done
}

# app_time APP RUNDIR: the time the application gives for its own run (its
# compute loop: LULESH's "Elapsed time" (from its grind time), HPCCG's "Total", CloverLeaf's last
# "Wall clock"), in seconds; empty when it gave none.
app_time() {
	case $1 in
	# LULESH prints its elapsed time rounded to two digits (6, 12): its
	# grind time per domain (elapsed / (iterations x size^3)) gives it whole.
	lulesh) awk '/Problem size/ { n = $4 } /Iteration count/ { it = $4 }
		/^Grind time/ && /per dom/ { printf "%.3f\n", $5 * n * n * n * it / 1e6; exit }' "$2/job.out" ;;
	hpccg) awk '/^ *Total *:/ { print $3; exit }' "$2"/work/hpccg*.yaml 2>/dev/null ;;
	cloverleaf) awk '/Wall clock/ { t = $3 } END { if (t != "") print t }' "$2/work/clover.out" 2>/dev/null ;;
	lammps) awk '/^Loop time of/ { print $4; exit }' "$2/job.out" ;;
	esac
}

# daemon_up DIR: the node service as root, its spool DIR/spool, no socket
# and no metrics endpoint; 0 once it says it is watching, 1 if it never does.
daemon_up() {
	local d=$1 t0=$EPOCHREALTIME
	env -i "${SUDO_VARS[@]}" "$TOOL_RUN" daemon ${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"} --spool "$d/spool" \
		--listen none --socket none \
		>"$d/daemon.out" 2>"$d/daemon.err" &
	DAEMON_PID=$!
	track_pid "$DAEMON_PID"
	until grep -q '^memattr-bpf: daemon: watching' "$d/daemon.err"; do
		if ! pid_running "$DAEMON_PID" ||
			[ "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{print (b - a > 30)}')" = 1 ]; then
			stop_ours "$DAEMON_PID"
			return 1
		fi
		sleep 0.05
	done
}

# daemon_down DIR NP: SIGTERM (final samples, detach); 0 when it exited with
# status 0 and its spool holds NP rank timelines of one job.
daemon_down() {
	local d=$1 np=$2 rc=0 files
	kill -TERM "$DAEMON_PID"
	wait_gone "$DAEMON_PID" 15 || { stop_ours "$DAEMON_PID"; rc=124; }
	wait "$DAEMON_PID" || rc=$?
	files=$(find "$d/spool" -mindepth 2 -maxdepth 2 -name 'rank-*.csv.gz' 2>/dev/null | wc -l)
	[ "$rc" -eq 0 ] && [ "$files" -eq "$np" ]
}

# overhead_run APP MPI NP VARIANT PAIR: the job alone (untraced) or under the
# tool or the node service (traced, --overhead-under); one line in
# $RES/overhead.tsv.
overhead_run() {
	local app=$1 m=$2 np=$3 variant=$4 pair=$5
	local exe=${BIN[$app.$m]:-} d=$RES/runs/overhead/$app-$m-np$np-$variant-$pair pid t0 wall rc=0 args
	[ -n "$exe" ] || { fail_note "$app with $m: not run (no build)"; return; }
	rm -rf "$d"
	mkdir -p "$d/work"
	chown "$TEST_USER" "$d/work"
	args=$(app_args "$app" "$np" "$d/work")
	local -a cmd
	read -r -a cmd <<<"$(launcher "$m" "$np") $exe $args"
	local -a job_vars=("${USER_VARS[@]}")
	if [ "$variant" = traced ] && [ "$OVERHEAD_UNDER" = daemon ]; then
		daemon_up "$d" || { fail_note "overhead $app $m pair $pair: the daemon did not start (files: $d)"; return; }
		job_vars+=("PBS_JOBID=validate-$app-$m-$pair")
	fi
	t0=$EPOCHREALTIME
	if [ "$variant" = untraced ] || [ "$OVERHEAD_UNDER" = daemon ]; then
		runuser -u "$TEST_USER" -- env -i --chdir="$d/work" "${job_vars[@]}" "${cmd[@]}" \
			>"$d/job.out" 2>&1 &
	else
		user_outdir "$d/tool"
		env -i --chdir="$d/work" "${SUDO_VARS[@]}" "$TOOL_RUN" --quiet ${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"} \
			--output "$d/tool" -- "${cmd[@]}" \
			>"$d/job.out" 2>"$d/tool.err" &
	fi
	pid=$!
	track_pid "$pid"
	wait_gone "$pid" "$RUN_TIMEOUT" || { stop_ours "$pid"; rc=124; }
	wait "$pid" || rc=$?
	wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b-a}')
	if [ "$variant" = traced ] && [ "$OVERHEAD_UNDER" = daemon ] && ! daemon_down "$d" "$np"; then
		fail_note "overhead $app $m pair $pair: the daemon failed or did not write $np rank timelines (files: $d)"
		return
	fi
	# The next pair's untraced run must not run beside this one's detach.
	[ "$variant" = untraced ] || wait_detached 10
	if [ "$rc" -ne 0 ] || ! app_ok "$app" "$d"; then
		fail_note "overhead $app $m $variant pair $pair: exit status $rc or no completion line (files: $d)"
		return
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$app" "$m" "$np" "$variant" "$pair" "$wall" \
		"$(app_time "$app" "$d")" >>"$RES/overhead.tsv"
	log "overhead $app $m np$np $variant $pair: ${wall}s"
}

if [ "$OVERHEAD" -gt 0 ]; then
	printf 'app\tmpi\tnp\tvariant\tpair\twall_s\tapp_s\n' >"$RES/overhead.tsv"
	for m in $MPIS; do
		for a in "${APPS[@]}"; do
			runs_with "$a" "$m" || continue
			nps=$(ranks_for "$a")
			[ "$OVERHEAD_RANKS" = all ] || nps=$(awk '{ print $NF }' <<<"$nps")
			for np in $nps; do
				# Each pair's order alternates: what runs first moves a
				# pair more than the node service does (LULESH, 8 ranks,
				# MPICH, -i 200: untraced always first, the traced run
				# slower in 4 of 4 pairs, 1.046x; alternating, -i 100,
				# faster in 4 of 4, 0.96x).
				for i in $(seq 1 "$OVERHEAD"); do
					if [ $((i % 2)) -eq 1 ]; then
						overhead_run "$a" "$m" "$np" untraced "$i"
						overhead_run "$a" "$m" "$np" traced "$i"
					else
						overhead_run "$a" "$m" "$np" traced "$i"
						overhead_run "$a" "$m" "$np" untraced "$i"
					fi
				done
			done
		done
	done
	DURATION=$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')
	echo "duration_s=$DURATION" >>"$RES/meta.txt"
	"$PY" "$HERE/overhead.py" "$RES" ${DOC:+--doc "$DOC"} | tee "$RES/overhead.md"
	trc=${PIPESTATUS[0]}
	log "done in ${DURATION}s; table: $RES/overhead.md; raw: $RES/overhead.tsv"
	[ ${#FAILURES[@]} -eq 0 ] && [ "$trc" -eq 0 ] && exit 0
	for f in "${FAILURES[@]}"; do log "  $f"; done
	exit 1
fi

IFS=, read -r -a MODE_LIST <<<"$MODES"
for m in $MPIS; do
	for a in "${APPS[@]}"; do
		runs_with "$a" "$m" || continue
		for np in $(ranks_for "$a"); do
			for mode in "${MODE_LIST[@]}"; do
				if [ "$mode" = attach ]; then
					run_attach "$a" "$m" "$np" "$a-$m-np$np-$mode"
				else
					run_one "$a" "$m" "$np" "$mode" "$a-$m-np$np-$mode"
				fi
			done
		done
	done
done

# Determinism: the same job, launched under the tool, REPEAT times.
FIRST_MPI=${MPIS%% *}
if [ "$REPEAT" -gt 0 ] && [ -n "$SRC_HPCCG" ]; then
	for i in $(seq 1 "$REPEAT"); do
		run_one hpccg "$FIRST_MPI" 2 launch "repeat/hpccg-$FIRST_MPI-np2-launch-$i"
	done
fi

DURATION=$(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')
echo "duration_s=$DURATION" >>"$RES/meta.txt"
for f in "${FAILURES[@]}"; do echo "failure=$f"; done >>"$RES/meta.txt"
"$PY" "$HERE/table.py" "$RES" ${DOC:+--doc "$DOC"} | tee "$RES/table.md"
trc=${PIPESTATUS[0]}
log "done in ${DURATION}s; table: $RES/table.md; per rank: $RES/per_rank.csv; raw runs: $RES/runs/"
if [ ${#FAILURES[@]} -gt 0 ]; then
	log "${#FAILURES[@]} failed build(s) or run(s):"
	for f in "${FAILURES[@]}"; do log "  $f"; done
fi
[ "$trc" -eq 0 ] || log "table.py found runs it could not read or tool output that breaks the contract (marked in the table)"
if [ ${#FAILURES[@]} -gt 0 ] || [ "$trc" -ne 0 ]; then
	exit 1
fi
log "every build and run succeeded"
exit 0
