#!/usr/bin/env bats
# pipelines/compare-configs: baseline vs test runs, tables, dashboard, report.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
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
	assert_output --partial "no rank traces"
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
	run -0 ls "$T/out/plots"
	assert_output - <<'OUT'
abs_time_comparison.svg
computation_time_by_rank.svg
gpu_time_heatmap_512thread_nccl_28channels.svg
idle_time_by_rank.svg
improvement_chart.svg
nccl_algbw.svg
nccl_busbw.svg
nccl_latency.svg
nccl_total_latency.svg
total_comm_time_by_rank.svg
total_time_by_rank.svg
OUT
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
