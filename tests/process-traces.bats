#!/usr/bin/env bats
# pipelines/process-traces: acelyzer's post-processing of per-rank traces.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	V="$TESTS_DIR/fixtures/ev2perfetto/validate.py"
}

# mkrun DIR RANK...: a run with one small Kineto trace per rank.
mkrun() {
	local dir="$1" r
	shift
	for r in "$@"; do
		mkdir -p "$dir/torch_profiler/rank$r"
		sed "s/\"rank\": 1,/\"rank\": $r,/" "$TESTS_DIR/fixtures/kineto2ev/small.json" >"$dir/torch_profiler/rank$r/trace.json"
	done
}

# One 2-rank Kineto run, converted once (-z -k -m -n job) for the file: the
# tests read KRUN and KJOB and write only copies (see "inputs untouched").
setup_file() {
	export KRUN="$BATS_FILE_TMPDIR/run" KJOB="$BATS_FILE_TMPDIR/job"
	mkrun "$KRUN" 0 1
	(cd "$KRUN" && find . -type f -exec sha256sum {} + | sort) >"$BATS_FILE_TMPDIR/run.sha"
	process-traces -q -z -k -m -n job -o "$KJOB" "$KRUN" >"$BATS_FILE_TMPDIR/job.log" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/job.log" >&2
		echo "setup_file: process-traces -z -k -m -n job on the Kineto run failed" >&2
		return 1
	}
}

# col CSV NAME: the values of one column (by header name).
col() {
	awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$1"
}

@test "--help prints usage and the exit status table" {
	run -0 --separate-stderr process-traces --help
	assert_line --index 0 "Usage: process-traces [options] -o OUT_DIR INPUT..."
	assert_output --partial "Exit status:"
	[ -z "$stderr" ]
}

@test "usage errors exit 2 with a hint" {
	run -2 process-traces "$T"
	assert_output --partial "an output directory is required"
	assert_output --partial "Try 'process-traces --help'."
	run -2 process-traces -o "$T/o"
	assert_output --partial "no input given"
	run -2 process-traces -o "$T/o" --align=sideways "$T"
	assert_output --partial "--align: expected none, start, coll, coll-drift or acelyzer, got"
	run -2 process-traces -o "$T/o" --name=a/b "$T"
	assert_output --partial "--name: use letters"
	run -2 process-traces -o "$T/o" --rules=mine "$T"
	run -2 process-traces -o "$T/o" -j 0 "$T"
	run -2 process-traces --no-such-option
	[ ! -e "$T/o" ]
}

@test "missing inputs and directories without traces exit 1" {
	run -1 process-traces -o "$T/o" "$T/nosuch.json"
	assert_output "process-traces: $T/nosuch.json: No such file or directory"
	mkdir -p "$T/empty"
	run -1 process-traces -o "$T/o" "$T/empty"
	assert_output --partial "no PyTorch profiler trace"
}

