#!/usr/bin/env bats
# The pipelines' HTML reports in headless Chromium: every plot decoded at
# its size and drawn, no console message; laid out at 1400 and 800 px
# without text over text or tables past the page (tests/review-reports.sh).
# Skipped with the reason when Chromium is not installed (`make deps-full`).
bats_require_minimum_version 1.5.0
load ../test_helper

setup() {
	if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
		[ -z "${CI:-}" ] || fail "Chromium is not installed (CI must have it: make deps-full)"
		skip "Chromium is not installed (Debian: chromium): the reports are not checked in a browser"
	fi
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	BROWSER="$TESTS_DIR/fixtures/evkit-report/browser-check.sh"
}

@test "compare-configs: the report in headless Chromium: every plot drawn at its size, no console message" {
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

@test "gemm-variance: the report in headless Chromium: five plots drawn at their size, no console message, one escape" {
	python3 "$GEN" --ranks 2 --iters 3 "$T/sweep"
	run -0 gemm-variance -q -o "$T/out" "$T/sweep"
	run -0 "$BROWSER" "$T/out/report.html" "$T/b"
	assert_line "console 0"
	assert_line "images 5"
	assert_line --regexp '^img variance_violin_combined loaded 1080 420 ink [0-9]{4,}$'
	run -0 grep -c '^img variance_[a-z_]* loaded [0-9]* 400 ink [0-9][0-9][0-9][0-9]*$' <(printf '%s\n' "${lines[@]}")
	assert_output 4
	run -1 grep -e '>gt;' -e '&amp;gt;' -e '&amp;lt;' "$T/out/report.html"
}

@test "layout-check: finds overlapping text, text outside its plot and a table wider than the page" {
	LAYOUT="$TESTS_DIR/fixtures/evkit-report/layout-check.sh"
	# A plot whose two labels are drawn over each other, one past the
	# right edge, and a table of 60 numbers in a row.
	cat >"$T/p.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">
<g transform="translate(20,50)" font-family="sans" font-size="10"><text>256thread_28ch</text></g>
<g transform="translate(40,50)" font-family="sans" font-size="10"><text>256thread_56ch</text></g>
<g transform="translate(190,80)" font-family="sans" font-size="10"><text>outside</text></g>
</svg>
SVG
	{
		printf '<!DOCTYPE html><html><body><div class="plot">'
		cat "$T/p.svg"
		printf '</div><table><tr>'
		for i in $(seq 60); do printf '<td>123456789</td>'; done
		printf '</tr></table></body></html>\n'
	} >"$T/bad.html"
	run -0 "$LAYOUT" "$T/bad.html" 1400 "$T/w"
	assert_line "overlaps 1"
	assert_line "overlap: inline0: 256thread_28ch | 256thread_56ch"
	assert_line "outside 1"
	assert_line "wide 1"
	assert_line "scroll 1"
}

@test "every report in Chromium at 1400 and 800 px: no text over text, none outside its plot, tables within the page" {
	# The generated sweeps only (SHARED_DATA empty): demo, gemm-variance
	# (two), compare-configs, compare-sweeps and the report it makes.
	SHARED_DATA='' run -0 "$ROOT_DIR/tests/review-reports.sh" "$T/review"
	review="$output"
	run -0 grep -c -E '^[^ ]+ (1400|800) overlaps 0 outside 0 wide [0-9]+ scroll 0$' <<<"$review"
	assert_output 12
	run -0 grep -c -E '^[^ ]+ 1400 overlaps 0 outside 0 wide 0 scroll 0$' <<<"$review"
	assert_output 6
	# A PNG of every page at both widths, not blank.
	for f in "$T"/review/png/*.png; do [ "$(stat -c %s "$f")" -gt 20000 ] || fail "$f: blank?"; done
	run -0 bash -c 'ls "$1"/review/png/*.png | wc -l' _ "$T"
	assert_output 12
}
