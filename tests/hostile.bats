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

@test "a closed standard stream is named, never confused with a file" {
	gen-kineto -q --ranks 1 --iters 1 "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T/g/rank0/trace.json"
	for t in ev-view ev-merge "ev-stats timeline" "ev-overlap --summary" coll-expand ev2perfetto; do
		# Reading standard input when it is closed.
		run -1 bash -c "$t <&-"
		assert_output --regexp "standard input: (Bad file descriptor|empty input)"
		# Writing standard output when it is closed.
		run -1 bash -c "$t \"\$1\" >&-" _ "$T/g.ev"
		assert_output --partial "standard output: Bad file descriptor"
		# A file read with standard input closed is still that file.
		run -0 bash -c "$t -o \"\$2\" \"\$1\" <&-" _ "$T/g.ev" "$T/out"
	done
	# An input opened while stdout is closed must not become standard output.
	run -0 bash -c 'kineto2ev -q -o "$2" "$1" >&- <&-' _ "$T/g/rank0/trace.json" "$T/k.ev"
	cmp "$T/k.ev" "$T/g.ev"
	cmp <(gzip -c "$T/g/rank0/trace.json" | gzip -dc) "$T/g/rank0/trace.json"
}
