# Shared set-up for every Bats suite: assertions, the binaries under test,
# and helpers for making ev streams from text.

# bats-support and bats-assert, their files sourced directly where they are
# installed: their load.bash starts a dirname process per file, 15 for
# every test.
_ev_bats_lib() {
	local d f
	for d in ${BATS_LIB_PATH//:/ } /usr/lib/bats; do
		[ -d "$d/$1/src" ] || continue
		for f in "$d/$1/src/"*.bash; do
			# shellcheck disable=SC1090
			. "$f"
		done
		return 0
	done
	bats_load_library "$1"
}
_ev_bats_lib bats-support
_ev_bats_lib bats-assert

# Worked out once per file (the tests inherit them).
if [ -z "${TESTS_DIR:-}" ] || [ -z "${ROOT_DIR:-}" ]; then
	TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	ROOT_DIR="$(cd "$TESTS_DIR/.." && pwd)"
fi
# EV_BIN selects the build under test (make asan points it at build/asan/bin).
EV_BIN="${EV_BIN:-$ROOT_DIR/bin}"
PATH="$EV_BIN:$ROOT_DIR/pipelines:$PATH"
export PATH EV_BIN ROOT_DIR TESTS_DIR
# Plots are drawn as SVG only; the test of the PNGs unsets EVKIT_PNG.
export EVKIT_PNG=0
# Shared reference data; tests that need it call need_shared_data.
SHARED_DATA="${SHARED_DATA:-$ROOT_DIR/../shared/data}"
export SHARED_DATA

# In CI the shared data must be there: a missing copy fails instead of
# quietly skipping the tests that prove the tools on real traces (except in
# `make check-noshared`, EV_NO_SHARED=1, which checks that they skip).
need_shared_data() {
	if [ ! -d "$SHARED_DATA" ]; then
		[ -z "${CI:-}" ] || [ -n "${EV_NO_SHARED:-}" ] || fail "shared data not found at $SHARED_DATA (CI must have it)"
		skip "shared data not found at $SHARED_DATA (set SHARED_DATA)"
	fi
}

# A python3 with openpyxl (Debian python3-openpyxl) in PY_XLSX, or skip.
# shellcheck disable=SC2034 # PY_XLSX is for the calling test
need_openpyxl() {
	local p
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import openpyxl' 2>/dev/null; then PY_XLSX="$p"; return 0; fi
	done
	skip "openpyxl is not installed (Debian: python3-openpyxl): the workbook cannot be read back"
}

# odd_sweep REAL S: a sweep S (its name is the caller's: spaces, a leading
# '-', a newline) over the 4-rank, 28/42-channel sweep REAL, reached through
# symlinked configuration directories and symlinked trace files.
odd_sweep() {
	local real="$1" S="$2" r
	mkdir -p "$S/256thread" "$S/512thread/nccl_42channels/torch_profiler"
	ln -s "$real/256thread/nccl_28channels" "$S/256thread/nccl_28channels"
	ln -s "$real/256thread/nccl_42channels" "$S/256thread/nccl_42channels"
	ln -s "$real/512thread/nccl_28channels" "$S/512thread/nccl_28channels"
	for r in 0 1 2 3; do
		mkdir -p "$S/512thread/nccl_42channels/torch_profiler/rank$r"
		ln -s "$real/512thread/nccl_42channels/torch_profiler/rank$r/trace.json" "$S/512thread/nccl_42channels/torch_profiler/rank$r/trace.json"
	done
}

# pack FILE.tsv OUT.ev: encode an ev-view TSV fixture to an ev stream.
pack() {
	ev-view --pack -o "$2" "$1"
}

# view FILE.ev [ev-view options]: decode to TSV without text lines.
view() {
	local f="$1"; shift
	ev-view --no-meta "$@" "$f"
}

# wait_reading PID: waits (up to 10 s) until a thread of PID sleeps reading
# a pipe or FIFO, i.e. the process is mid-stream waiting for more input.
# Returns 1 if it never gets there or exits first.
wait_reading() {
	local pid="$1" i w
	for ((i = 0; i < 1000; i++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		for w in /proc/"$pid"/task/*/wchan; do
			[[ "$(cat "$w" 2>/dev/null)" == *pipe_read* ]] && return 0
		done
		sleep 0.01
	done
	return 1
}