@test "known clock offsets are recovered and applied; tables per rank" {
	bash "$TESTS_DIR/gen/gen-ev-ranks.sh" "$T/g" 4 20 3 5000000 0 >/dev/null
	run -0 process-traces -q -o "$T/out" "$T"/g/rank*.ev
	assert_output ""
	# rank, offset: the truth the generator used.
	run -0 bash -c 'cut -d, -f1,3,4 "$1"' _ "$T/out/processed_trace_clock.csv"
	assert_output - <<EOF
rank,aligned,offset_ns
$(awk -F'\t' '{ print $1 ",yes," $2 }' "$T/g/truth.tsv")
EOF
	# The generator's collectives end together: aligned, no end skew is left;
	# without alignment the offsets show as skew.
	run -0 col "$T/out/processed_trace_collectives.csv" end_skew_max_us
	assert_output 0
	run -0 process-traces -q --align=none -n raw -o "$T/out" "$T"/g/rank*.ev
	run -0 col "$T/out/raw_collectives.csv" end_skew_max_us
	refute_output 0
	run -0 col "$T/out/raw_clock.csv" aligned
	assert_output - <<'EOF'
none
none
none
none
EOF
	# Both sets live side by side.
	run -0 ls "$T/out"
	assert_output - <<'EOF'
processed_trace.json
processed_trace_categories.csv
processed_trace_categories.txt
processed_trace_clock.csv
processed_trace_coll_spans.csv
processed_trace_collectives.csv
processed_trace_summary.csv
processed_trace_timeline.csv
raw.json
raw_categories.csv
raw_categories.txt
raw_clock.csv
raw_coll_spans.csv
raw_collectives.csv
raw_summary.csv
raw_timeline.csv
EOF
	# One span per collective (20), each seen on all 4 ranks.
	run -0 bash -c 'tail -n +2 "$1" | cut -d, -f8 | sort | uniq -c | awk "{ print \$1, \$2 }"' _ "$T/out/processed_trace_coll_spans.csv"
	assert_output "20 4"
	# Categories: a Total row per rank whose time is the sum of its rows.
	run -0 awk -F, 'NR > 1 && $2 != "Total" { s[$1] += $4 } NR > 1 && $2 == "Total" { printf "%s %s %.3f\n", $1, $3, $4 - s[$1] }' "$T/out/processed_trace_categories.csv"
	assert_output - <<'EOF'
0 20 0.000
1 20 0.000
2 20 0.000
3 20 0.000
EOF
	run -0 head -n 2 "$T/out/processed_trace_categories.txt"
	assert_line --index 0 --regexp '^rank +category +calls +kernel_time_us +mean_us +percent$'
	assert_line --index 1 --regexp '^ +0 +gemm +20 +[0-9.]+ +[0-9.]+ +100.00$'
	# The kernel summary: three GEMM names per rank, ranks in order.
	run -0 bash -c 'tail -n +2 "$1" | cut -d, -f1,2,4' _ "$T/out/processed_trace_summary.csv"
	assert_line --index 0 --regexp '^0,Cijk_gemm_[0-2],[67]$'
	assert_line --index 11 --regexp '^3,Cijk_gemm_[0-2],[67]$'
	assert_equal "${#lines[@]}" 12
	# The timeline: every rank, collective flows between ranks.
	run -0 python3 "$V" "$T/out/processed_trace.json"
	assert_line "process 6 rank 3 GPU"
	# 20 collectives chained across 4 ranks: 3 arrows each.
	assert_line "flows collective=60"
}

@test "Kineto run: valid timeline, NCCL messages with -m, idempotent, inputs untouched" {
	# setup_file ran process-traces -q -z -k -m -n job on KRUN into KJOB.
	run -0 python3 "$V" "$KJOB/job.json.gz" --gzip
	assert_line "process 2 rank 1 GPU (device 0)"
	assert_line --regexp '^flows collective=[0-9]+ launch=[0-9]+ message=8$'
	run -0 bash -c 'ev-view -M -H -c type -t send,recv,coll "$1" | sort | uniq -c | awk "{ print \$2, \$1 }"' _ "$KJOB/job.ev"
	assert_output - <<'EOF'
coll 4
recv 8
send 8
EOF
	run -0 col "$KJOB/job_summary.csv" rank
	assert_line --index 0 0
	assert_line --index -1 1
	# A rerun (without -k) gives the same tables and drops the stale .ev.
	cp -r "$KJOB" "$T/out"
	run -0 process-traces -q -z -m -n job -o "$T/out" "$KRUN"
	for f in "$KJOB"/job_*.csv "$KJOB"/job_categories.txt; do cmp "$f" "$T/out/${f##*/}"; done
	[ ! -e "$T/out/job.ev" ]
	# The messages streamed into the timeline give the timeline of the
	# stored expansion (-k).
	cmp <(gzip -dc "$KJOB/job.json.gz") <(gzip -dc "$T/out/job.json.gz")
	# Neither run touched the inputs.
	(cd "$KRUN" && find . -type f -exec sha256sum {} + | sort) >"$T/after"
	cmp "$BATS_FILE_TMPDIR/run.sha" "$T/after"
}

@test "-m: a timeline that could outgrow the free space is refused up front, with the estimate" {
	run -1 process-traces -q -m --max-events=999999999999999 -o "$T/out" "$KRUN"
	assert_output --regexp "^process-traces: -m: the timeline of every NCCL message may reach about [0-9]+ MB \(--max-events=999999999999999 events of ~150 bytes\), more than the [0-9]+ MB free in ${TMPDIR:-/tmp}, where it is written first; free space there, set TMPDIR to a larger file system, or give a smaller --max-events"
	[ ! -e "$T/out" ]
	run -2 process-traces -q -m --max-events=lots -o "$T/out" "$KRUN"
	assert_output --partial "--max-events: expected a count of trace events, got 'lots'"
}

