#!/usr/bin/env bats
# pipelines/gemm-variance: GEMM variance over a sweep, overlap, plots, report.
bats_require_minimum_version 1.5.0
load test_helper

# Each sweep that several tests read is generated once, and each pipeline
# run that several tests check is made once, here; the tests treat them as
# read-only (one that changes a sweep or an output works on a copy in
# $BATS_TEST_TMPDIR).
#   SW_A   --ranks 2 --iters 3            OUT_A1: -q -k 1 (stdout, stderr beside it)
#   SW_J   --ranks 2 --iters 3 --jitter 5 OUT_J1: --xlsx, with progress, at
#          SOURCE_DATE_EPOCH=1700000000 (the first of the reruns); SW_J_MD5 its
#          inputs before that run
#   SW_S1  --ranks 2 --iters 2 --threads 256 --channels 28 (one configuration)
#   OUT_AORTA  -q -j 2 over the shared aorta sweep (only when the shared data is there)
setup_file() {
	local F="$BATS_FILE_TMPDIR" GEN="$TESTS_DIR/gen/gen-kineto.py"
	export SW_A="$F/sweep-a" SW_J="$F/sweep-j" SW_S1="$F/sweep-s1" SW_J_MD5="$F/sweep-j.md5"
	export OUT_A1="$F/out-a1" OUT_J1="$F/out-j1" OUT_AORTA="$F/out-aorta"
	python3 "$GEN" --ranks 2 --iters 3 "$SW_A" || { echo "setup_file: generating $SW_A failed" >&2; return 1; }
	python3 "$GEN" --ranks 2 --iters 3 --jitter 5 "$SW_J" || { echo "setup_file: generating $SW_J failed" >&2; return 1; }
	python3 "$GEN" --ranks 2 --iters 2 --threads 256 --channels 28 "$SW_S1" || { echo "setup_file: generating $SW_S1 failed" >&2; return 1; }
	find "$SW_J" -type f -exec md5sum {} + | sort >"$SW_J_MD5"
	gemm-variance -q -k 1 -o "$OUT_A1" "$SW_A" >"$OUT_A1.stdout" 2>"$OUT_A1.stderr" ||
		{ cat "$OUT_A1.stderr" >&2; echo "setup_file: gemm-variance over $SW_A failed" >&2; return 1; }
	SOURCE_DATE_EPOCH=1700000000 gemm-variance --xlsx -o "$OUT_J1" "$SW_J" >"$OUT_J1.stdout" 2>"$OUT_J1.stderr" ||
		{ cat "$OUT_J1.stderr" >&2; echo "setup_file: gemm-variance over $SW_J failed" >&2; return 1; }
	if [ -d "$SHARED_DATA" ]; then
		gemm-variance -q -j 2 -o "$OUT_AORTA" "$SHARED_DATA/kineto/aorta-sweep" ||
			{ echo "setup_file: gemm-variance over the shared aorta sweep failed" >&2; return 1; }
	fi
}

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
	V="$TESTS_DIR/fixtures/ev2perfetto/validate.py"
	BOXES="$TESTS_DIR/fixtures/evkit-report/check-boxes.py"
	XLSX="$TESTS_DIR/fixtures/evkit-report/check-xlsx.py"
}


# The plots gemm-variance writes: SVG only, as the tests draw them
# (EVKIT_PNG=0; one test draws the PNGs).
plot_list() {
	printf '%s.svg\n' "$@" | sort
}

