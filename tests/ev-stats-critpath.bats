#!/usr/bin/env bats
# ev-stats critpath: HTA's critical path of one rank, against what HTA
# returned on its own critical-path test traces
# (tests/expected/hta/critical_path/README.md) and on a small stream worked
# out by hand.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	E="$TESTS_DIR/expected/hta/critical_path"
}

# same_as_hta NAME EV [window options]: the path of EV equals HTA's
# NAME.path.tsv (segments in order, start relative to the first; bound_by
# empty for dependency and sync edges) and its summary HTA's
# NAME.summary.tsv: the same bounds, durations and percentages, to the
# last bit (HTA's empty bound_by is our dependency row).
same_as_hta() {
	local name="$1" ev="$2"
	shift 2
	ev-stats critpath -q --table=path "$@" "$ev" | awk -F'\t' -v OFS='\t' '
		NR == 2 { t0 = $6 } NR > 1 { print $2, $6 - t0, $3, $4, $5, $7 }' >"$T/ours"
	grep -v '^#' "$E/$name.path.tsv" >"$T/ref"
	run -0 diff "$T/ref" "$T/ours"
	assert_output ''
	ev-stats critpath -q "$@" "$ev" | awk -F'\t' -v OFS='\t' '
		NR > 1 { print $2 == "dependency" ? "" : $2, $3, $4 }' >"$T/ours"
	run -0 awk -F'\t' 'NR == FNR { if (!/^#/) { d[$1] = $2; p[$1] = $3 }; next }
		{ seen[$1] = 1; if (!($1 in d) || $2 != d[$1] || $3 + 0 != p[$1] + 0) print "differs: " $0 }
		END { for (k in d) if (!(k in seen)) print "only HTA: " k }' "$E/$name.summary.tsv" "$T/ours"
	assert_output ''
}

@test "critpath: the path and its breakdown equal HTA's on its four critical-path traces" {
	need_shared_data
	local name dir ann inst n=0
	while IFS=$'\t' read -r name dir ann inst; do
		case "$name" in '#'* | '') continue ;; esac
		kineto2ev -q -o "$T/$name.ev" "$SHARED_DATA/kineto/hta/$dir"/*.json.gz
		[ "$ann" != - ] || ann=''
		local win=(--annotation="$ann")
		[ "$inst" = none ] || win+=(--instance="$inst")
		same_as_hta "$name" "$T/$name.ev" "${win[@]}"
		n=$((n + 1))
	done <"$E/traces.tsv"
	[ "$n" -eq 4 ]
}

@test "critpath: launch delay, kernel-kernel gap, nesting and the window, by hand" {
	pack "$TESTS_DIR/fixtures/ev-stats/critpath.tsv" "$T/h.ev"
	# ProfilerStep#1: aten::mm starts at 10 us and launches k1 at 20; k1
	# (queue empty) waits 20 us for its launch and runs 100 us; k2's
	# launch came while k1 ran, so it follows k1 after a 5 us gap.  The
	# CPU side (mm, add, the device sync whose own time HTA does not
	# count) ends earlier.
	run -0 ev-stats critpath --table=path "$T/h.ev"
	assert_output - <<'OUT'
rank	seq	type	bound_by	name	start_us	duration_us
0	0	operator	cpu_bound	aten::mm	10	10
0	1	kernel_launch_delay	gpu_kernel_launch_overhead		20	20
0	2	operator	gpu_compute_bound	k1	40	100
0	3	kernel_kernel_delay	gpu_kernel_kernel_overhead	k1	140	5
0	4	operator	gpu_compute_bound	k2	145	10
OUT
	run -0 ev-stats critpath "$T/h.ev"
	assert_output - <<'OUT'
rank	bound_by	duration_us	percent
0	cpu_bound	10	6.896551724137931
0	gpu_compute_bound	110	75.86206896551724
0	gpu_kernel_kernel_overhead	5	3.4482758620689653
0	gpu_kernel_launch_overhead	20	13.793103448275861
OUT
	# Instance 1 is the GPU's copy of ProfilerStep#1 (HTA counts every
	# event of the name), from 40 to 155 us: aten::add, k2 and the sync.
	# k1's launch came before it, but k1 had started when k2 was launched
	# (queue length 1, then 0): k2 waits 70 us for its launch.
	run -0 ev-stats critpath --instance=1 --table=path "$T/h.ev"
	assert_output - <<'OUT'
rank	seq	type	bound_by	name	start_us	duration_us
0	0	operator	cpu_bound	aten::add	70	5
0	1	kernel_launch_delay	gpu_kernel_launch_overhead		75	70
0	2	operator	gpu_compute_bound	k2	145	10
OUT
	# The second step: k3's launch delay (90) and its 500 us.
	run -0 ev-stats critpath --instance=2 "$T/h.ev"
	assert_line --index 1 "$(printf '0\tgpu_compute_bound\t500\t84.7457627118644')"
	# Both steps: one window.  The device sync waits for k2 (its
	# Context Sync), and the next step's launch follows the sync's end.
	run -0 ev-stats critpath --instance=0:2 --table=path "$T/h.ev"
	assert_line --index 6 "$(printf '0\t5\tsync_dependency\t\t\t155\t0')"
	assert_line --index 7 "$(printf '0\t6\tdependency\t\t\t160\t0')"
	assert_line --index 8 "$(printf '0\t7\tkernel_launch_delay\tgpu_kernel_launch_overhead\t\t1010\t90')"
	# No fifth instance: said, and an empty table.
	run -0 --separate-stderr ev-stats critpath --instance=4 "$T/h.ev"
	assert_output "$(printf 'rank\tbound_by\tduration_us\tpercent')"
	[[ "$stderr" == *"1 rank(s) without instance 4 of a range named like 'ProfilerStep'"* ]]
	run -2 ev-stats critpath --instance=2:1 "$T/h.ev"
	assert_output --partial "--instance: expected N or N:M"
	run -2 ev-stats idle --annotation=x "$T/h.ev"
}

# straggler SPEC: a generated 4-rank trace whose rank runs one kernel slow
# (gen-kineto --slow=SPEC), each collective waiting on the compute stream.
straggler() {
	gen-kineto -q -r 4 -i 2 -k 6 --mix allreduce:2 --slow="$1" --event-sync "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T"/g/rank*/trace.json
}

