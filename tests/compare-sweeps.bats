#!/usr/bin/env bats
# pipelines/compare-sweeps: N sweeps' GEMM variance in one HTML report.
bats_require_minimum_version 1.5.0
load test_helper

# Each sweep is generated and each comparison run once, here; the tests
# read the results (read-only: they run in parallel).
#   F/sub    the two sweeps with subsets passed on to gemm-variance
#   F/three  three sweeps, one of them analysed: F/sub's "Base ROCm" (the
#            3-rank sweep cut to ranks 0,1 and channels 28,56: the same
#            top rows as a 2-rank sweep of seed 1), two raw
#   F/aorta  the shared aorta sweep against a generated one (when there)
setup_file() {
	local F="$BATS_FILE_TMPDIR" GEN="$TESTS_DIR/gen/gen-kineto.py"
	{
		python3 "$GEN" --ranks 3 --iters 3 --seed 1 "$F/sub1" &&
			python3 "$GEN" --ranks 3 --iters 3 --seed 2 --channels 28,42,56 "$F/sub2" &&
			ln -s "$F/sub2" "$F/linked sweep" &&
			python3 "$GEN" --ranks 2 --iters 3 --seed 2 --jitter 20 "$F/s2" &&
			python3 "$GEN" --ranks 2 --iters 4 --seed 3 --channels 28,42,56 "$F/s3"
	} || { echo "setup_file: generating the sweeps failed" >&2; return 1; }
	compare-sweeps -q --select channels=28,56 --ranks 0,1 -o "$F/sub" "Base ROCm=$F/sub1" "ROCm 7.1 (new)=$F/linked sweep" >"$F/sub.log" 2>&1 ||
		{ cat "$F/sub.log" >&2; echo "setup_file: compare-sweeps (subsets) failed" >&2; return 1; }
	compare-sweeps -q -o "$F/three" base="$F/sub/sweeps/Base ROCm" noisy="$F/s2" wide="$F/s3" >"$F/three.log" 2>&1 ||
		{ cat "$F/three.log" >&2; echo "setup_file: compare-sweeps (three sweeps) failed" >&2; return 1; }
	if [ -d "$SHARED_DATA" ]; then
		python3 "$GEN" --ranks 8 --iters 3 "$F/gen" || { echo "setup_file: generating the 8-rank sweep failed" >&2; return 1; }
		compare-sweeps -q -j 2 -o "$F/aorta" aorta="$SHARED_DATA/kineto/aorta-sweep" gen="$F/gen" >"$F/aorta.log" 2>&1 ||
			{ cat "$F/aorta.log" >&2; echo "setup_file: compare-sweeps (aorta) failed" >&2; return 1; }
	fi
}

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$BATS_FILE_TMPDIR"
	HTML="$TESTS_DIR/fixtures/evkit-report/check-html.py"
	BOXES="$TESTS_DIR/fixtures/evkit-report/check-boxes.py"
}

