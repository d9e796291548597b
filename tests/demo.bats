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
	run -0 --separate-stderr demo "$T/demo-out"
	[ "$SECONDS" -lt 30 ]
	assert_line --regexp '^Done in [0-9]+ s\. In '
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
	fi
}