@test "critpath --table=cross: the path across ranks goes through the straggler's slow kernel" {
	straggler 2:0:3:20
	# Rank by rank, HTA's paths (HTA run on each rank's file).
	local r
	for r in 0 2; do
		ev-view -q -r "$r" --ev -o "$T/r$r.ev" "$T/g.ev"
		same_as_hta "gen_straggler_rank$r" "$T/r$r.ev"
	done
	# Each rank's own path (HTA's view): ranks 0, 1 and 3 spend it in the
	# allreduce that waits for rank 2.
	run -0 ev-stats critpath "$T/g.ev"
	assert_line --regexp $'^0\tgpu_communication_bound\t1193\t94\\.'
	# Across ranks: rank 2's GEMM, 20 times its time, is the path's longest
	# segment; rank 2 arrives last at the allreduce, which ends the path.
	run -0 ev-stats critpath --table=cross "$T/g.ev"
	longest=$(printf '%s\n' "$output" | awk -F'\t' 'NR > 1 && $7 > m { m = $7; l = $1 "|" $3 "|" $4 "|" $5 "|" $7 } END { print l }')
	[ "$longest" = "2|operator|gpu_compute_bound|sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1_execute_segment_k_off_kernel__5x_cublas|926" ]
	assert_line --regexp $'^2\t10\tcollective_arrival\t\tncclDevKernel_AllReduce'
	assert_line --regexp $'^0\t11\tcollective\tgpu_communication_bound\tncclDevKernel_AllReduce[^\t]*\t2077\t240$'
	run -0 ev-stats critpath --table=cross-summary "$T/g.ev"
	assert_line --index 1 --regexp $'^2\tdependency\t'
	assert_line --regexp $'^2\tgpu_compute_bound\t1008\t79\\.'
	# Another rank, another kernel, another step (instance 2: HTA counts
	# the GPU's copy of each ProfilerStep annotation as an instance too).
	rm -r "$T/g"
	straggler 3:1:2:15
	run -0 ev-stats critpath --table=cross --instance=2 "$T/g.ev"
	longest=$(printf '%s\n' "$output" | awk -F'\t' 'NR > 1 && $7 > m { m = $7; l = $1 "|" $4 "|" $7 } END { print l }')
	[ "$longest" = "3|gpu_compute_bound|1395" ]
}

@test "critpath: memory holds the window, not the trace: 10x the trace, the same peak RSS" {
	local sz
	for sz in 2M 20M; do
		gen-kineto -q --only 0 --size "$sz" - >"$T/$sz.json"
		kineto2ev -q -o "$T/$sz.ev" "$T/$sz.json"
		/usr/bin/time -f %M -o "$T/m$sz" ev-stats critpath -q --instance=4 -o "$T/$sz.tsv" "$T/$sz.ev"
	done
	# The same step, the same path, in both.
	cmp "$T/2M.tsv" "$T/20M.tsv"
	run awk -v a="$(cat "$T/m2M")" -v b="$(cat "$T/m20M")" 'BEGIN { print (b < a * 1.2 + 2048) ? "flat" : "grows " a " -> " b }'
	assert_output flat
}
