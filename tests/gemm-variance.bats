#!/usr/bin/env bats
# pipelines/gemm-variance: GEMM variance over a sweep, overlap, plots, report.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
	V="$TESTS_DIR/fixtures/ev2perfetto/validate.py"
}

# Columns of the top-k table that the generator fixes exactly.
EXACT='threads,channel,rank,kernel_name,kernel_time_min_us,kernel_time_max_us,time_diff_us,count,min_duration_timestamp_ms,max_duration_timestamp_ms,time_between_min_max_ms,overlapping_collective_count,max_overlap_percentage,total_overlap_duration_ms'
cols() { # cols TSV LIST: the named columns, in LIST order
	local f="$1" idx="" c
	for c in ${2//,/ }; do idx+="${idx:+,}$(head -n 1 "$f" | tr '\t' '\n' | grep -nxF "$c" | cut -d: -f1)"; done
	awk -F'\t' -v OFS='\t' -v idx="$idx" '{ n = split(idx, i, ","); l = $(i[1]); for (k = 2; k <= n; k++) l = l OFS $(i[k]); print l }' "$f"
}

@test "--help prints usage and the exit status table" {
	run -0 --separate-stderr gemm-variance --help
	assert_line --index 0 "Usage: gemm-variance [options] -o OUT SWEEP_DIR"
	assert_output --partial "Exit status:"
	[ -z "$stderr" ]
}

@test "usage errors exit 2 with a hint" {
	run -2 gemm-variance "$T"
	assert_output --partial "an output directory is required"
	assert_output --partial "Try 'gemm-variance --help'."
	run -2 gemm-variance -o "$T/o" -k 0 "$T"
	assert_output --partial "--top-k: not a positive number: '0'"
	run -2 gemm-variance -o "$T/o" -j x "$T"
	run -2 gemm-variance -o "$T/o" --key=shape "$T"
	run -2 gemm-variance -o "$T/o" "$T" "$T"
	run -2 gemm-variance --no-such-option
}

@test "a missing directory or one without traces exits 1" {
	run -1 gemm-variance -o "$T/o" "$T/nosuch"
	assert_output "gemm-variance: $T/nosuch: No such file or directory"
	mkdir -p "$T/empty"
	run -1 gemm-variance -o "$T/o" "$T/empty"
	assert_output --partial "no run or sweep configuration found"
}

@test "a sweep: exact top-k rows with timestamps and overlap of the slowest instance" {
	python3 "$GEN" --ranks 2 --iters 3 "$T/sweep"
	run -0 gemm-variance -q -k 1 -o "$T/out" "$T/sweep"
	assert_output ""
	run -0 cols "$T/out/top1_gemm_kernels_time_variance.tsv" "$EXACT"
	# GEMM B: 50 + g, +40 in the last iteration, overlapped by an AllReduce
	# of 30 - 5 (C/28 - 1) us and an AllGather of 20 us whose union is 30 us.
	assert_output - <<'OUT'
threads	channel	rank	kernel_name	kernel_time_min_us	kernel_time_max_us	time_diff_us	count	min_duration_timestamp_ms	max_duration_timestamp_ms	time_between_min_max_ms	overlapping_collective_count	max_overlap_percentage	total_overlap_duration_ms
256	28	0	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	50	90	40	3	1.200000	3.200000	2.000000	2	33.333333333333336	0.03
256	28	1	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	50	90	40	3	1.200000	3.200000	2.000000	2	33.333333333333336	0.03
256	56	0	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	52	92	40	3	1.200000	3.200000	2.000000	2	27.17391304347826	0.03
256	56	1	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	52	92	40	3	1.200000	3.200000	2.000000	2	27.17391304347826	0.03
512	28	0	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	55	95	40	3	1.200000	3.200000	2.000000	2	31.57894736842105	0.03
512	28	1	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	55	95	40	3	1.200000	3.200000	2.000000	2	31.57894736842105	0.03
512	56	0	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	57	97	40	3	1.200000	3.200000	2.000000	2	25.77319587628866	0.03
512	56	1	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	57	97	40	3	1.200000	3.200000	2.000000	2	25.77319587628866	0.03
OUT
	# The CSV carries the same rows; the op signature holds quotes and commas.
	run -0 head -n 2 "$T/out/top1_gemm_kernels_time_variance.csv"
	assert_line --index 0 --partial "threads,channel,rank,kernel_name,kernel_time_min_us,kernel_time_max_us,time_diff_us,count,mean_us,std_us,cv,p50_us,p99_us,"
	assert_line --index 1 --partial ',"aten::mm dims=[[64,64],[64,64]] types=[""float"",""float""]"'
}

@test "a sweep: plots, merged timelines, tables and a self-contained report" {
	python3 "$GEN" --ranks 2 --iters 3 --channels 28,42,56 "$T/sweep"
	run -0 gemm-variance -q -j 2 -o "$T/out" "$T/sweep"
	run -0 ls "$T/out/plots"
	assert_output - <<'OUT'
variance_by_channels_boxplot.svg
variance_by_ranks_boxplot.svg
variance_by_threads_boxplot.svg
variance_thread_channel_interaction.svg
variance_violin_combined.svg
OUT
	for f in "$T"/out/plots/*.svg; do python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$f"; done
	run -0 ls "$T/out/merged_traces"
	assert_output - <<'OUT'
256thread_28ch.json.gz
256thread_42ch.json.gz
256thread_56ch.json.gz
512thread_28ch.json.gz
512thread_42ch.json.gz
512thread_56ch.json.gz
OUT
	run -0 python3 "$V" "$T/out/merged_traces/512thread_42ch.json.gz" --gzip
	assert_line "process 2 rank 1 GPU (device 1)"
	# Two GEMMs x 6 configurations x 2 ranks, all within the top 5.
	run -0 bash -c 'tail -n +2 "$1" | wc -l' _ "$T/out/top5_gemm_kernels_time_variance.tsv"
	assert_output 24
	run -0 cols "$T/out/variance_summary.tsv" dimension,value,n,max_us
	assert_output - <<'OUT'
dimension	value	n	max_us
threads	256	12	40
threads	512	12	40
channel	28	8	40
channel	42	8	40
channel	56	8	40
rank	0	12	40
rank	1	12	40
OUT
	# Across the sweep: the fastest GEMM B ran in 256/28, the slowest in 512/56.
	run -0 cols "$T/out/gemm_across_configs.tsv" name,count,min_us,min_config,max_us,max_config,range_us
	assert_line "Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	36	50	256thread_28ch	97	512thread_56ch	47"
	run -0 cols "$T/out/gemm_by_config.tsv" config,name,count,min_us,max_us
	assert_line "512thread_42ch	Cijk_Ailk_Bljk_SB_MT128x128x32_MI32x32x1x2	6	106	127"
	# Every GEMM instance: 2 GEMMs x 3 iterations x 2 ranks x 6 configurations.
	run -0 bash -c 'tail -n +2 "$1" | wc -l' _ "$T/out/gemm_overlap_instances.tsv"
	assert_output 72
	run -0 python3 "$HTML" "$T/out/report.html"
	assert_line "images 5"
	assert_line "h2 Top 5 GEMMs per configuration and rank"
	assert_line "h2 Merged timelines"
}

@test "the <CU>cu_<T>threads layout gives cu and threads columns and plots" {
	python3 "$GEN" --ranks 3 --iters 2 --cu 56,37,32 --threads 256,384,512 "$T/sweep"
	run -0 gemm-variance -q -k 1 --no-traces -o "$T/out" "$T/sweep"
	run -0 cols "$T/out/top1_gemm_kernels_time_variance.tsv" cu,threads,rank,time_diff_us
	assert_line --index 0 "cu	threads	rank	time_diff_us"
	assert_line "37	384	2	40"
	assert_equal "${#lines[@]}" 10
	run -0 ls "$T/out/plots"
	assert_line variance_by_cu_boxplot.svg
	assert_line variance_cu_thread_interaction.svg
	[ ! -e "$T/out/merged_traces" ]
}

@test "a single run of any number of ranks, keyed by kernel name on request" {
	python3 "$GEN" --run --ranks 5 --iters 2 --gzip "$T/run"
	run -0 gemm-variance -q --key=name -k 1 -o "$T/out" "$T/run"
	run -0 cols "$T/out/top1_gemm_kernels_time_variance.tsv" rank,kernel_name,time_diff_us,op_signature
	assert_line --index 0 "rank	kernel_name	time_diff_us	op_signature"
	assert_line --index 5 "4	Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x1x1	40	"
	run -0 ls "$T/out/merged_traces"
	assert_output run.json.gz
}

@test "reruns give the same tables and never touch the inputs" {
	python3 "$GEN" --ranks 2 --iters 3 --jitter 5 "$T/sweep"
	before=$(find "$T/sweep" -type f -exec md5sum {} + | sort)
	run -0 gemm-variance -q -o "$T/out" "$T/sweep"
	cp "$T/out/top5_gemm_kernels_time_variance.csv" "$T/first.csv"
	run -0 gemm-variance -q -j 1 -o "$T/out" "$T/sweep"
	cmp "$T/first.csv" "$T/out/top5_gemm_kernels_time_variance.csv"
	after=$(find "$T/sweep" -type f -exec md5sum {} + | sort)
	assert_equal "$after" "$before"
	[ -z "$(find "$T/sweep" -newer "$T/first.csv")" ]
}

@test "a broken trace fails the run with the converter's message" {
	python3 "$GEN" --ranks 2 --iters 2 --threads 256 --channels 28 "$T/sweep"
	f="$T/sweep/256thread/nccl_28channels/torch_profiler/rank1/trace.json"
	head -c 500 "$f" >"$T/cut" && mv "$T/cut" "$f"
	run -1 gemm-variance -q -o "$T/out" "$T/sweep"
	assert_output --partial "kineto2ev: "
	assert_output --partial "gemm-variance: a conversion failed"
	[ ! -e "$T/out/report.html" ]
}

@test "shared data: the aorta sweep end to end" {
	need_shared_data
	run -0 gemm-variance -q -j 2 -o "$T/out" "$SHARED_DATA/kineto/aorta-sweep"
	# 2 thread x 2 channel configurations x 8 ranks x top 5.
	run -0 bash -c 'tail -n +2 "$1" | wc -l' _ "$T/out/top5_gemm_kernels_time_variance.tsv"
	assert_output 160
	run -0 cols "$T/out/variance_summary.tsv" dimension,value,n
	assert_output - <<'OUT'
dimension	value	n
threads	256	80
threads	512	80
channel	28	80
channel	56	80
rank	0	20
rank	1	20
rank	2	20
rank	3	20
rank	4	20
rank	5	20
rank	6	20
rank	7	20
OUT
	# The widest range: its min and max are real instances of that kernel
	# on that rank and configuration, at the reported times.
	run -0 cols "$T/out/top5_gemm_kernels_time_variance.tsv" threads,channel,rank,kernel_time_min_us,kernel_time_max_us,min_duration_timestamp_ms,max_duration_timestamp_ms
	assert_line --index 1 "512	56	4	58631.21	70497.025	1765217845244.160340	1765217845592.880893"
	run -0 bash -c 'ev-view -M -H -c rank,ts,dur --type=kernel --rank=4 "$1"/512thread/nccl_56channels/torch_profiler/rank4/*.json.gz 2>/dev/null || kineto2ev -q "$1"/512thread/nccl_56channels/torch_profiler/rank4/*.json.gz | ev-view -M -H -c rank,ts,dur --type=kernel' _ "$SHARED_DATA/kineto/aorta-sweep"
	assert_line "4	1765217845244160340	58631210"
	assert_line "4	1765217845592880893	70497025"
	run -0 ls "$T/out/merged_traces"
	assert_equal "${#lines[@]}" 4
	run -0 python3 "$HTML" "$T/out/report.html"
	assert_line "images 5"
}
