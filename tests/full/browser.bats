#!/usr/bin/env bats
# The pipelines' HTML reports in headless Chromium: every plot decoded at
# its size and drawn, no console message.  Skipped with the reason when
# Chromium is not installed (`make deps-full`).
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
