#!/usr/bin/env bats
# The report layer (pipelines/evkit-report.sh) lays out what a reader sees:
# tick labels that do not collide, no zero axis through the first group,
# y ranges with room above and below, one configuration order in every
# chart, tables that fit the page.  Checked on the SVG and HTML without a
# browser (tests/full/browser.bats measures them in Chromium).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (make deps)"
	. "$ROOT_DIR/pipelines/evkit-common.sh"
	. "$ROOT_DIR/pipelines/evkit-report.sh"
	T="$BATS_TEST_TMPDIR"
	LAYOUT="$TESTS_DIR/fixtures/evkit-report/check-svg-layout.py"
	export EVKIT_PNG=0
}

@test "bars: no zero axis through the first group; four configuration labels side by side, none overlapping" {
	printf 'config\tcompute_ms\texposed_comm_ms\tidle_ms\n' >"$T/t.tsv"
	for c in 256thread_28ch 256thread_56ch 512thread_28ch 512thread_56ch; do printf '%s\t10\t3\t8\n' "$c"; done >>"$T/t.tsv"
	plot_bars "$T/t.tsv" config '*' "$T/p.svg" "Mean per-rank GPU time" ms
	run -0 python3 "$LAYOUT" "$T/p.svg"
	assert_line "zeroaxis 0"
	assert_line "overlaps 0"
	assert_line "rotated 0"
	assert_line "xorder 256thread_28ch,256thread_56ch,512thread_28ch,512thread_56ch"
}

@test "bars: rank labels upright; many long labels wrapped or turned, never overlapping" {
	printf 'rank\ta\tb\n' >"$T/r.tsv"
	for r in 0 1 2 3 4 5 6 7; do printf '%s\t%s\t2\n' "$r" "$((r + 1))"; done >>"$T/r.tsv"
	plot_bars "$T/r.tsv" rank '*' "$T/r.svg" "total_time by rank" ms
	run -0 python3 "$LAYOUT" "$T/r.svg"
	assert_line "rotated 0"
	assert_line "zeroaxis 0"
	assert_line "xorder 0,1,2,3,4,5,6,7"
	# Twelve names too long to sit side by side: wrapped at '_' when the
	# pieces fit, turned otherwise; in both cases no two labels overlap.
	printf 'type\tv\n' >"$T/l.tsv"
	for i in 01 02 03 04 05 06 07 08 09 10 11 12; do printf 'exposed_memcpy_time_%s\t%s\n' "$i" "$i"; done >>"$T/l.tsv"
	plot_bars "$T/l.tsv" type v "$T/l.svg" "Twelve" ms
	run -0 python3 "$LAYOUT" "$T/l.svg"
	assert_line "overlaps 0"
	printf 'type\tv\n' >"$T/k.tsv"
	for i in 01 02 03 04 05 06 07 08 09 10 11 12; do printf 'Cijk_Alik_Bljk_HHS_BH_MT128x128x32_gemm%s\t%s\n' "$i" "$i"; done >>"$T/k.tsv"
	plot_bars "$T/k.tsv" type v "$T/k.svg" "Twelve kernels" us
	run -0 python3 "$LAYOUT" "$T/k.svg"
	assert_line "overlaps 0"
	assert_line "rotated 12"
}

@test "box plot: configuration labels and counts side by side, the axis label below them, the y range padded" {
	printf 'config\tdur_us\n' >"$T/b.tsv"
	# The maximum, 100, is on a tic: an unpadded range ends there.
	for c in 256thread_28ch 256thread_56ch 512thread_28ch 512thread_56ch; do
		for v in 0 20 40 60 80 100; do printf '%s\t%s\n' "$c" "$v"; done
	done >>"$T/b.tsv"
	plot_box "$T/b.tsv" config dur_us "$T/b.svg" "GEMM kernel time" us configuration
	run -0 python3 "$LAYOUT" "$T/b.svg"
	assert_line "overlaps 0"
	assert_line "touching 0"
	assert_line "rotated 0"
	assert_line "xorder 256thread_28ch,256thread_56ch,512thread_28ch,512thread_56ch"
	run -0 python3 "$TESTS_DIR/fixtures/evkit-report/check-boxes.py" "$T/b.svg" configuration us \
		256thread_28ch=6 256thread_56ch=6 512thread_28ch=6 512thread_56ch=6
}