@test "a bad trace fails and leaves the previous outputs as they were" {
	# The previous outputs: a copy of setup_file's run, rerun with its options
	# on a copy of its input whose rank 1 trace is cut short.
	cp -r "$KRUN" "$T/run"
	cp -r "$KJOB" "$T/out"
	head -c 700 "$T/run/torch_profiler/rank1/trace.json" >"$T/cut" && mv "$T/cut" "$T/run/torch_profiler/rank1/trace.json"
	run -1 process-traces -q -z -k -m -n job -o "$T/out" "$T/run"
	assert_output --partial "kineto2ev: "
	assert_output --partial "process-traces: a conversion failed"
	diff -r "$KJOB" "$T/out"
}

@test "shared data: an 8-rank aorta configuration" {
	need_shared_data
	local cfg="$SHARED_DATA/kineto/aorta-sweep/256thread/nccl_28channels"
	# With -q: of ev-merge's alignment report only the warnings are shown
	# (not the per-rank lines).
	run -0 --separate-stderr process-traces -q -o "$T/out" "$cfg"
	[[ "$stderr" != *"ev-merge: align:   rank"* ]]
	[[ "$stderr" == *"ev-merge: warning: "* ]]
	run -0 col "$T/out/processed_trace_clock.csv" aligned
	assert_output "$(printf 'yes\n%.0s' 1 2 3 4 5 6 7 8)"
	run -0 bash -c 'grep -c ",Total," "$1"' _ "$T/out/processed_trace_categories.csv"
	assert_output 8
	run -0 python3 "$V" "$T/out/processed_trace.json"
	assert_line "process 14 rank 7 GPU (device 7)"
	assert_line --regexp '^flows collective=[1-9][0-9]* launch=[1-9][0-9]*$'
	run -0 col "$T/out/processed_trace_collectives.csv" nranks
	assert_output 8
	# Without -q, ev-merge's alignment report and warnings are shown, and
	# counted at the end.
	run -0 --separate-stderr process-traces -o "$T/out" "$cfg"
	[[ "$stderr" == *"ev-merge: align coll: configuration (single): 8 ranks"* ]]
	[[ "$stderr" == *"ev-merge: warning: configuration (single): "*"median residual above 10000 ns"* ]]
	[[ "$stderr" =~ process-traces:\ [0-9]+\ warning\(s\)\ from\ the\ tools ]]
}

@test "PyTorch <= 2.1 traces: kineto2ev's inference warning is passed on, once per distinct line" {
	gen-kineto -q --era=2.1 --ranks 2 --iters 2 "$T/g"
	run -0 --separate-stderr process-traces -o "$T/out" "$T/g"
	[[ "$stderr" == *"kineto2ev: warning: "*"collectives without collective arguments (PyTorch <= 2.1)"* ]]
	[[ "$stderr" == *"warning(s) from the tools, shown above"* ]]
}

# ---- IBM AIU (Flex) traces: acelyzer's own input -------------------------