# The plots: SVG, and PNG beside each when wanted (EVKIT_PNG is not 0, and
# the tests set it to 0) and gnuplot has pngcairo.
plot_list() {
	local f png=0
	if [ "${EVKIT_PNG:-1}" != 0 ] && gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then png=1; fi
	for f in "$@"; do
		echo "$f.svg"
		[ "$png" = 0 ] || echo "$f.png"
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
	# compare-sweeps -q -o F/three base=<analysed> noisy=<raw> wide=<raw>
	# exited 0 (setup_file) and printed nothing.
	run -0 cat "$F/three.log"
	assert_output ""
	O="$F/three"
	# Raw sweeps were analysed under OUT/sweeps.
	[ -f "$O/sweeps/noisy/top5_gemm_kernels_time_variance.tsv" ]
	[ -f "$O/sweeps/wide/report.html" ]
	run -0 head -n 1 "$O/kernel_by_sweep.tsv"
	assert_output "kernel_name	base	noisy	wide"
	# GEMM A's range is 10 (iterations - 1) us without jitter.
	run -0 awk -F'\t' '$1 ~ /MT128x128/ { print $2, $4 }' "$O/kernel_by_sweep.tsv"
	assert_output "20 30"
	run -0 awk -F'\t' '$1 == "wide" { print $2 }' "$O/sweep_configs.tsv"
	assert_output - <<'OUT'
256_28
256_42
256_56
512_28
512_42
512_56
OUT
	run -0 awk -F'\t' 'NR > 1 { n[$1]++ } END { for (s in n) print s, n[s] }' "$O/combined_top_gemms.tsv"
	assert_line "base 16"
	assert_line "wide 24"
	run -0 bash -c 'ls "$1" | LC_ALL=C sort' _ "$O/plots"
	assert_output "$(plot_list mean_time_diff_by_config time_diff_by_sweep_boxplot time_diff_by_sweep_violin)"
	# One box per sweep, with its count of top rows.
	run -0 python3 "$BOXES" "$O/plots/time_diff_by_sweep_boxplot.svg" sweep "time_diff (us)" base=16 noisy=16 wide=24
	assert_output "boxes 3"
	# 3 shared plots + 5 plots x 3 sweeps side by side.
	run -0 python3 "$HTML" "$O/sweep_comparison.html"
	assert_line "images 18"
	assert_line "h2 Each sweep's plots, side by side"
	run -0 grep -c 'grid-template-columns: repeat(3, 1fr)' "$O/sweep_comparison.html"
	# The configurations sorted by label in the chart, those only "wide"
	# has in their place; the sweeps (its series) as given.
	run -0 python3 "$TESTS_DIR/fixtures/evkit-report/check-svg-layout.py" "$O/plots/mean_time_diff_by_config.svg"
	assert_line "xorder 256_28,256_42,256_56,512_28,512_42,512_56"
	assert_line "overlaps 0"
	assert_line "zeroaxis 0"
	run -0 grep -c 'in this order (the sweeps as given; configurations sorted by label): base, noisy, wide, 256_28, 256_42, 256_56, 512_28, 512_42, 512_56\.' "$O/sweep_comparison.html"
}

@test "shared data: the aorta sweep against a generated one" {
	need_shared_data
	# compare-sweeps -q -j 2 -o F/aorta aorta=<shared> gen=<8 ranks> exited 0 (setup_file).
	O="$F/aorta"
	run -0 awk -F'\t' '$2 == "rank" { n[$1]++ } END { for (s in n) print s, n[s] }' "$O/sweep_summary.tsv"
	assert_line "aorta 8"
	assert_line "gen 8"
	run -0 python3 "$HTML" "$O/sweep_comparison.html"
	assert_line "images 13"
}

@test "free-text labels, a symlinked sweep, subsets passed on to gemm-variance" {
	# compare-sweeps -q --select channels=28,56 --ranks 0,1 -o F/sub
	# "Base ROCm=F/sub1" "ROCm 7.1 (new)=F/linked sweep" exited 0 (setup_file).
	O="$F/sub"
	run -0 awk -F'\t' 'NR > 1 { n[$1]++ } END { for (s in n) print s "|" n[s] }' "$O/combined_top_gemms.tsv"
	assert_line "Base ROCm|16"
	assert_line "ROCm 7.1 (new)|16"
	run -0 head -n 1 "$O/kernel_by_sweep.tsv"
	assert_output "kernel_name	Base ROCm	ROCm 7.1 (new)"
	[ -f "$O/sweeps/ROCm 7.1 (new)/report.html" ]
	run -0 python3 "$BOXES" "$O/plots/time_diff_by_sweep_boxplot.svg" sweep "time_diff (us)" "Base ROCm=16" "ROCm 7.1 (new)=16"
	run -0 python3 "$HTML" "$O/sweep_comparison.html"
	run -0 grep -c '<title>Sweep comparison: Base ROCm vs ROCm 7.1 (new)</title>' "$O/sweep_comparison.html"
	# A sweep analysed here is named where its table is, in OUT/sweeps/,
	# not in the staging directory that no longer exists; the order of
	# the sweeps is said once.
	run -0 grep -c -F "ROCm 7.1 (new): $O/sweeps/ROCm 7.1 (new)/top5_gemm_kernels_time_variance.tsv (16 rows)." "$O/sweep_comparison.html"
	run -1 grep -F '.compare-sweeps.stage' "$O/sweep_comparison.html"
	run -0 grep -c 'in this order (the sweeps as given; configurations sorted by label): Base ROCm, ROCm 7.1 (new), 256_28, 256_56, 512_28, 512_56\.' "$O/sweep_comparison.html"
	run -0 compare-sweeps --version
	assert_line --index 0 --regexp '^compare-sweeps \(evkit\) [0-9]+\.[0-9]+\.[0-9]+$'
}
