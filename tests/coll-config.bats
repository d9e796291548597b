#!/usr/bin/env bats
# Which ranks make one run: ev-stats coll on per-rank and per-run merges.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "ev-merge of one file per rank: the ranks are one run, every collective complete" {
	gen-kineto -q --ranks 4 --iters 2 "$T/g"
	for r in 0 1 2 3; do kineto2ev -q -o "$T/r$r.ev" "$T/g/rank$r/trace.json"; done
	ev-merge -q -o "$T/m.ev" "$T"/r[0-3].ev
	run -0 --separate-stderr ev-stats coll "$T/m.ev"
	[ -z "$stderr" ]
	# 2 iterations x (4 allreduce + 2 allgather + 2 reducescatter), one configuration
	run -0 bash -c 'ev-stats coll "$1" | tail -n +2 | cut -f1 | sort -u' _ "$T/m.ev"
	assert_output '*'
	run -0 bash -c 'ev-stats coll "$1" | tail -n +2 | awk -F"\t" "{n += \$6} END {print n}"' _ "$T/m.ev"
	assert_output 16
}

@test "ev-merge of one file per run: the inputs are configurations" {
	gen-kineto -q --ranks 2 --iters 1 "$T/a"
	gen-kineto -q --ranks 2 --iters 1 --scale 2 "$T/b"
	kineto2ev -q -o "$T/base.ev" "$T"/a/rank*/trace.json
	kineto2ev -q -o "$T/test.ev" "$T"/b/rank*/trace.json
	(cd "$T" && ev-merge -q -o m.ev base.ev test.ev)
	run -0 --separate-stderr bash -c 'ev-stats coll "$1" | tail -n +2 | cut -f1 | sort -u' _ "$T/m.ev"
	assert_output - <<'OUT'
input=base.ev
input=test.ev
OUT
	[ -z "$stderr" ]
}

@test "ranks whose traces hold different collectives at one seq are named (shared data)" {
	need_shared_data
	d="$SHARED_DATA/kineto/hta/trace_filter"
	kineto2ev -q -o "$T/r0.ev" "$d/sampled_rank-0.json.gz"
	kineto2ev -q -o "$T/r1.ev" "$d/sampled_rank-1.json.gz"
	ev-merge -q -o "$T/m.ev" "$T/r0.ev" "$T/r1.ev"
	run -0 --separate-stderr ev-stats coll "$T/m.ev"
	[[ "$stderr" == *"3 collective arrivals differ in kind or size from another rank's at the same (comm, seq)"* ]]
}

@test "ev-merge --align of one file per run aligns each run on its own" {
	gen-kineto -q --ranks 2 --iters 3 "$T/a"
	gen-kineto -q --ranks 2 --iters 3 --seed 5 "$T/b"
	kineto2ev -q -o "$T/base.ev" "$T"/a/rank*/trace.json
	kineto2ev -q -o "$T/test.ev" "$T"/b/rank*/trace.json
	cd "$T"
	run -0 ev-merge --align=coll -o m.ev base.ev test.ev
	assert_line 'ev-merge: align coll: configuration input=base.ev: 2 ranks, anchors coll 48, p2p 0, kernel 48'
	assert_line 'ev-merge: align coll: configuration input=test.ev: 2 ranks, anchors coll 48, p2p 0, kernel 48'
	refute_output --partial doubtful
	# One file per rank: the ranks are one configuration.
	for r in 0 1; do kineto2ev -q -o "r$r.ev" "a/rank$r/trace.json"; done
	run -0 ev-merge --align=coll -o m2.ev r0.ev r1.ev
	assert_line 'ev-merge: align coll: configuration (single): 2 ranks, anchors coll 48, p2p 0, kernel 48'
}

@test "real PyTorch <= 2.1 ranks: ev-stats coll pairs and times collectives as TraceLens's NCCL analyser (shared data)" {
	need_shared_data
	# tests/expected/tracelens-nccl/trace_filter.tsv: TraceLens's NcclAnalyser
	# (build_df_long) on the same two files, per index_in_group: ranks seen,
	# earliest start, fastest rank's duration, start and end skew (us).
	d="$SHARED_DATA/kineto/hta/trace_filter"
	kineto2ev -q -o "$T/r0.ev" "$d/sampled_rank-0.json.gz"
	kineto2ev -q -o "$T/r1.ev" "$d/sampled_rank-1.json.gz"
	ev-merge -q -o "$T/m.ev" "$T/r0.ev" "$T/r1.ev"
	ev-stats coll -q --table=each "$T/m.ev" |
		awk -F'\t' 'NR > 1 { printf "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\n", $3, $8, $9, $10, $11, $12 }' >"$T/ev.tsv"
	tail -n +2 "$TESTS_DIR/expected/tracelens-nccl/trace_filter.tsv" >"$T/tl.tsv"
	[ "$(wc -l <"$T/ev.tsv")" -eq 10 ]
	# The same collectives paired, the same numbers; start within 1 us
	# (TraceLens keeps microsecond doubles, evkit nanoseconds).
	run -0 awk -F'\t' '$1 != $7 || $2 != $8 || $4 != $10 || $5 != $11 || $6 != $12 ||
		($3 / 1000 - $9 > 1 || $9 - $3 / 1000 > 1) { print "differs: " $0; bad = 1 } END { exit bad }' \
		<(paste "$T/ev.tsv" "$T/tl.tsv")
}
