#!/usr/bin/env bats
# pipelines/demo (make demo): the showcase runs on generated data, quickly,
# and leaves what it says it made.
bats_require_minimum_version 1.5.0
load test_helper

@test "demo --help and usage errors" {
	run -0 demo --help
	assert_line --index 0 "Usage: demo [OUT_DIR]"
	assert_output --partial "Exit status:"
	run -2 demo --bogus
	run -2 demo a b
}

@test "the demo runs in well under a minute and makes what it lists" {
	T="$BATS_TEST_TMPDIR"
	SECONDS=0
	# stdout and stderr in files: run would strip the indent of a line.
	demo "$T/demo-out" >"$T/stdout" 2>"$T/stderr"
	[ "$SECONDS" -lt 30 ]
	run -0 cat "$T/stdout"
	# Its own time to a tenth of a second ("Done in 0 s" said nothing).
	assert_line --regexp '^Done in [0-9]+\.[0-9] s\. In '
	# A tool's warning is part of its step, indented like the step's
	# output, not a line at the margin in the middle of the showcase.
	run -0 awk '!/^   / { n++ } END { print n + 0 " lines at the margin" }' "$T/stderr"
	assert_output "0 lines at the margin"
	run -0 cat "$T/stdout"
	assert_line --partial "report.html"
	# 2. nsys -> flows: every message has its partner.
	run -0 python3 "$TESTS_DIR/fixtures/nccl-flows/check.py" "$T/demo-out/flows"
	assert_line --index 0 --regexp '^ranks 4 messages [1-9][0-9]* unmatched 0$'
	if ! command -v ev2goal >/dev/null; then
		run -0 demo "$T/d2"
		assert_output --partial "GOAL schedule skipped: ev2goal is not built yet"
	fi
	# 3. the sweep: 4 configurations in the variance table and the comparison.
	run -0 bash -c 'tail -n +2 "$1" | cut -f1,2 | sort -u | tr "\t\n" ", "' _ "$T/demo-out/sweep-analysis/gemm_variance.tsv"
	assert_output "256,28 256,56 512,28 512,56 "
	run -0 bash -c 'tail -n +2 "$1" | cut -f1 | sort -u | tr "\n" " "' _ "$T/demo-out/sweep-analysis/compare_summary.tsv"
	assert_output "256thread_56ch 512thread_28ch 512thread_56ch "
	run -0 python3 "$TESTS_DIR/fixtures/ev2perfetto/validate.py" "$T/demo-out/sweep-analysis/processed/256thread_28ch.json"
	assert_line --regexp '^flows collective=[1-9][0-9]* launch=[1-9][0-9]*$'
	# The report: self-contained (no scripts, no external resources), its
	# tables and, with gnuplot, three inline plots; well-formed enough for
	# Python's HTML parser to balance the tables.
	R="$T/demo-out/report.html"
	run -1 grep -E '<script|<link|src="http|href="http' "$R"
	run -0 grep -c '<table>' "$R"
	assert_output 4
	if command -v gnuplot >/dev/null; then
		run -0 grep -c '<svg' "$R"
		assert_output 3
	fi
	run -0 python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    depth = 0
    def handle_starttag(self, t, a):
        if t == "table": self.depth += 1
    def handle_endtag(self, t):
        if t == "table": self.depth -= 1
p = P(); p.feed(open(sys.argv[1]).read()); print("open tables", p.depth)' "$R"
	assert_output "open tables 0"
	# The kernels table names every row (two GEMMs are two "gemm" rows).
	run -0 awk -F'\t' 'NR > 1 && $3 == "" { print "row " NR " has no name" }' "$T/demo-out/sweep-analysis/compare_kernels_sum.tsv"
	assert_output ""
	run -0 grep -c 'Cijk_Ailk_Bjlk_HHS_BH_MT64x64x64_gemm' "$R"
	if command -v gnuplot >/dev/null; then
		# One box per configuration: 4 ranks x 8 iterations x 2 GEMMs each.
		run -0 python3 "$TESTS_DIR/fixtures/evkit-report/check-boxes.py" "$T/demo-out/sweep-analysis/plots/gemm_box.svg" configuration us \
			256thread_28ch=64 256thread_56ch=64 512thread_28ch=64 512thread_56ch=64
		assert_output "boxes 4"
		# Laid out for reading: no text over text, no zero axis through
		# the first group, the configurations in one order in all three
		# charts, and that order said once.
		P="$T/demo-out/sweep-analysis/plots"
		run -0 python3 "$TESTS_DIR/fixtures/evkit-report/check-svg-layout.py" "$P/gemm_box.svg" "$P/variance.svg" "$P/timeline.svg"
		run -0 grep -c -e '^overlaps 0$' -e '^zeroaxis 0$' -e '^xorder 256thread_28ch,256thread_56ch,512thread_28ch,512thread_56ch$' <<<"$output"
		assert_output 9
		run -0 grep -c 'in this order (sorted by label): 256thread_28ch, 256thread_56ch, 512thread_28ch, 512thread_56ch' "$R"
	fi
}
