#!/usr/bin/env bats
# pipelines/compare-configs: baseline vs test runs, tables, dashboard, report.
bats_require_minimum_version 1.5.0
load test_helper

# The inputs shared by several tests are generated, and their comparisons
# run, once, here; the tests read them (read-only: they run in parallel).
#   F/k2      2 ranks, 3 iterations, 256/512 threads x 28/56 channels
#   F/nonccl  a, b: rank 0 of F/k2's 256thread and 512thread 28-channel runs
#             without NCCL (single-GPU runs; the same files as a 1-rank
#             sweep's rank 0 without NCCL)
#   F/a       F/k2 256/28 against 512/28, c56 (256/56) and b (F/nonccl/b,
#             no collectives), not quiet: stdout in F/a.out, stderr F/a.err
#   F/j       3 ranks, 2 iterations, --jitter 3, 256/512 threads x 28
#             channels; its files' checksums in F/j.md5 (taken before F/g)
#   F/g       cmp_labelled on F/j: labels, --ranks 0,2, --xlsx
setup_file() {
	local F="$BATS_FILE_TMPDIR" GEN="$TESTS_DIR/gen/gen-kineto.py" S
	S="$F/k2"
	{
		python3 "$GEN" --ranks 2 --iters 3 --channels 28,56 "$S" &&
			mkdir -p "$F/nonccl/a" "$F/nonccl/b" &&
			strip_nccl "$S/256thread/nccl_28channels/torch_profiler/rank0/trace.json" "$F/nonccl/a/trace.json" &&
			strip_nccl "$S/512thread/nccl_28channels/torch_profiler/rank0/trace.json" "$F/nonccl/b/trace.json" &&
			python3 "$GEN" --ranks 3 --iters 2 --jitter 3 --threads 256,512 --channels 28 "$F/j" &&
			find "$F/j" -type f -exec md5sum {} + | sort >"$F/j.md5"
	} || { echo "setup_file: generating the inputs failed" >&2; return 1; }
	compare-configs -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -t c56="$S/256thread/nccl_56channels" \
		-t b="$F/nonccl/b" -o "$F/a" >"$F/a.out" 2>"$F/a.err" ||
		{ cat "$F/a.out" "$F/a.err" >&2; echo "setup_file: compare-configs (F/a) failed" >&2; return 1; }
	cmp_labelled -o "$F/g" >"$F/g.log" 2>&1 ||
		{ cat "$F/g.log" >&2; echo "setup_file: compare-configs (F/g) failed" >&2; return 1; }
}

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$BATS_FILE_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
	XLSX="$TESTS_DIR/fixtures/evkit-report/check-xlsx.py"
}

# cmp_labelled [OPTIONS]: F/j's 256thread against its 512thread 28-channel
# run, with free-text labels, ranks 0 and 2 and the workbook (F/g; the
# rerun test runs it again).
cmp_labelled() {
	local S="$BATS_FILE_TMPDIR/j"
	compare-configs -q --xlsx --ranks 0,2 -b "Base ROCm=$S/256thread/nccl_28channels" -t "new, & <fast>=$S/512thread/nccl_28channels" "$@"
}

# The plots: SVG only, as the tests draw them (EVKIT_PNG=0).
plot_list() {
	printf '%s.svg\n' "$@" | LC_ALL=C sort
}

# strip_nccl IN OUT: a copy of a Kineto trace without NCCL (a single-GPU run).
strip_nccl() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if "nccl" not in e.get("name", "").lower()]
d.pop("distributedInfo", None)
json.dump(d, open(sys.argv[2], "w"))' "$1" "$2"
}

cols() { # cols TSV LIST: the named columns, in LIST order
	awk -F'\t' -v OFS='\t' -v want="$2" '
	NR == 1 { n = split(want, w, ","); for (k = 1; k <= n; k++) for (j = 1; j <= NF; j++) if ($j == w[k]) { i[k] = j; break } }
	{ l = $(i[1]); for (k = 2; k <= n; k++) l = l OFS $(i[k]); print l }' "$1"
}

