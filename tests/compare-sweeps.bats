#!/usr/bin/env bats
# pipelines/compare-sweeps: N sweeps' GEMM variance in one HTML report.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
	BOXES="$TESTS_DIR/fixtures/evkit-report/check-boxes.py"
}

# The plots, SVG (and PNG when gnuplot has pngcairo).
plot_list() {
	local f
	for f in "$@"; do
		echo "$f.svg"
		if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then echo "$f.png"; fi
	done | LC_ALL=C sort
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
	run -0 bash -c 'ls "$1" | LC_ALL=C sort' _ "$T/out/plots"
	assert_output "$(plot_list mean_time_diff_by_config time_diff_by_sweep_boxplot time_diff_by_sweep_violin)"
	# One box per sweep, with its count of top rows.
	run -0 python3 "$BOXES" "$T/out/plots/time_diff_by_sweep_boxplot.svg" sweep "time_diff (us)" base=16 noisy=16 wide=24
	assert_output "boxes 3"
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

@test "free-text labels, a symlinked sweep, subsets passed on to gemm-variance" {
	python3 "$GEN" --ranks 3 --iters 3 --seed 1 "$T/s1"
	python3 "$GEN" --ranks 3 --iters 3 --seed 2 --channels 28,42,56 "$T/s2"
	ln -s "$T/s2" "$T/linked sweep"
	run -0 compare-sweeps -q --select channels=28,56 --ranks 0,1 -o "$T/out" "Base ROCm=$T/s1" "ROCm 7.1 (new)=$T/linked sweep"
	run -0 awk -F'\t' 'NR > 1 { n[$1]++ } END { for (s in n) print s "|" n[s] }' "$T/out/combined_top_gemms.tsv"
	assert_line "Base ROCm|16"
	assert_line "ROCm 7.1 (new)|16"
	run -0 head -n 1 "$T/out/kernel_by_sweep.tsv"
	assert_output "kernel_name	Base ROCm	ROCm 7.1 (new)"
	[ -f "$T/out/sweeps/ROCm 7.1 (new)/report.html" ]
	run -0 python3 "$BOXES" "$T/out/plots/time_diff_by_sweep_boxplot.svg" sweep "time_diff (us)" "Base ROCm=16" "ROCm 7.1 (new)=16"
	run -0 python3 "$HTML" "$T/out/sweep_comparison.html"
	run -0 grep -c '<title>Sweep comparison: Base ROCm vs ROCm 7.1 (new)</title>' "$T/out/sweep_comparison.html"
	run -0 compare-sweeps --version
	assert_line --index 0 --regexp '^compare-sweeps \(evkit\) [0-9]+\.[0-9]+\.[0-9]+$'
}
