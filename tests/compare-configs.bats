#!/usr/bin/env bats
# pipelines/compare-configs: baseline vs test runs, tables, dashboard, report.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
	XLSX="$TESTS_DIR/fixtures/evkit-report/check-xlsx.py"
	BROWSER="$TESTS_DIR/fixtures/evkit-report/browser-check.sh"
}


# The plots, SVG (and PNG when gnuplot has pngcairo).
plot_list() {
	local f
	for f in "$@"; do
		echo "$f.svg"
		if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then echo "$f.png"; fi
	done | LC_ALL=C sort
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
	local f="$1" idx="" c
	for c in ${2//,/ }; do idx+="${idx:+,}$(head -n 1 "$f" | tr '\t' '\n' | grep -nxF "$c" | cut -d: -f1)"; done
	awk -F'\t' -v OFS='\t' -v idx="$idx" '{ n = split(idx, i, ","); l = $(i[1]); for (k = 2; k <= n; k++) l = l OFS $(i[k]); print l }' "$f"
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
	python3 "$GEN" --ranks 2 --iters 3 --channels 28,56 "$T/sweep"
	S="$T/sweep"
	run -0 compare-configs -q -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -t c56="$S/256thread/nccl_56channels" -o "$T/out"
	assert_output ""
	# Per rank r: computation = 550 + 3r + 6g us (g = 0 or 5 or 2); 2.41 ms total.
	run -0 cols "$T/out/timeline_by_rank.tsv" source,rank,type,time_ms
	assert_line "256thread_nccl_28channels	1	computation_time	0.553"
	assert_line "512thread_nccl_28channels	0	computation_time	0.58"
	assert_line "c56	1	total_time	2.41"
	assert_line "c56	0	total_comm_time	0.09"
	run -0 cols "$T/out/comparison_summary.tsv" test,type,base_ms,test_ms,diff_ms,improvement_pct,status
	assert_line "512thread_nccl_28channels	computation_time	0.5515	0.5815	0.03	-5.43970988214	Worse"
	assert_line "512thread_nccl_28channels	idle_time	1.8585	1.8285	-0.03	1.61420500404	Better"
	assert_line "512thread_nccl_28channels	total_time	2.41	2.41	0	0	Similar"
	assert_line "c56	idle_time	1.8585	1.8465	-0.012	0.645682001614	Similar"
	assert_line "c56	exposed_comm_time	0	0	0		Similar"
	run -0 cols "$T/out/comparison_by_rank.tsv" test,rank,type,base_ms,test_ms,status,ratio
	assert_line "512thread_nccl_28channels	1	computation_time	0.553	0.583	Worse	1.05424954792"
	run -0 cols "$T/out/timeline_summary.tsv" source,type,time_ms,min_ms,max_ms,max_rank,num_ranks
	assert_line "c56	computation_time	0.5635	0.562	0.565	1	2"
	# Fewer channels in c56: the AllReduce takes 25 instead of 30 us.
	run -0 cols "$T/out/collective_comparison.tsv" test,coll,bytes,metric,base,value,improvement_pct,status
	assert_line "c56	allreduce	4194304	latency_mean_us	30	25	16.6666666667	Better"
	assert_line "c56	allreduce	4194304	busbw_mean_GBps	130.20833333333334	156.25	20	Better"
	assert_line "512thread_nccl_28channels	allgather	1048576	latency_mean_us	20	20	0	Similar"
	run -0 cols "$T/out/dashboard.tsv" test,metric,improvement_pct,status
	assert_line "512thread_nccl_28channels	GPU_computation_time_ms	-5.43970988214	Worse"
	assert_line "c56	NCCL_allreduce_float32_4194304B_latency_mean_us	16.6666666667	Better"
	run -0 cols "$T/out/stragglers.tsv" source,rank,collectives
	assert_line "c56	1	6"
}

@test "CSV copies, plots and a self-contained report" {
	python3 "$GEN" --ranks 3 --iters 2 --threads 256,512 --channels 28 "$T/sweep"
	S="$T/sweep"
	run -0 compare-configs -q -j 1 --threshold=10 -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	run -0 bash -c 'ls "$1" | LC_ALL=C sort' _ "$T/out/plots"
	assert_output "$(plot_list abs_time_comparison computation_time_by_rank gpu_time_heatmap_512thread_nccl_28channels idle_time_by_rank improvement_chart nccl_algbw nccl_busbw nccl_latency nccl_total_latency total_comm_time_by_rank total_time_by_rank)"
	for f in "$T"/out/plots/*.svg; do python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$f"; done
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
	python3 "$GEN" --ranks 2 --iters 2 --jitter 3 --channels 28 "$T/sweep"
	before=$(find "$T/sweep" -type f -exec md5sum {} + | sort)
	S="$T/sweep"
	run -0 compare-configs -q -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	cp "$T/out/comparison_by_rank.csv" "$T/first.csv"
	run -0 compare-configs -q -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	cmp "$T/first.csv" "$T/out/comparison_by_rank.csv"
	assert_equal "$(find "$T/sweep" -type f -exec md5sum {} + | sort)" "$before"
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
	python3 "$GEN" --ranks 1 --iters 3 --threads 256,512 --channels 28 "$T/sweep"
	mkdir -p "$T/a" "$T/b"
	strip_nccl "$T/sweep/256thread/nccl_28channels/torch_profiler/rank0/trace.json" "$T/a/trace.json"
	strip_nccl "$T/sweep/512thread/nccl_28channels/torch_profiler/rank0/trace.json" "$T/b/trace.json"
	run -0 --separate-stderr compare-configs -b "$T/a" -t "$T/b" -o "$T/out"
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
	# One run with collectives, one without: both named.
	run -0 --separate-stderr compare-configs -b "$T/sweep/256thread/nccl_28channels" -t "$T/b" -o "$T/out2"
	[[ "$stderr" == *"no NCCL/RCCL collectives in: b"* ]]
	run -0 grep -c 'No NCCL/RCCL collectives in: b.' "$T/out2/report.html"
}

@test "free-text labels, --ranks, --xlsx read back against the TSVs" {
	need_openpyxl
	python3 "$GEN" --ranks 3 --iters 2 --threads 256,512 --channels 28 "$T/sweep"
	S="$T/sweep"
	run -0 compare-configs -q --xlsx --ranks 0,2 -b "Base ROCm=$S/256thread/nccl_28channels" -t "new, & <fast>=$S/512thread/nccl_28channels" -o "$T/out"
	run -0 cols "$T/out/timeline_summary.tsv" source,type,num_ranks
	assert_line "Base ROCm	total_time	2"
	assert_line "new, & <fast>	total_time	2"
	run -0 cols "$T/out/dashboard.tsv" baseline,test,metric
	assert_line "Base ROCm	new, & <fast>	GPU_total_time_ms"
	run -0 grep -c '<title>Configuration comparison: Base ROCm vs new, &amp; &lt;fast&gt;</title>' "$T/out/report.html"
	[ -f "$T/out/plots/gpu_time_heatmap_new_____fast_.svg" ]
	O="$T/out"
	run -0 "$PY_XLSX" "$XLSX" "$O/final_analysis_report.xlsx" Summary_Dashboard="$O/dashboard.tsv" GPU_Summary_Cmp="$O/comparison_summary.tsv" \
		GPU_ByRank_Cmp="$O/comparison_by_rank.tsv" GPU_Timeline_Summary="$O/timeline_summary.tsv" GPU_Timeline_ByRank="$O/timeline_by_rank.tsv" \
		NCCL_Cmp="$O/collective_comparison.tsv" NCCL_Collectives="$O/collectives.tsv" NCCL_Stragglers="$O/stragglers.tsv" Kernel_Cmp="$O/kernel_comparison.tsv"
	assert_line "sheet Summary_Dashboard rows 12 cols 7"
	assert_line "sheet GPU_ByRank_Cmp rows 16 cols 14"
}

@test "the report in headless Chromium: every plot drawn at its size, no console message" {
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
		skip "Chromium is not installed (Debian: chromium): the report is not checked in a browser"
	python3 "$GEN" --ranks 2 --iters 2 --threads 256,512 --channels 28 "$T/sweep"
	S="$T/sweep"
	run -0 compare-configs -q -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	run -0 "$BROWSER" "$T/out/report.html" "$T/b"
	assert_line --regexp '^screenshot 1280 2400 [0-9]+$'
	assert_line "console 0"
	assert_line "images 11"
	# Each plot decoded at the size its SVG declares, and drew something.
	while read -r _ alt state w h _ ink; do
		svg="$T/out/plots/$alt.svg"
		assert_equal "$state" loaded
		assert_equal "$w $h" "$(sed -n 's/^ *width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$svg" | head -n 1)"
		[ "$ink" -gt 2000 ] || fail "$alt: only $ink non-white pixels"
	done < <(printf '%s\n' "${lines[@]}" | grep '^img ')
	# The screenshot is not a blank page (a white 1280x2400 PNG is ~10 KB).
	[ "$(stat -c %s "$T/b/screenshot.png")" -gt 50000 ]
	# The check fails on a broken plot.
	sed 's|base64,PD94|base64,AAAA|' "$T/out/report.html" >"$T/broken.html"
	run -0 "$BROWSER" "$T/broken.html" "$T/b2"
	assert_line --regexp '^img improvement_chart broken 0 0 ink -1$'
}
