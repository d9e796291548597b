#!/usr/bin/env bats
# tests/suite.sh, the runner of every tier: its counts, its exit status and
# what it says about a failure must be right, or a tier passes unseen.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	mkdir -p "$T/b"
	printf '#!/usr/bin/env bats\n@test "good" { true; }\n@test "skipped" { skip "no reason"; }\n' >"$T/b/ok.bats"
	printf '#!/usr/bin/env bats\n@test "fine" { true; }\n@test "bad one" {\n\techo some output\n\t[ 1 -eq 2 ]\n}\n' >"$T/b/bad.bats"
	printf '#!/usr/bin/env bats\n@test "x" { true; }\nbroken() { if; }\n' >"$T/b/broken.bats"
	# A unit program that passes, one that fails, one that dies silently.
	printf '#!/bin/sh\necho "3 passed, 0 failed"\n' >"$T/b/u-ok"
	printf '#!/bin/sh\necho "2 passed, 1 failed"\nexit 1\n' >"$T/b/u-bad"
	printf '#!/bin/sh\nexit 139\n' >"$T/b/u-dead"
	chmod +x "$T/b/u-ok" "$T/b/u-bad" "$T/b/u-dead"
}

@test "every test passed: exit 0 and the counts, units and Bats files together" {
	run -0 env SUITE_LOG_DIR="$T/log" "$TESTS_DIR/suite.sh" t1 --units "$T/b/u-ok" "$T/b/ok.bats"
	assert_line "unit: u-ok: 3 passed"
	assert_line --regexp '^ok\.bats +2 ok  0 not ok +[0-9.]+ s wall +[0-9.]+ CPU-s$'
	assert_line "t1: 4 passed, 0 failed, 1 skipped"
	assert_line --regexp '^t1: 5 tests \(3 unit, 2 bats\) in 0 min [0-9]+ s wall, [0-9]+ CPU-s$'
	# The log keeps the whole TAP and ends with the summary.
	run -0 tail -n 2 "$T/log/t1.log"
	assert_line --index 0 "t1: 4 passed, 0 failed, 1 skipped"
	run -0 grep -c '^ok 2 skipped in [0-9]*ms # skip no reason$' "$T/log/t1.log"
	# Nothing of the run is left beside the log.
	run -0 find "$T/log" -name '.t1.*'
	assert_output ""
}

@test "a failed test, a failing or dying unit program and a file that does not load all count as failed" {
	run -1 env SUITE_LOG_DIR="$T/log" "$TESTS_DIR/suite.sh" t2 --units "$T/b/u-bad $T/b/u-dead" \
		"$T/b/ok.bats" "$T/b/bad.bats" "$T/b/broken.bats"
	assert_line "unit: u-bad: FAILED (exit 1)"
	assert_line "unit: u-dead: FAILED (exit 139)"
	# The failure is shown with its file and diagnostics.
	assert_line "# $T/b/bad.bats"
	assert_line --regexp '^not ok 2 bad one in [0-9]+ms$'
	assert_line "# some output"
	assert_line "not ok 1 setup_file failed"
	# 2 + 0 unit passes, ok.bats 1 and bad.bats 1 Bats passes; failed: one
	# unit test each, bad one, broken.bats' file.
	assert_line "t2: 4 passed, 4 failed, 1 skipped"
}

@test "usage errors exit 2" {
	run -2 "$TESTS_DIR/suite.sh"
	assert_output --partial "usage: suite.sh NAME"
	run -2 "$TESTS_DIR/suite.sh" t3 --units
	run -2 "$TESTS_DIR/suite.sh" t3 --bogus
}
