#!/usr/bin/env bats
# tests/modgraph.sh, the floors check of `make lint`, on planted trees: it
# must find an arrow up, a circle on one floor and the umbrella header, and
# pass a layered tree and the source tree itself.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR/tree"
	mkdir -p "$T/docs" "$T/lib/low" "$T/lib/high" "$T/lib/side" "$T/include/ev"
	cat >"$T/docs/ARCHITECTURE.md" <<'DOC'
| Floor | Module | Headers | Owns |
|------:|--------|---------|------|
| 0 | `low` | `low.h` | the bottom |
| 1 | `high` | `high.h` | above it |
| 1 | `side` | `side.h` | beside high |
DOC
	printf '#include "ev/low.h"\n#include "ev/high.h"\n#include "ev/side.h"\n' >"$T/include/ev.h"
	touch "$T/include/ev/low.h" "$T/include/ev/high.h" "$T/include/ev/side.h"
	printf '#include "ev/low.h"\n#include "ev/side.h"\n' >"$T/lib/high/h.c"
	printf '#include "ev/low.h"\n' >"$T/lib/side/s.c"
	printf '#include "ev/low.h"\n' >"$T/lib/low/l.c"
}

@test "modgraph: a layered tree passes, and so does the source tree" {
	run -0 bash "$TESTS_DIR/modgraph.sh" "$T"
	assert_output ""
	run -0 bash "$TESTS_DIR/modgraph.sh"
	assert_output ""
}

@test "modgraph: an arrow to a higher floor is a fault, and so is its circle" {
	printf '#include "ev/high.h"\n' >"$T/lib/low/l.c"
	run -1 bash "$TESTS_DIR/modgraph.sh" "$T"
	assert_line "modgraph: arrow up: low (floor 0) -> high (floor 1): lib/low/l.c (ev/high.h)"
	assert_line --partial "modgraph: circle: "
}

@test "modgraph: a circle between modules on one floor is a fault" {
	printf '#include "ev/high.h"\n' >"$T/lib/side/s.c"
	run -1 bash "$TESTS_DIR/modgraph.sh" "$T"
	assert_output "modgraph: circle: high -> side -> high"
}

@test "modgraph: a library file may not include the umbrella ev.h" {
	printf '#include "ev.h"\n' >"$T/lib/side/s.c"
	run -1 bash "$TESTS_DIR/modgraph.sh" "$T"
	assert_line "modgraph: lib/side/s.c includes the umbrella ev.h: include the headers of the modules it uses"
}
