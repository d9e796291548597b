#!/usr/bin/env bats
# pipelines/compare-sweeps: N sweeps' GEMM variance in one HTML report.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
}

@test "--help prints usage and the exit status table" {
	run -0 --separate-stderr compare-sweeps --help
	assert_line --index 0 "Usage: compare-sweeps [options] -o OUT SWEEP1 SWEEP2 [SWEEP3...]"
	assert_output --partial "Exit status:"
	[ -z "$stderr" ]
}

@test "usage errors exit 2; missing sweeps exit 1" {
	mkdir -p "$T/a" "$T/b"
	run -2 compare-sweeps "$T/a" "$T/b"
	assert_output --partial "an output directory is required"
	run -2 compare-sweeps -o "$T/o" "$T/a"
	assert_output --partial "expected at least two sweeps, got 1"
	run -2 compare-sweeps -o "$T/o" x="$T/a" x="$T/b"
	assert_output --partial "two sweeps are both named 'x'"
	run -2 compare-sweeps -o "$T/o" -k none "$T/a" "$T/b"
	run -1 compare-sweeps -o "$T/o" "$T/a" "$T/nosuch"
	assert_output "compare-sweeps: $T/nosuch: No such file or directory"
	run -1 compare-sweeps -q -o "$T/o" "$T/a" "$T/b"
	assert_output --partial "no run or sweep configuration found"
}

@test "three sweeps, analysed or raw, in one report" {
	python3 "$GEN" --ranks 2 --iters 3 --seed 1 "$T/s1"
	python3 "$GEN" --ranks 2 --iters 3 --seed 2 --jitter 20 "$T/s2"
	python3 "$GEN" --ranks 2 --iters 4 --seed 3 --channels 28,42,56 "$T/s3"
	run -0 gemm-variance -q -o "$T/g1" "$T/s1"
	run -0 compare-sweeps -q -o "$T/out" base="$T/g1" noisy="$T/s2" wide="$T/s3"
	assert_output ""
	# Raw sweeps were analysed under OUT/sweeps.
	[ -f "$T/out/sweeps/noisy/top5_gemm_kernels_time_variance.tsv" ]
	[ -f "$T/out/sweeps/wide/report.html" ]
	run -0 head -n 1 "$T/out/kernel_by_sweep.tsv"
	assert_output "kernel_name	base	noisy	wide"
	# GEMM A's range is 10 (iterations - 1) us without jitter.
	run -0 awk -F'\t' '$1 ~ /MT128x128/ { print $2, $4 }' "$T/out/kernel_by_sweep.tsv"
	assert_output "20 30"
	run -0 awk -F'\t' '$1 == "wide" { print $2 }' "$T/out/sweep_configs.tsv"
	assert_output - <<'OUT'
256_28
256_42
256_56
512_28
512_42
512_56
OUT
	run -0 awk -F'\t' 'NR > 1 { n[$1]++ } END { for (s in n) print s, n[s] }' "$T/out/combined_top_gemms.tsv"
	assert_line "base 16"
	assert_line "wide 24"
	run -0 ls "$T/out/plots"
	assert_output - <<'OUT'
mean_time_diff_by_config.svg
time_diff_by_sweep_boxplot.svg
time_diff_by_sweep_violin.svg
OUT
	# 3 shared plots + 5 plots x 3 sweeps side by side.
	run -0 python3 "$HTML" "$T/out/sweep_comparison.html"
	assert_line "images 18"
	assert_line "h2 Each sweep's plots, side by side"
	run -0 grep -c 'grid-template-columns: repeat(3, 1fr)' "$T/out/sweep_comparison.html"
}

@test "shared data: the aorta sweep against a generated one" {
	need_shared_data
	python3 "$GEN" --ranks 8 --iters 3 "$T/gen"
	run -0 compare-sweeps -q -j 2 -o "$T/out" aorta="$SHARED_DATA/kineto/aorta-sweep" gen="$T/gen"
	run -0 awk -F'\t' '$2 == "rank" { n[$1]++ } END { for (s in n) print s, n[s] }' "$T/out/sweep_summary.tsv"
	assert_line "aorta 8"
	assert_line "gen 8"
	run -0 python3 "$HTML" "$T/out/sweep_comparison.html"
	assert_line "images 13"
}
