#!/usr/bin/env bats
# ev2perfetto --critical-path: ev-stats critpath's path drawn on the
# timeline, a slice per segment on the "critical path" track of its rank's
# GPU or CPU process, in the path's order, joined by flow arrows; checked
# against the rows ev-stats critpath prints for the same stream.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$TESTS_DIR/fixtures/ev2perfetto"
}

# straggler SPEC: a generated 4-rank trace whose rank runs one kernel slow.
straggler() {
	rm -rf "$T/g"
	gen-kineto -q -r 4 -i 2 -k 6 --mix allreduce:2 --slow="$1" --event-sync "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T"/g/rank*/trace.json
}

# slices JSON: the critical path's slices in file order: rank, seq, type,
# bound_by, name, duration_us, start (us from the first), then GPU or CPU
# and the track the segment's event is on.
slices() {
	jq -r '[.traceEvents[] | select(.cat == "critical_path" and .ph == "X")] | (.[0].ts) as $t0 | .[] |
		[(.pid / 2 | floor), .args.seq, .args.type, .args.bound_by, .name, .args.duration_us, (.ts - $t0),
		 (if .pid % 2 == 0 then "GPU" else "CPU" end), .args.event_on] | @tsv' "$1"
}

# rows TABLE ARGS...: ev-stats critpath's rows in the same columns (an
# empty bound is dependency, an unnamed segment is named by its type).
rows() {
	ev-stats critpath -q "$@" | awk -F'\t' -v OFS='\t' '
		NR == 2 { t0 = $6 } NR > 1 { print $1, $2, $3, $4 == "" ? "dependency" : $4, $5 == "" ? $3 : $5, $7, $6 - t0 }'
}

@test "critical-path=cross: the straggler's path, segment by segment, on its ranks' tracks, arrows in order" {
	straggler 2:0:3:20
	run -0 ev2perfetto --critical-path=cross -o "$T/x.json" "$T/g.ev"
	python3 "$F/validate.py" "$T/x.json" >/dev/null
	slices "$T/x.json" >"$T/slices"
	rows --table=cross "$T/g.ev" >"$T/rows"
	[ "$(wc -l <"$T/rows")" -ge 10 ]
	run -0 diff "$T/rows" <(cut -f1-7 "$T/slices")
	# Each segment on the side of its event: GPU ones on a stream, CPU ones
	# on a thread; rank 2's slow GEMM on rank 2's GPU (pid 4), the path's
	# end on rank 0's GPU.
	run -0 awk -F'\t' '($8 == "GPU") != ($9 ~ /^stream /) { print "wrong side: " $0 }' "$T/slices"
	assert_output ''
	run -0 awk -F'\t' '$6 == 926 { print $1, $8, $4 }' "$T/slices"
	assert_output "2 GPU gpu_compute_bound"
	run -0 jq -r '[.traceEvents[] | select(.cat == "critical_path" and .ph == "X")] | last | "\(.pid) \(.args.type)"' "$T/x.json"
	assert_output "0 collective"
	# The track: "critical path", first in each process that has one.
	run -0 jq -r '[.traceEvents[] | select(.name == "thread_name" and .args.name == "critical path") | .pid] | sort | map(tostring) | join(" ")' "$T/x.json"
	assert_output "0 4 5"
	# One arrow per consecutive pair: from segment k's start to k+1's, on
	# their tracks.
	run -0 jq -r '[.traceEvents[] | select(.cat == "critical_path" and .ph == "X")] as $s |
		[.traceEvents[] | select(.cat == "critical_path" and (.ph == "s" or .ph == "f"))] | group_by(.id) |
		to_entries[] | .key as $k | .value | sort_by(.ph) | reverse |
		select(.[0].ts != $s[$k].ts or .[0].pid != $s[$k].pid or .[1].ts != $s[$k + 1].ts or .[1].pid != $s[$k + 1].pid or
		       .[1].tid != $s[$k + 1].tid) | "flow \($k) wrong"' "$T/x.json"
	assert_output ''
	[ "$(jq '[.traceEvents[] | select(.cat == "critical_path" and .ph == "s")] | length' "$T/x.json")" -eq "$(($(wc -l <"$T/rows") - 1))" ]
	# Another straggler, another path: rank 3's kernel of the second step.
	cp "$T/slices" "$T/slices1"
	straggler 3:1:2:15
	ev2perfetto --critical-path=cross --instance=2 -o "$T/y.json" "$T/g.ev"
	slices "$T/y.json" >"$T/slices"
	rows --table=cross --instance=2 "$T/g.ev" >"$T/rows"
	run -0 diff "$T/rows" <(cut -f1-7 "$T/slices")
	! cmp -s "$T/slices1" "$T/slices"
	run -0 awk -F'\t' '$6 > m { m = $6; l = $1 " " $8 " " $4 " " $6 } END { print l }' "$T/slices"
	assert_output "3 GPU gpu_compute_bound 1395"
}