@test "Flex: allreduce_tp4.json - four ranks, flows, aligned clocks, acelyzer's tables" {
	need_shared_data
	A="$SHARED_DATA/acelyzer"
	run -0 --separate-stderr process-traces -n tp4 -o "$T/out" "$A/allreduce_tp4.json"
	[[ "$stderr" == *"flex2ev: rank 1 clock offset -1367.572 us"* ]]
	[[ "$stderr" == *"flex-stats: warning: no compiler log (-c): every kernel is in category 'other'"* ]]
	run -0 ls "$T/out"
	assert_output - <<'EOF2'
tp4.json
tp4_active.csv
tp4_categories.csv
tp4_categories.txt
tp4_classes.csv
tp4_clock.csv
tp4_collectives.csv
tp4_iterations.csv
tp4_stats_summary.csv
tp4_summary.csv
tp4_ts_analysis.csv
EOF2
	# acelyzer's ITSTATS (iterations.tsv): no kernel sequence repeats.
	run -0 cat "$T/out/tp4_iterations.csv"
	assert_output - <<'EOF2'
pid,avg_iteration_time,iterations,kernels_per_iteration,restarts
0,0,0,0,0
1,0,0,0,0
2,0,0,0,0
3,0,0,0,0
EOF2
	# acelyzer's _ts_analysis and _summary byte for byte (acelyzer run rank
	# by rank: it folds a multi-rank file into rank 0; neither table moves
	# with the alignment).
	cmp "$TESTS_DIR/expected/acelyzer/allreduce_tp4_split_ts_analysis.csv" "$T/out/tp4_ts_analysis.csv"
	cmp "$TESTS_DIR/expected/acelyzer/allreduce_tp4_split_summary.csv" "$T/out/tp4_summary.csv"
	run -0 python3 "$V" "$T/out/tp4.json"
	assert_line "process 6 rank 3 GPU (device aiu3)"
	assert_line "flows collective=3 p2p=6"
	run -0 cat "$T/out/tp4_clock.csv"
	assert_output - <<'EOF2'
rank,mode,aligned,offset_ns,drift_ppm,t0_ns
0,coll,yes,0,0,0
1,coll,yes,-1367572,0,0
2,coll,yes,-1347164,0,0
3,coll,yes,-1314382,0,0
EOF2
	run -0 bash -c 'grep ",Total," "$1" | cut -d, -f1,3,4,6' _ "$T/out/tp4_categories.csv"
	assert_output - <<'EOF2'
0,Total,282.603,1
1,Total,285.278,2
2,Total,284.702,2
3,Total,284.238,2
EOF2
	run -0 col "$T/out/tp4_collectives.csv" ranks_seen
	assert_output 4
	# --align=none keeps the host clocks; start/coll-drift are Kineto-only.
	run -0 process-traces -q --align=none -n raw -o "$T/out" "$A/allreduce_tp4.json"
	run -0 col "$T/out/raw_clock.csv" aligned
	assert_output "$(printf 'none\n%.0s' 1 2 3 4)"
	run -2 process-traces -q --align=start -o "$T/out" "$A/allreduce_tp4.json"
	assert_output --partial "Flex traces are aligned with coll"
	run -2 process-traces -q --overlap=async -o "$T/out" "$A/allreduce_tp4.json"
	assert_output --partial "--overlap: expected tid or drop"
}

@test "Flex: sample_flex_3062_job_4.json with -c gives acelyzer's categories" {
	need_shared_data
	A="$SHARED_DATA/acelyzer"
	run -0 process-traces -q -c "$A/sample_comp_log_ideal.txt" -n s -o "$T/out" "$A/sample_flex_3062_job_4.json"
	run -0 cat "$T/out/s_categories.csv"
	assert_output - <<'EOF2'
Pid,Phase,Category,Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,PT_Util
0,UNKN,StcdpHbm,0,0,0,0,0,0,0
0,UNKN,other,0,0,0,0,0,0,0
0,UNKN,StcdpLx,0.262,0.0002,1,0,0,0,0
0,UNKN,Bmm_fp16,37.248,0.0247,1,1.8618,2048,0.0037,0.05
0,UNKN,Pooling,107.909,0.0717,2,0,0,0,0
0,UNKN,ConvOs1_fp16,196.942,0.1308,1,104.7709,115248,0.2072,0.532
0,UNKN,Scalar,197.796,0.1314,2,0,0,0,0
0,UNKN,Broadcast,469.58000000000004,0.3119,3,0,0,0,0
0,UNKN,Conv_fp16,495.615,0.3292,7,399.1273,439040,0.7892,0.8053
0,UNKN,Total,1505.352,1,17,505.76,556336,1,0.336
EOF2
	# The .txt as acelyzer's (pandas' to_string: flex-stats --acelyzer-text).
	run -0 head -n 3 "$T/out/s_categories.txt"
	assert_output - <<'EOF2'
 Pid Phase     Category  Kernel_Time  Frac_Time  Calls  Ideal_Time  Ideal_Cyc  Frac_Ideal  PT_Util
   0  UNKN     StcdpHbm        0.000     0.0000      0      0.0000          0      0.0000   0.0000
   0  UNKN        other        0.000     0.0000      0      0.0000          0      0.0000   0.0000
EOF2
	# At acelyzer's clocks, acelyzer's own .txt byte for byte.
	run -0 process-traces -q -c "$A/sample_comp_log_ideal.txt" --freq=557:1100 -n f -o "$T/out" "$A/sample_flex_3062_job_4.json"
	cmp "$TESTS_DIR/expected/acelyzer/job4_c_sample_comp_log_ideal_categories.txt" "$T/out/f_categories.txt"
	# acelyzer's own _summary, _active and _ts_analysis of the file, bytes.
	for t in summary active ts_analysis; do
		cmp "$TESTS_DIR/expected/acelyzer/sample_flex_3062_job_4_$t.csv" "$T/out/s_$t.csv"
	done
	run -0 python3 "$V" "$T/out/s.json"
	assert_line "process 0 rank 0 GPU (device aiu0)"
	# -t: only the timeline and the clock table.
	run -0 process-traces -q -t -n t -o "$T/t" "$A/sample_flex_3062_job_4.json"
	run -0 ls "$T/t"
	assert_output - <<'EOF2'
t.json
t_clock.csv
EOF2
}