@test "--help prints usage and the exit status table" {
	run -0 --separate-stderr compare-configs --help
	assert_line --index 0 "Usage: compare-configs [options] --baseline DIR --test DIR [--test DIR...] -o OUT"
	assert_output --partial "Exit status:"
	[ -z "$stderr" ]
}

@test "usage errors exit 2 with a hint" {
	mkdir -p "$T/a" "$T/b"
	run -2 compare-configs -t "$T/b" -o "$T/o"
	assert_output --partial "a baseline is required"
	assert_output --partial "Try 'compare-configs --help'."
	run -2 compare-configs -b "$T/a" -o "$T/o"
	assert_output --partial "at least one test run is required"
	run -2 compare-configs -b "$T/a" -t "$T/b"
	assert_output --partial "an output directory is required"
	run -2 compare-configs -b "$T/a" -t "$T/b" -o "$T/o" --threshold=-1
	run -2 compare-configs -b "$T/a" -t "$T/b" -o "$T/o" extra
	run -2 compare-configs -b x="$T/a" -t x="$T/b" -o "$T/o"
	assert_output --partial "two runs are both named 'x'"
	run -2 compare-configs --bogus
}

@test "missing runs and runs without traces exit 1" {
	mkdir -p "$T/a"
	run -1 compare-configs -b "$T/nosuch" -t "$T/a" -o "$T/o"
	assert_output "compare-configs: $T/nosuch: No such file or directory"
	run -1 compare-configs -b "$T/a" -t a2="$T/a" -o "$T/o"
	assert_output --partial "no run or sweep configuration found"
}

@test "timeline, summary and comparisons match the generated durations" {
	# F/a (setup_file): F/k2's 256/28 against 512/28, c56 = 256/56 (and b,
	# without collectives: the tests of runs without NCCL read that).  The
	# quiet runs print nothing: checked in the plots and rerun tests.
	O="$F/a"
	# Per rank r: computation = 550 + 3r + 6g us (g = 0 or 5 or 2); 2.41 ms total.
	run -0 cols "$O/timeline_by_rank.tsv" source,rank,type,time_ms
	assert_line "256thread_nccl_28channels	1	computation_time	0.553"
	assert_line "512thread_nccl_28channels	0	computation_time	0.58"
	assert_line "c56	1	total_time	2.41"
	assert_line "c56	0	total_comm_time	0.09"
	run -0 cols "$O/comparison_summary.tsv" test,type,base_ms,test_ms,diff_ms,improvement_pct,status
	assert_line "512thread_nccl_28channels	computation_time	0.5515	0.5815	0.03	-5.43970988214	Worse"
	assert_line "512thread_nccl_28channels	idle_time	1.8585	1.8285	-0.03	1.61420500404	Better"
	assert_line "512thread_nccl_28channels	total_time	2.41	2.41	0	0	Similar"
	assert_line "c56	idle_time	1.8585	1.8465	-0.012	0.645682001614	Similar"
	assert_line "c56	exposed_comm_time	0	0	0		Similar"
	run -0 cols "$O/comparison_by_rank.tsv" test,rank,type,base_ms,test_ms,status,ratio
	assert_line "512thread_nccl_28channels	1	computation_time	0.553	0.583	Worse	1.05424954792"
	run -0 cols "$O/timeline_summary.tsv" source,type,time_ms,min_ms,max_ms,max_rank,num_ranks
	assert_line "c56	computation_time	0.5635	0.562	0.565	1	2"
	# Fewer channels in c56: the AllReduce takes 25 instead of 30 us.
	run -0 cols "$O/collective_comparison.tsv" test,coll,bytes,metric,base,value,improvement_pct,status
	assert_line "c56	allreduce	4194304	latency_mean_us	30	25	16.6666666667	Better"
	assert_line "c56	allreduce	4194304	busbw_mean_GBps	130.20833333333334	156.25	20	Better"
	assert_line "512thread_nccl_28channels	allgather	1048576	latency_mean_us	20	20	0	Similar"
	run -0 cols "$O/dashboard.tsv" test,metric,improvement_pct,status
	assert_line "512thread_nccl_28channels	GPU_computation_time_ms	-5.43970988214	Worse"
	assert_line "c56	NCCL_allreduce_float32_4194304B_latency_mean_us	16.6666666667	Better"
	run -0 cols "$O/stragglers.tsv" source,rank,collectives
	assert_line "c56	1	6"
}