# Columns of the top-k table that the generator fixes exactly.
EXACT='threads,channel,rank,kernel_name,kernel_time_min_us,kernel_time_max_us,time_diff_us,count,min_duration_timestamp_ms,max_duration_timestamp_ms,time_between_min_max_ms,overlapping_collective_count,max_overlap_percentage,total_overlap_duration_ms'
cols() { # cols TSV LIST: the named columns, in LIST order
	awk -F'\t' -v OFS='\t' -v want="$2" '
		NR == 1 { n = split(want, w, ","); for (k = 1; k <= n; k++) for (i = NF; i >= 1; i--) if ($i == w[k]) c[k] = i }
		{ l = $(c[1]); for (k = 2; k <= n; k++) l = l OFS $(c[k]); print l }' "$1"
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
	# OUT_A1: gemm-variance -q -k 1 over SW_A (--ranks 2 --iters 3), silent.
	[ ! -s "$OUT_A1.stdout" ]
	[ ! -s "$OUT_A1.stderr" ]
	run -0 cols "$OUT_A1/top1_gemm_kernels_time_variance.tsv" "$EXACT"
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
	run -0 head -n 2 "$OUT_A1/top1_gemm_kernels_time_variance.csv"
	assert_line --index 0 --partial "threads,channel,rank,kernel_name,kernel_time_min_us,kernel_time_max_us,time_diff_us,count,mean_us,std_us,cv,p50_us,p99_us,"
	assert_line --index 1 --partial ',"aten::mm dims=[[64,64],[64,64]] types=[""float"",""float""]"'
}