@test "Flex: metadata-only and unknown JSON stop the run, no empty tables" {
	need_shared_data
	run -1 process-traces -o "$T/out" "$SHARED_DATA/acelyzer/meta_events_only.json"
	assert_output --partial "meta_events_only.json: only metadata events, no trace events (4 events (4 metadata), ph M,"
	[ ! -e "$T/out" ]
	run -1 process-traces -o "$T/out" "$TESTS_DIR/fixtures/flex2ev/other.json"
	assert_output --regexp 'other.json: not a PyTorch profiler, rocprofv3 or AIU Flex trace: 1 events \(0 metadata\).*cat "render"'
	[ ! -e "$T/out" ]
	# A known dialect without kernels: the timeline, no summary/categories, said.
	run -0 --separate-stderr process-traces -n b -o "$T/out" "$SHARED_DATA/acelyzer/basic_event_test_cases.json"
	[[ "$stderr" == *"no 'Cmpt Exec' kernels in the Flex traces: no summary, stats_summary, active or categories table"* ]]
	[[ "$stderr" == *"flex2ev: warning: 1 event(s) ending before they begin: left out"* ]]
	[ ! -e "$T/out/b_summary.csv" ] && [ ! -e "$T/out/b_stats_summary.csv" ] && [ -s "$T/out/b.json" ]
	run -0 col "$T/out/b_classes.csv" events
	assert_output 23
}

@test "Flex: generated 4-rank trace, compiler log, --freq and --drop-prep" {
	need_shared_data
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 4 --iters 3 --seed 5 --truth "$T/truth" -o "$T/g.json"
	run -0 process-traces -q --drop-prep --freq=1000:1100 -c "$SHARED_DATA/acelyzer/dt_cycles_table.log" -n g -o "$T/out" "$T/g.json"
	run -0 python3 "$V" "$T/out/g.json"
	assert_line --regexp "^flows collective=[0-9]+ p2p=$(awk '$1 == "p2p" { print $2 }' "$T/truth")$"
	run -1 grep -c COMPUTE_PREP "$T/out/g_classes.csv"
	# One row per iteration's AllReduce, each seen on all 4 ranks.
	run -0 col "$T/out/g_collectives.csv" ranks_seen
	assert_output "$(printf '4\n%.0s' 1 2 3)"
	run -0 bash -c 'awk -F, '"'"'$2 == "COMPUTE_EXEC" { n += $3 } END { print n }'"'"' "$1"' _ "$T/out/g_classes.csv"
	assert_output "$(awk '$1 == "exec" { print $2 }' "$T/truth")"
}

@test "Flex --tb: one TensorBoard trace per rank beside the timeline, replaced on a rerun" {
	need_shared_data
	run -0 --separate-stderr process-traces -t --tb -n tp4 -o "$T/out" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	[[ "$stderr" == *"tp4_tb/"* ]]
	run -0 ls "$T/out/tp4_tb"
	[ "${#lines[@]}" = 4 ]
	assert_line --regexp '_3[.]pt[.]trace[.]json$'
	run -0 python3 "$TESTS_DIR/tb-layout.py" "$T/out/tp4_tb"
	# A rerun replaces the directory: no file of the first run is left.
	touch "$T/out/tp4_tb/stale.pt.trace.json"
	process-traces -q -t --tb -n tp4 -o "$T/out" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	[ ! -e "$T/out/tp4_tb/stale.pt.trace.json" ]
	[ "$(ls "$T/out/tp4_tb" | wc -l)" = 4 ]
}

@test "Flex and PyTorch traces together: both converted, not aligned to each other (said)" {
	need_shared_data
	run -0 --separate-stderr process-traces -n mix -o "$T/out" "$SHARED_DATA/acelyzer/allreduce_tp4.json" "$TESTS_DIR/fixtures/kineto2ev/small.json"
	[[ "$stderr" == *"warning: Flex and PyTorch traces together: their clocks are not aligned to each other"* ]]
	run -0 python3 "$V" "$T/out/mix.json"
	# The PyTorch rank keeps its own process and pid (rank 1 CPU, pid 100).
	assert_line "process 3 rank 1 CPU (pid 100)"
	assert_line "flows collective=3 launch=1 p2p=6"
}