@test "CSV copies, plots and a self-contained report" {
	python3 "$GEN" --ranks 3 --iters 2 --threads 256,512 --channels 28 "$T/sweep"
	S="$T/sweep"
	run -0 compare-configs -q -j 1 --threshold=10 -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	assert_output ""
	run -0 bash -c 'ls "$1" | LC_ALL=C sort' _ "$T/out/plots"
	assert_output "$(plot_list abs_time_comparison computation_time_by_rank gpu_time_heatmap_512thread_nccl_28channels idle_time_by_rank improvement_chart nccl_algbw nccl_busbw nccl_latency nccl_total_latency total_comm_time_by_rank total_time_by_rank)"
	# Every plot is well-formed XML (one interpreter for all of them).
	python3 -c 'import sys, xml.etree.ElementTree as E
for f in sys.argv[1:]: E.parse(f)' "$T"/out/plots/*.svg
	# The absolute chart shows the busy time's parts: idle and total time,
	# which dwarf them in a run that waits, are left to the table.
	run -0 python3 -c 'import sys, xml.etree.ElementTree as E
print(" ".join(t.text or "" for t in E.parse(sys.argv[1]).iter("{http://www.w3.org/2000/svg}text")))' "$T/out/plots/abs_time_comparison.svg"
	assert_output --partial "idle and total time: see the table"
	assert_output --partial " busy total_comm "
	[[ "${output%%GPU busy time*}" != *idle* ]]
	for f in "$T"/out/*.tsv; do
		[ "$(wc -l <"$f")" -eq "$(wc -l <"${f%.tsv}.csv")" ]
	done
	# --threshold=10: a 5.9% slower computation is Similar.
	run -0 cols "$T/out/comparison_summary.tsv" type,status
	assert_line "computation_time	Similar"
	run -0 python3 "$HTML" "$T/out/report.html"
	assert_line "images 11"
	assert_line "h2 Dashboard"
	assert_line "h2 Collective comparison"
	run -0 grep -c '<td class="worse">Worse</td>\|<td class="similar">Similar</td>' "$T/out/report.html"
}

@test "Nsight Systems exports work as runs" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 2 --iters 2 --seed 1 "$T/a" >/dev/null
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 2 --iters 2 --seed 2 "$T/b" >/dev/null
	run -0 compare-configs -q -b "$T/a" -t "$T/b" -o "$T/out"
	run -0 cols "$T/out/timeline_by_rank.tsv" source,rank,type
	assert_line "b	1	idle_time"
	run -0 cols "$T/out/dashboard.tsv" metric
	assert_line GPU_total_time_ms
	assert_line --partial NCCL_allreduce_
}

@test "reruns give the same tables and never touch the inputs" {
	# The first run is setup_file's F/g, on the jittered sweep F/j (its
	# checksums taken before it); the second replaces a copy of its output.
	cp -R "$F/g" "$T/out"
	run -0 cmp_labelled -o "$T/out"
	assert_output ""
	cmp "$F/g/comparison_by_rank.csv" "$T/out/comparison_by_rank.csv"
	assert_equal "$(find "$F/j" -type f -exec md5sum {} + | sort)" "$(cat "$F/j.md5")"
}

@test "shared data: 256thread/nccl_28channels against 512thread/nccl_28channels" {
	need_shared_data
	S="$SHARED_DATA/kineto/aorta-sweep"
	run -0 compare-configs -q -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	# 2 runs x 8 ranks x 8 timeline rows.
	run -0 bash -c 'tail -n +2 "$1" | wc -l' _ "$T/out/timeline_by_rank.tsv"
	assert_output 128
	run -0 cols "$T/out/dashboard.tsv" metric,status
	assert_output - <<'OUT'
metric	status
GPU_computation_time_ms	Worse
GPU_exposed_comm_time_ms	Worse
GPU_exposed_memcpy_time_ms	Similar
GPU_busy_time_ms	Worse
GPU_idle_time_ms	Similar
GPU_total_time_ms	Similar
GPU_total_comm_time_ms	Worse
GPU_total_memcpy_time_ms	Similar
NCCL_allreduce_float32_4194304B_latency_mean_us	Worse
NCCL_allreduce_float32_4194304B_busbw_mean_GBps	Worse
OUT
	run -0 cols "$T/out/comparison_summary.tsv" type,base_ms,test_ms
	assert_line "computation_time	1608.86657975	1924.36723663"
	run -0 python3 "$HTML" "$T/out/report.html"
	assert_line "images 11"
}

@test "runs without NCCL collectives: the report without the collective sections, saying so" {
	# F/nonccl/a, b (setup_file): rank 0 of 256thread and 512thread, 28
	# channels, without NCCL.
	run -0 --separate-stderr compare-configs -b "$F/nonccl/a" -t "$F/nonccl/b" -o "$T/out"
	[[ "$stderr" == *"no NCCL/RCCL collectives in any run"*"the report leaves out the collective sections"* ]]
	run -0 python3 "$HTML" "$T/out/report.html"
	assert_line "h2 Dashboard"
	assert_line "h2 Collectives"
	refute_line "h2 Collective comparison"
	refute_line "h2 Stragglers"
	run -0 grep -c 'No NCCL/RCCL collectives in any run' "$T/out/report.html"
	run -0 cols "$T/out/dashboard.tsv" metric
	refute_line --partial NCCL_
	run -0 ls "$T/out/plots"
	refute_line --partial nccl_
	# Runs with collectives and one without (F/a, setup_file: exited 0, its
	# stderr in F/a.err): the one without named.
	[[ "$(cat "$F/a.err")" == *"no NCCL/RCCL collectives in: b"* ]]
	run -0 grep -c 'No NCCL/RCCL collectives in: b.' "$F/a/report.html"
}

@test "free-text labels, --ranks, --xlsx read back against the TSVs" {
	# F/g (setup_file): cmp_labelled exited 0, quiet (F/g.log).
	O="$F/g"
	[ ! -s "$F/g.log" ]
	run -0 cols "$O/timeline_summary.tsv" source,type,num_ranks
	assert_line "Base ROCm	total_time	2"
	assert_line "new, & <fast>	total_time	2"
	run -0 cols "$O/dashboard.tsv" baseline,test,metric
	assert_line "Base ROCm	new, & <fast>	GPU_total_time_ms"
	run -0 grep -c '<title>Configuration comparison: Base ROCm vs new, &amp; &lt;fast&gt;</title>' "$O/report.html"
	[ -f "$O/plots/gpu_time_heatmap_new_____fast_.svg" ]
	need_openpyxl
	run -0 "$PY_XLSX" "$XLSX" "$O/final_analysis_report.xlsx" Summary_Dashboard="$O/dashboard.tsv" GPU_Summary_Cmp="$O/comparison_summary.tsv" \
		GPU_ByRank_Cmp="$O/comparison_by_rank.tsv" GPU_Timeline_Summary="$O/timeline_summary.tsv" GPU_Timeline_ByRank="$O/timeline_by_rank.tsv" \
		NCCL_Cmp="$O/collective_comparison.tsv" NCCL_Collectives="$O/collectives.tsv" NCCL_Stragglers="$O/stragglers.tsv" Kernel_Cmp="$O/kernel_comparison.tsv"
	assert_line "sheet Summary_Dashboard rows 12 cols 7"
	assert_line "sheet GPU_ByRank_Cmp rows 16 cols 14"
}
