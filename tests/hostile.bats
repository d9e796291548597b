#!/usr/bin/env bats
# Hostile input: what reaches the terminal, closed standard streams,
# compressed input that is not what it says.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "control bytes from names and paths reach the terminal escaped" {
	# A path with an ESC sequence, and an ev stream whose #src line holds one.
	run -1 kineto2ev -o "$T/x.ev" $'/nonexistent/\e[2Jx.json'
	assert_output --partial '/nonexistent/\x1b[2Jx.json'
	[[ "$output" != *$'\e'* ]]
	printf '#ev 1.0 96 clock=ns\n#src 0 label=\e[31mred\r\n' >"$T/ctl.ev"
	run -1 ev-view "$T/ctl.ev"
	[[ "$output" != *$'\e'* && "$output" != *$'\r'* ]]
	# The pipelines too.
	run -1 gemm-variance -o "$T/out" $'/nonexistent/\e[2Jdir'
	assert_output --partial '/nonexistent/?[2Jdir'
	[[ "$output" != *$'\e'* ]]
}