@test "--xlsx: TraceLens's perf report as one workbook, each sheet the ev-stats table" {
	need_openpyxl
	gen-kineto -q --ranks 2 --iters 2 "$T/g"
	run -0 process-traces -q --xlsx -k -o "$T/out" "$T/g"
	# The sheets hold what ev-stats gives on the kept stream.
	ev-stats timeline -q --by=rank -o "$T/tl.tsv" "$T/out/processed_trace.ev"
	ev-stats kernels -q --by=rank -o "$T/k.tsv" "$T/out/processed_trace.ev"
	ev-stats categories -q --by=rank -o "$T/c.tsv" "$T/out/processed_trace.ev"
	ev-stats ops -q --class=all --by=rank -o "$T/o.tsv" "$T/out/processed_trace.ev"
	ev-stats ops-summary -q --by=rank -o "$T/os.tsv" "$T/out/processed_trace.ev"
	ev-stats ops-category -q --by=rank -o "$T/oc.tsv" "$T/out/processed_trace.ev"
	ev-stats coll -q --by= -o "$T/co.tsv" "$T/out/processed_trace.ev"
	ev-stats short -q --by=rank -o "$T/s.tsv" "$T/out/processed_trace.ev"
	ev-stats short -q --table=histogram -o "$T/h.tsv" "$T/out/processed_trace.ev"
	run -0 "$PY_XLSX" "$TESTS_DIR/fixtures/evkit-report/check-xlsx.py" "$T/out/processed_trace_perf_report.xlsx" \
		gpu_timeline="$T/tl.tsv" kernel_summary="$T/k.tsv" kernel_summary_by_category="$T/c.tsv" \
		ops_unique_args="$T/o.tsv" ops_summary="$T/os.tsv" ops_summary_by_category="$T/oc.tsv" \
		coll_analysis="$T/co.tsv" short_kernels_summary="$T/s.tsv" short_kernel_histogram="$T/h.tsv"
	assert_line --regexp '^sheet ops_unique_args rows [1-9]'
	assert_line 'sheet short_kernel_histogram rows 100 cols 3'
	# kineto2ev checked TraceLens's flow links (--flow-links), as said on
	# every source; without --xlsx it does not.
	[ "$(grep -ac '^#src .* flow_links=ac2g' "$T/out/processed_trace.ev")" = 2 ]
	run -0 process-traces -q -k -o "$T/out2" "$T/g"
	[ "$(grep -ac '^#src ' "$T/out2/processed_trace.ev")" = 2 ]
	[ "$(grep -ac 'flow_links=' "$T/out2/processed_trace.ev")" = 0 ]
}

@test "a run directory named with *, [, ?, a leading - and a newline, and such an output directory" {
	N=$'-gl*ob[1]?\nrun'
	cd "$T"
	cp -r "$KRUN" "./$N"
	run -0 process-traces -q -z -k -m -n job -o "$N.out" -- "$N"
	for f in "$KJOB"/job_*.csv "$KJOB"/job_categories.txt; do cmp "$f" "./$N.out/${f##*/}"; done
	# the same with a single trace named so
	cp "$KRUN/torch_profiler/rank0/trace.json" "./$N.json"
	run -0 process-traces -q -o "$N.one" -- "$N.json"
	run -0 python3 "$V" "./$N.one/processed_trace.json"
	assert_line "process 0 rank 0 GPU (device 0)"
}

@test "rocprofv3 results: converted by rocprof2ev, one configuration, the same tables" {
	F="$TESTS_DIR/fixtures/rocprof2ev/small_results.json"
	run -0 --separate-stderr process-traces -n r -o "$T/out" "$F"
	[[ "$stderr" == *"configuration (single): 2 ranks"* ]]
	[[ "$stderr" != *init_ns* ]]
	# The per-rank kernel table is ev-stats' of rocprof2ev's stream.
	rocprof2ev -q -o "$T/r.ev" "$F"
	ev-stats kernels -q --by=rank --csv -o "$T/k.csv" "$T/r.ev"
	cmp <(sort "$T/k.csv") <(sort "$T/out/r_summary.csv")
}