@test "violins: the y range padded, no violin on the edge of its panel" {
	printf 'sweep\tconfig\ttime_diff_us\n' >"$T/v.tsv"
	for s in A B; do for v in 0 10 20 50 100; do printf '%s\t256_28\t%s\n' "$s" "$v"; done; done >>"$T/v.tsv"
	plot_violins "$T/v.tsv" time_diff_us "$T/v.svg" "GEMM time variance" "time_diff (us)" sweep config
	run -0 python3 "$LAYOUT" "$T/v.svg"
	assert_line "touching 0"
	assert_line "overlaps 0"
}

@test "one configuration order in every chart: rpt_order, stated once" {
	printf 'config\tv\n512_28\t1\n256_56\t2\n256_28\t3\n' >"$T/a.tsv"
	printf 'config\tv\n256_28\t1\n512_28\t2\n256_56\t3\n256_28\t4\n' >"$T/b.tsv"
	printf 'rank\t512_28\t256_28\t256_56\n0\t1\t2\t3\n' >"$T/c.tsv"
	rpt_order 256_28 512_28 256_56
	plot_bars "$T/a.tsv" config v "$T/a.svg" A ms
	plot_box "$T/b.tsv" config v "$T/b.svg" B ms
	plot_bars "$T/c.tsv" rank '*' "$T/c.svg" C ms
	run -0 python3 "$LAYOUT" "$T/a.svg" "$T/b.svg"
	assert_line "xorder 256_28,512_28,256_56"
	run -0 grep -c "^xorder 256_28,512_28,256_56$" <<<"$output"
	assert_output 2
	# The series of a chart by rank (its columns) in the same order.
	run -0 grep -o "<text>[0-9]*_[0-9]*</text>" "$T/c.svg"
	assert_output "$(printf '<text>256_28</text>\n<text>512_28</text>\n<text>256_56</text>')"
	rpt_begin "$T/r.html" R
	rpt_order_note "as given"
	rpt_end
	run -0 grep -c "in this order (as given): 256_28, 512_28, 256_56\.<" "$T/r.html"
	# Tables too.
	rpt_sort_rows "$T/b.tsv" config
	run -0 cut -f1 "$T/b.tsv"
	assert_output "$(printf 'config\n256_28\n256_28\n512_28\n256_56')"
}

@test "report tables: long text wraps, headers break at '_' and align with their cells, ts columns get their unit, a constant column is said once" {
	printf 'baseline\tname\tmin_ts\tts\tstd_us\n' >"$T/t.tsv"
	printf 'base_256\tCijk_Alik_Bljk_HHS_BH_MT128x128x32_gemm\t1765217845926542330\t5\t1.5\n' >>"$T/t.tsv"
	printf 'base_256\tgemm\t1765217845926542331\t6\t2.5\n' >>"$T/t.tsv"
	rpt_begin "$T/r.html" R
	rpt_table "$T/t.tsv"
	rpt_end
	run -0 grep -c '<td class="w">Cijk_Alik_Bljk_HHS_BH_MT128x128x32_gemm</td>' "$T/r.html"
	run -0 grep -c '<th class="t">name</th><th>min_<wbr>ts (ns)</th><th>ts (ns)</th><th>std_<wbr>us</th>' "$T/r.html"
	run -0 grep -c '<p class="note">baseline: base_256 in every row.</p>' "$T/r.html"
	run -1 grep '<th>baseline' "$T/r.html"
	# Integers stay exact (epoch ns).
	run -0 grep -c '<td>1765217845926542331</td>' "$T/r.html"
	# The table scrolls in its own box on a narrow page, not the page.
	run -0 grep -c '<div class="tw"><table>' "$T/r.html"
}
