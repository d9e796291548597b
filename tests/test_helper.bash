# Shared set-up for every Bats suite: assertions, the binaries under test,
# and helpers for making ev streams from text.
bats_load_library bats-support 2>/dev/null || load /usr/lib/bats/bats-support/load.bash
bats_load_library bats-assert 2>/dev/null || load /usr/lib/bats/bats-assert/load.bash

TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT_DIR="$(cd "$TESTS_DIR/.." && pwd)"
# EV_BIN selects the build under test (make asan points it at build/asan/bin).
EV_BIN="${EV_BIN:-$ROOT_DIR/bin}"
PATH="$EV_BIN:$ROOT_DIR/pipelines:$PATH"
export PATH EV_BIN ROOT_DIR TESTS_DIR
# Shared reference data; tests that need it call need_shared_data.
SHARED_DATA="${SHARED_DATA:-$ROOT_DIR/../shared/data}"
export SHARED_DATA

# In CI the shared data must be there: a missing copy fails instead of
# quietly skipping the tests that prove the tools on real traces.
need_shared_data() {
	if [ ! -d "$SHARED_DATA" ]; then
		[ -z "${CI:-}" ] || fail "shared data not found at $SHARED_DATA (CI must have it)"
		skip "shared data not found at $SHARED_DATA (set SHARED_DATA)"
	fi
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