@test "Flex: NAME_iterations.csv has acelyzer's ITSTATS per rank" {
	# gen-flex.py 4 ranks x 12 iterations: acelyzer (iterations.tsv, the
	# file split per rank) finds rank 0's 2000 us word 11 times and the
	# others' 8000 us word twice.
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 4 --iters 12 --seed 7 -o "$T/g12.json"
	run -0 process-traces -q -n g -o "$T/out" "$T/g12.json"
	awk -F'\t' '$1 == "gen_flex_4x12_seed7_split" { print $2 "," $4 + 0 "," $5 }' \
		"$TESTS_DIR/expected/acelyzer/iterations.tsv" >"$T/want"
	cmp "$T/want" <(cut -d, -f1-3 "$T/out/g_iterations.csv" | tail -n +2)
	run -0 cat "$T/out/g_iterations.csv"
	assert_line "0,2000,11,8,0"
}

@test "Flex --xlsx: acelyzer's tables as the sheets of one workbook" {
	need_shared_data
	need_openpyxl
	run -0 process-traces -q --xlsx --freq=557:1100 -c "$SHARED_DATA/acelyzer/sample_comp_log_ideal.txt" -n j -o "$T/out" "$SHARED_DATA/acelyzer/sample_flex_3062_job_4.json"
	# Each sheet holds its file: the CSVs (no cell has a comma: TABs for
	# the checker), and acelyzer's TAB-separated text of summary, active
	# and ts_analysis without its padding, the numbers as numbers.
	args=()
	for t in summary categories stats_summary active ts_analysis iterations collectives classes; do
		case $t in
		summary | active | ts_analysis) sed -E 's/^ +//; s/ *\t */\t/g; s/ +$//' "$T/out/j_$t.csv" >"$T/$t.tsv" ;;
		*) tr , '\t' <"$T/out/j_$t.csv" >"$T/$t.tsv" ;;
		esac
		args+=("$t=$T/$t.tsv")
	done
	run -0 "$PY_XLSX" "$TESTS_DIR/fixtures/evkit-report/check-xlsx.py" "$T/out/j_perf_report.xlsx" "${args[@]}"
	assert_line 'sheet summary rows 9 cols 10'
	assert_line 'sheet active rows 1 cols 6'
	assert_line 'sheet ts_analysis rows 9 cols 23'
	assert_line 'sheet categories rows 10 cols 10'
	assert_line 'sheet stats_summary rows 1 cols 6'
	assert_line 'sheet iterations rows 1 cols 5'
	# Without kernels: the tables there are.
	run -0 process-traces -q --xlsx -n b -o "$T/out" "$SHARED_DATA/acelyzer/basic_event_test_cases.json"
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; print(openpyxl.load_workbook(sys.argv[1]).sheetnames)' "$T/out/b_perf_report.xlsx"
	assert_output "['collectives', 'classes']"
}

@test "Flex: --align=acelyzer gives acelyzer's _active and the device clock shifts" {
	need_shared_data
	run -0 process-traces -q --align=acelyzer -n ace -o "$T/out" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	# acelyzer's own _active of the file split per rank (default alignment).
	cmp "$TESTS_DIR/expected/acelyzer/allreduce_tp4_split_active.csv" "$T/out/ace_active.csv"
	run -0 cat "$T/out/ace_clock.csv"
	assert_output - <<'EOF2'
rank,mode,aligned,offset_ns,drift_ppm,t0_ns
0,acelyzer,device,0,0,0
1,acelyzer,device,1480185004,0,0
2,acelyzer,device,2437781255,0,0
3,acelyzer,device,1772610446,0,0
EOF2
	run -2 process-traces -q --align=acelyzer -o "$T/k" "$TESTS_DIR/fixtures/kineto2ev/small.json"
	assert_output --partial "--align=acelyzer: for AIU Flex traces only"
}

@test "Flex --comm-summarize-seq: passed to flex2ev, rank 3's five sends one slice in the timeline" {
	need_shared_data
	process-traces -q -t -n c -o "$T/out" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	run -1 grep -c '"SenRdmaSend_82233 "' "$T/out/c.json"
	process-traces -q -t --comm-summarize-seq -n c -o "$T/out" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	run -0 grep -o '"SenRdmaSend_82233 "' "$T/out/c.json"
	[ "${#lines[@]}" -ge 1 ]
	run -1 grep -c 'SenRdmaSend_82233 - Xseg' "$T/out/c.json"
}