@test "a sweep: plots, merged timelines, tables and a self-contained report" {
	python3 "$GEN" --ranks 2 --iters 3 --channels 28,42,56 "$T/sweep"
	run -0 gemm-variance -q -j 2 -o "$T/out" "$T/sweep"
	run -0 ls "$T/out/plots"
	assert_output "$(plot_list variance_by_channels_boxplot variance_by_ranks_boxplot variance_by_threads_boxplot variance_thread_channel_interaction variance_violin_combined)"
	# Every SVG is well-formed XML (one python for the five).
	python3 -c 'import sys, xml.etree.ElementTree as E; [E.parse(f) for f in sys.argv[1:]]' "$T"/out/plots/*.svg
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

@test "reruns: every SVG and table byte-identical, the report too with SOURCE_DATE_EPOCH; inputs never touched; PNGs beside the SVGs" {
	# The first run is OUT_J1 (setup_file: default -j, merged traces, --xlsx,
	# SOURCE_DATE_EPOCH=1700000000, EVKIT_PNG=0) over SW_J (--ranks 2
	# --iters 3 --jitter 5); the second runs one job at a time, with its
	# temporary files in $T, and as outside the tests (EVKIT_PNG unset) draws
	# a PNG beside each SVG when gnuplot has pngcairo.
	run -0 --separate-stderr env -u EVKIT_PNG SOURCE_DATE_EPOCH=1700000000 TMPDIR="$T" gemm-variance -q -j 1 --xlsx -o "$T/b" "$SW_J"
	[ -z "$stderr" ]
	for f in "$OUT_J1"/plots/*.svg "$OUT_J1"/*.tsv "$OUT_J1"/*.csv; do
		cmp "$f" "$T/b/${f#"$OUT_J1"/}"
	done
	run -1 grep -l -e /tmp -e "$T" -e "$BATS_FILE_TMPDIR" "$OUT_J1"/plots/*.svg "$T"/b/plots/*.svg
	cmp "$OUT_J1/report.html" "$T/b/report.html"
	# Neither run changed the inputs.
	assert_equal "$(find "$SW_J" -type f -exec md5sum {} + | sort)" "$(cat "$SW_J_MD5")"
	[ -z "$(find "$SW_J" -newer "$OUT_J1/top5_gemm_kernels_time_variance.csv")" ]
	# A PNG of the same size stands beside each SVG, drawn by the same
	# gnuplot, and the SVGs are those of the SVG-only run.
	gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 || skip "gnuplot has no pngcairo terminal: the PNGs are not checked"
	run -0 python3 - "$T/b/plots" "$OUT_J1/plots" <<'PY'
import os, re, struct, sys
png_dir, svg_only = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(png_dir)):
    if not f.endswith(".svg"):
        continue
    svg = open(os.path.join(png_dir, f), "rb").read()
    assert svg == open(os.path.join(svg_only, f), "rb").read(), f + " differs from the SVG-only run"
    w, h = re.search(rb'width="(\d+)" height="(\d+)"', svg).groups()
    d = open(os.path.join(png_dir, f[:-4] + ".png"), "rb").read(24)
    assert d[:8] == b"\x89PNG\r\n\x1a\n", f
    print(f[:-4], int(w), int(h), *struct.unpack(">II", d[16:24]))
PY
	assert_line "variance_by_channels_boxplot 400 400 400 400"
	assert_line "variance_violin_combined 1080 420 1080 420"
	assert_equal "${#lines[@]}" 5
	run -0 ls "$T/b/plots"
	assert_equal "${#lines[@]}" 10
}

@test "a broken trace fails the run with the converter's message" {
	cp -R "$SW_S1" "$T/sweep"
	f="$T/sweep/256thread/nccl_28channels/torch_profiler/rank1/trace.json"
	head -c 500 "$f" >"$T/cut" && mv "$T/cut" "$f"
	run -1 gemm-variance -q -o "$T/out" "$T/sweep"
	assert_output --partial "kineto2ev: "
	assert_output --partial "gemm-variance: a conversion failed"
	[ ! -e "$T/out/report.html" ]
}

@test "shared data: the aorta sweep end to end" {
	need_shared_data
	# OUT_AORTA: gemm-variance -q -j 2 over the aorta sweep (setup_file).
	# 2 thread x 2 channel configurations x 8 ranks x the top 5 GEMMs: a
	# GEMM is (op signature, operand layout from the kernel name), as
	# TraceLens's GEMM sheet and aorta's table have it; each rank has 6.
	run -0 bash -c 'tail -n +2 "$1" | wc -l' _ "$OUT_AORTA/top5_gemm_kernels_time_variance.tsv"
	assert_output 160
	run -0 cols "$OUT_AORTA/variance_summary.tsv" dimension,value,n
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
	# The widest range (aorta's first row too): its min and max are real
	# instances of that GEMM on that rank and configuration, at the
	# reported times (the minimum is a kernel the trace generator placed
	# 600 s later).
	run -0 cols "$OUT_AORTA/top5_gemm_kernels_time_variance.tsv" threads,channel,rank,kernel_time_min_us,kernel_time_max_us,min_duration_timestamp_ms,max_duration_timestamp_ms
	assert_line --index 1 "512	56	3	35042.057	69758.8	1765218445349.860920	1765217845291.850419"
	run -0 bash -c 'kineto2ev -q "$1"/512thread/nccl_56channels/torch_profiler/rank3/*.json.gz | ev-view -M -H -c rank,ts,dur --type=kernel' _ "$SHARED_DATA/kineto/aorta-sweep"
	assert_line "3	1765218445349860920	35042057"
	assert_line "3	1765217845291850419	69758800"
	run -0 ls "$OUT_AORTA/merged_traces"
	assert_equal "${#lines[@]}" 4
	run -0 python3 "$HTML" "$OUT_AORTA/report.html"
	assert_line "images 5"
	# Named by the directory's own name, not its path with '/' as '_'.
	run -0 grep -c '<p class="note">Sweep aorta-sweep (' "$OUT_AORTA/report.html"
	run -1 grep -F 'Sweep _' "$OUT_AORTA/report.html"
	# Each GEMM across configurations: one kernel launched by several ops
	# or shapes is on several rows, told apart by the op signature shown.
	run -0 python3 "$TESTS_DIR/fixtures/evkit-report/table-rows.py" "$OUT_AORTA/report.html" "Each GEMM across configurations (all ranks pooled)"
	assert_line --index 0 --regexp $'^config\top_signature\tname\tcount\t'
	run -0 bash -c 'cut -f1,3 <<<"$1" | sort | uniq -d | wc -l' _ "$output"
	[ "$output" -gt 0 ] || fail "expected kernels on several rows of one configuration"
	run -0 python3 "$TESTS_DIR/fixtures/evkit-report/table-rows.py" "$OUT_AORTA/report.html" "Each GEMM across configurations (all ranks pooled)"
	run -0 bash -c 'cut -f1-3 <<<"$1" | sort | uniq -d' _ "$output"
	assert_output ""
}

@test "box plots: one box per value of the key they name, with counts and axis labels" {
	python3 "$GEN" --ranks 3 --iters 3 --channels 28,42,56 "$T/sweep"
	run -0 gemm-variance -q -k 1 --no-traces -o "$T/out" "$T/sweep"
	P="$T/out/plots"
	# 2 thread counts x 3 channel counts x 3 ranks, one top row each.
	run -0 python3 "$BOXES" "$P/variance_by_threads_boxplot.svg" threads "time_diff (us)" 256=9 512=9
	assert_output "boxes 2"
	run -0 python3 "$BOXES" "$P/variance_by_channels_boxplot.svg" channel "time_diff (us)" 28=6 42=6 56=6
	assert_output "boxes 3"
	run -0 python3 "$BOXES" "$P/variance_by_ranks_boxplot.svg" rank "time_diff (us)" 0=6 1=6 2=6
	assert_output "boxes 3"
	# The PNGs (drawn when EVKIT_PNG is unset) are checked in the reruns test.
}

@test "a symlinked, oddly named sweep with a subset selection" {
	python3 "$GEN" --ranks 4 --iters 3 --channels 28,42,56 "$T/real"
	# Names with spaces, a leading '-' and a newline; symlinked directories
	# and trace files.
	odd_sweep "$T/real" "$T/-my sweep"$'\n'"v2"
	cd "$T"
	run -0 gemm-variance -q -k 1 --select channels=42,28 --ranks 1,3 -o "-out dir" -- "-my sweep"$'\n'"v2"
	run -0 cols "$T/-out dir/top1_gemm_kernels_time_variance.tsv" threads,channel,rank
	assert_output - <<'OUT'
threads	channel	rank
256	28	1
256	28	3
256	42	1
256	42	3
512	28	1
512	28	3
512	42	1
512	42	3
OUT
	run -0 ls "$T/-out dir/merged_traces"
	assert_equal "${#lines[@]}" 4
	run -0 python3 "$BOXES" "$T/-out dir/plots/variance_by_ranks_boxplot.svg" rank "time_diff (us)" 1=4 3=4
	# Nothing was written into the inputs, no staging directory is left.
	[ -z "$(find "$T/real" -newer "$T/-out dir/report.html" -type f)" ]
	run -0 find "$T/-out dir" -name '.gemm-variance.stage.*'
	assert_output ""
	# A selection that leaves nothing, and an unknown key, say so.
	run -1 gemm-variance -q --select channels=99 -o "$T/o2" "$T/real"
	assert_output --partial "leaves no configuration"
	run -2 gemm-variance -q --select cu=56 -o "$T/o2" "$T/real"
	assert_output --partial "--select: 'cu' is not a key of"
}

@test "any layout: keys from a path regex; a flat folder of JSON files" {
	# experiments/<system>-t<T>-c<C>/gpu<R>.json over SW_A (--ranks 2 --iters 3)
	for t in 256 512; do for c in 28 56; do
		d="$T/exp/mi300 box-t$t-c$c"
		mkdir -p "$d"
		for r in 0 1; do ln -s "$SW_A/${t}thread/nccl_${c}channels/torch_profiler/rank$r/trace.json" "$d/gpu$r.json"; done
	done; done
	run -0 gemm-variance -q -k 1 --no-traces -x '-t([0-9]+)-c([0-9]+)/gpu([0-9]+)\.json$' -K threads,channels,rank -o "$T/out" "$T/exp"
	run -0 cols "$T/out/top1_gemm_kernels_time_variance.tsv" threads,channel,rank,time_diff_us
	assert_line --index 0 "threads	channel	rank	time_diff_us"
	assert_line "512	56	1	40"
	assert_equal "${#lines[@]}" 9
	# The same top rows as the known layout gives (OUT_A1: -q -k 1 over SW_A).
	cmp "$T/out/top1_gemm_kernels_time_variance.tsv" "$OUT_A1/top1_gemm_kernels_time_variance.tsv"
	# Usage errors of the regex options.
	run -2 gemm-variance -x '(' -K a -o "$T/o" "$T/exp"
	assert_output --partial "not a valid extended regular expression"
	run -2 gemm-variance -x 'a' -o "$T/o" "$T/exp"
	assert_output --partial "--path-regex needs --path-keys"
	run -1 gemm-variance -x 'nomatch([0-9])' -K a -o "$T/o" "$T/exp"
	assert_output --partial "matches --path-regex"
	# A flat folder: the JSON files themselves, one per rank.
	mkdir "$T/flat"
	cp "$SW_A/256thread/nccl_28channels/torch_profiler/rank0/trace.json" "$T/flat/rank0.json"
	cp "$SW_A/256thread/nccl_28channels/torch_profiler/rank1/trace.json" "$T/flat/rank1.json"
	run -0 gemm-variance -q -k 1 -o "$T/fout" "$T/flat"
	run -0 cols "$T/fout/top1_gemm_kernels_time_variance.tsv" rank,time_diff_us
	assert_output - <<'OUT'
rank	time_diff_us
0	40
1	40
OUT
}

@test "--xlsx: the tables as a workbook, read back against the TSVs" {
	need_openpyxl
	# OUT_J1: gemm-variance --xlsx over SW_J (--ranks 2 --iters 3 --jitter 5).
	O="$OUT_J1"
	run -0 "$PY_XLSX" "$XLSX" "$O/gemm_variance.xlsx" top5_gemm_kernels_time_variance="$O/top5_gemm_kernels_time_variance.tsv" \
		variance_summary="$O/variance_summary.tsv" gemm_by_config="$O/gemm_by_config.tsv" gemm_across_configs="$O/gemm_across_configs.tsv"
	assert_line "sheet top5_gemm_kernels_time_variance rows 16 cols 22"
	assert_line "sheet variance_summary rows 6 cols 6"
}

@test "progress on stderr with counts and elapsed time; -q silences it; --version" {
	# OUT_J1 was made without -q (SW_J: 2 ranks, 4 configurations); OUT_A1 with -q.
	[ ! -s "$OUT_J1.stdout" ]
	run -0 cat "$OUT_J1.stderr"
	assert_line --regexp '^gemm-variance: \[ *[0-9]+\.[0-9]s\] step 1/4: converting 8 trace\(s\) of 4 configuration\(s\) over threads,channels'
	assert_line --regexp '^gemm-variance: \[ *[0-9]+\.[0-9]s\] done 4 of 4: '
	assert_line --regexp '^gemm-variance: \[ *[0-9]+\.[0-9]s\] step 4/4: report'
	[ ! -s "$OUT_A1.stderr" ]
	run -0 gemm-variance --version
	assert_line --index 0 --regexp '^gemm-variance \(evkit\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "TERM mid-run ends every job: no orphans, no temporary files, earlier outputs intact" {
	# The earlier outputs: a copy of OUT_J1 (a run over SW_J).
	cp -R "$OUT_J1" "$T/out"
	before=$(cd "$T/out" && find . -type f -exec md5sum {} + | sort)
	# A kineto2ev that hangs (a sleep child in the job's process group).
	mkdir -p "$T/slow" "$T/tmp"
	cat >"$T/slow/kineto2ev" <<EOF
#!/bin/bash
echo \$\$ >>"$T/pids"
sleep 300 &
echo \$! >>"$T/pids"
wait
EOF
	chmod +x "$T/slow/kineto2ev"
	PATH="$T/slow:$PATH" TMPDIR="$T/tmp" gemm-variance -j 2 --no-traces -o "$T/out" "$SW_J" 2>"$T/err" &
	pid=$!
	for _ in $(seq 100); do [ "$(wc -l <"$T/pids" 2>/dev/null || echo 0)" -ge 4 ] && break; sleep 0.1; done
	[ "$(wc -l <"$T/pids")" -ge 4 ] || { cat "$T/err"; false; }
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	run cat "$T/err"
	assert_output --partial "gemm-variance: interrupted by SIGTERM"
	# Every process of the run is gone, nothing is left in TMPDIR or OUT.
	while read -r p; do ! kill -0 "$p" 2>/dev/null; done <"$T/pids"
	run -0 find "$T/tmp" -mindepth 1
	assert_output ""
	assert_equal "$(cd "$T/out" && find . -type f -exec md5sum {} + | sort)" "$before"
	run -0 find "$T/out" -name '.*'
	assert_output ""
}

@test "TERM while a step runs: no stray 'Terminated' line, and an OUT the run created is removed" {
	# An ev-merge that hangs: the worker waits on it in the foreground.
	mkdir -p "$T/slow"
	printf '#!/bin/bash\necho $$ >>"%s/pids"\nexec sleep 300\n' "$T" >"$T/slow/ev-merge"
	chmod +x "$T/slow/ev-merge"
	PATH="$T/slow:$PATH" gemm-variance -q --no-traces -o "$T/new/out" "$SW_S1" 2>"$T/err" &
	pid=$!
	for _ in $(seq 100); do [ -s "$T/pids" ] && break; sleep 0.1; done
	[ -s "$T/pids" ] || { cat "$T/err"; false; }
	[ -d "$T/new/out" ]
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	# The explanation alone: no "Terminated" (or "Killed") from bash before it.
	run -0 cat "$T/err"
	assert_output "gemm-variance: interrupted by SIGTERM: stopped its jobs, removed its temporary files and the output directory it had created; earlier outputs are left as they were"
	[ ! -e "$T/new" ]
	# The hanging step is ended (gone, or a zombie left for init to reap:
	# its shell was ended first).
	p=$(cat "$T/pids")
	if [ -r "/proc/$p/stat" ]; then
		run -0 awk '{ print $3 }' "/proc/$p/stat"
		assert_output Z
	fi
}

@test "a failing step is explained on stderr" {
	# SW_S1: --ranks 2 --iters 2 --threads 256 --channels 28.
	mkdir -p "$T/bad"
	printf '#!/bin/sh\nexit 3\n' >"$T/bad/ev-merge"
	chmod +x "$T/bad/ev-merge"
	PATH="$T/bad:$PATH" run -1 gemm-variance -q --no-traces -o "$T/out" "$SW_S1"
	assert_output --regexp '^gemm-variance: failed \(exit 3\) at line [0-9]+: ev-merge '
	# The output directory it had created is not left behind, empty.
	[ ! -e "$T/out" ]
}

@test "the shared aorta sweep: aorta's own top-5 GEMM variance rows, all 160 (shared data)" {
	need_shared_data
	# OUT_AORTA (setup_file) has merged traces too; the table is the same without.
	# tests/expected/aorta/README.md: how aorta's pipeline made the reference.
	run -0 python3 - "$TESTS_DIR/expected/aorta/top5_gemm_kernels_time_variance.csv" "$OUT_AORTA/top5_gemm_kernels_time_variance.tsv" <<'PY'
import csv, sys
def load(p, d):
    return [(r["threads"], r["channel"], r["rank"], r["kernel_name"], float(r["kernel_time_min_us"]), float(r["kernel_time_max_us"]))
            for r in csv.DictReader(open(p, encoding="utf-8"), delimiter=d)]
ref, ours = load(sys.argv[1], ","), load(sys.argv[2], "\t")
used, bad = set(), []
for x in ref:
    hit = [i for i, y in enumerate(ours) if i not in used and x[:4] == y[:4] and abs(x[4] - y[4]) < 0.01 and abs(x[5] - y[5]) < 0.01]
    if hit:
        used.add(hit[0])
    else:
        bad.append(x)
print(len(ref), "aorta rows,", len(ref) - len(bad), "found,", len(ours) - len(used), "extra")
PY
	assert_output "160 aorta rows, 160 found, 0 extra"
}
