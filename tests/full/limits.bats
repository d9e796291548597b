#!/usr/bin/env bats
# Limits that take big inputs to reach: slow by nature, so in the full tier
# (make check-slow).  The unified summary keeps the places of 2^20
# synthetic ops for TraceLens's ex_UID (lib/analysis/unified_synuid.c).
bats_require_minimum_version 1.5.0
load ../test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "unified: the places of 2^20 synthetic ops are kept; past them ex_UID is left empty, said" {
	# Kernels launched outside any op (their calls not in the stream), one
	# row; the first in the file is numbered N, the trace's event count.
	# Kernels FROM to TO, as a segment of their own.
	kernels() {
		python3 -c 'import sys
w = sys.stdout.write
w("#src 0 trace_events=3000000\n")
w("type\tts\tdur\tname\tsig\tid\tstep_size\n")
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    w("kernel\t%d\t1000\tk\tcudaLaunchKernel\t%d\t%d\n" % (i * 2000000000, i + 1, 2 * i + 1))' "$1" "$2" |
			ev-view --pack
	}
	row() {
		python3 -c 'import csv, sys; print(*(r["ex_UID"] + "x" + r["operation_count"] for r in csv.DictReader(sys.stdin)))'
	}
	kernels 0 1048576 >"$T/at.ev"
	run -0 --separate-stderr ev-stats unified --csv "$T/at.ev"
	[[ "$stderr" != *"ex_UID left empty"* ]]
	[ "$(row <<<"$output")" = 3000000x1048576 ]
	# One more, in a second segment of the stream.
	kernels 1048576 1048577 >"$T/one.ev"
	cat "$T/at.ev" "$T/one.ev" >"$T/past.ev"
	run -0 --separate-stderr ev-stats unified --csv "$T/past.ev"
	[[ "$stderr" == *"ex_UID left empty on 1 synthetic op row(s)"*"evkit keeps the places of the first 1048576 only"* ]]
	[ "$(row <<<"$output")" = x1048577 ]
}