@test "critical-path=rank: each rank's own path, CPU and GPU sides, by hand; options" {
	pack "$TESTS_DIR/fixtures/ev-stats/critpath.tsv" "$T/h.ev"
	run -0 ev2perfetto --critical-path=rank -o "$T/h.json" "$T/h.ev"
	python3 "$F/validate.py" "$T/h.json" >/dev/null
	# aten::mm on the CPU, then k1's launch delay, k1, the gap and k2 on
	# the GPU (tests/ev-stats-critpath.bats works it out).
	run -0 slices "$T/h.json"
	assert_output - <<'OUT'
0	0	operator	cpu_bound	aten::mm	10	0	CPU	thread 1
0	1	kernel_launch_delay	gpu_kernel_launch_overhead	kernel_launch_delay	20	10	GPU	stream 7
0	2	operator	gpu_compute_bound	k1	100	30	GPU	stream 7
0	3	kernel_kernel_delay	gpu_kernel_kernel_overhead	k1	5	130	GPU	stream 7
0	4	operator	gpu_compute_bound	k2	10	135	GPU	stream 7
OUT
	rows --table=path "$T/h.ev" >"$T/rows"
	run -0 diff "$T/rows" <(slices "$T/h.json" | cut -f1-7)
	[ "$(jq '[.traceEvents[] | select(.cat == "critical_path" and .ph == "f")] | length' "$T/h.json")" -eq 4 ]
	# The window: the second step is k3's launch delay and k3.
	ev2perfetto --critical-path=rank --instance=2 -o "$T/h2.json" "$T/h.ev"
	run -0 jq -r '[.traceEvents[] | select(.cat == "critical_path" and .ph == "X") | .name] | join(" ")' "$T/h2.json"
	assert_output --partial "k3"
	refute_output --partial "k1"
	# --no-flows: the slices without their arrows.
	ev2perfetto --critical-path=rank --no-flows -o "$T/n.json" "$T/h.ev"
	[ "$(jq '[.traceEvents[] | select(.cat == "critical_path")] | length' "$T/n.json")" -eq 5 ]
	# No window: said, and no path.
	run -0 --separate-stderr ev2perfetto --critical-path=rank --instance=4 -o "$T/e.json" "$T/h.ev"
	[[ "$stderr" == *"--critical-path: 1 rank(s) without instance 4 of a range named like 'ProfilerStep'"* ]]
	[ "$(jq '[.traceEvents[] | select(.cat == "critical_path")] | length' "$T/e.json")" -eq 0 ]
	# Without the option, nothing of it.
	ev2perfetto -o "$T/plain.json" "$T/h.ev"
	! grep -q critical "$T/plain.json"
	run -2 ev2perfetto --critical-path=all "$T/h.ev"
	assert_output --partial "--critical-path: expected rank or cross"
	run -2 ev2perfetto --instance=1 "$T/h.ev"
	assert_output --partial "--annotation and --instance choose the window of --critical-path"
	run -2 ev2perfetto --critical-path=rank --instance=2:1 "$T/h.ev"
}
