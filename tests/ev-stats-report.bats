#!/usr/bin/env bats
# ev-stats short (TraceLens's short-kernel study) and --xlsx (the tables as
# the workbooks TraceLens users open), against TraceLens's own reports.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	XLSX="$TESTS_DIR/fixtures/evkit-report/check-xlsx.py"
	TL="$SHARED_DATA/kineto/tracelens"
}


@test "short --table=histogram equals TraceLens's short_kernel_histogram on real traces (shared data)" {
	need_shared_data
	for t in mi300/Qwen_Qwen1.5-0.5B-Chat__1016005 h100/Qwen_Qwen1.5-0.5B-Chat__1016005 \
		mi300/gaunernst_bert-small-uncased__1016001 mi210/gpu_only_trace/gpu_only_trace; do
		kineto2ev -q -o "$T/x.ev" "$TL/$t.json.gz"
		ev-stats short --table=histogram -o "$T/h.tsv" "$T/x.ev"
		# numpy's bins and edges exactly (edges as doubles, to 1e-9 us).
		run -0 awk -F'[\t,]' 'NR == FNR { if (FNR > 1) { s[FNR] = $1; e[FNR] = $2; c[FNR] = $3 } next }
			FNR > 1 { n++; d1 = s[FNR] - $1; d2 = e[FNR] - $2
			          if (c[FNR] != $3 || d1 * d1 > 1e-18 || d2 * d2 > 1e-18) bad++ }
			END { print n " bins, " bad + 0 " differ" }' "$T/h.tsv" "$TL/${t}_perf_report_csvs/short_kernel_histogram.csv"
		assert_output "100 bins, 0 differ"
	done
}

@test "short: per op and kernel, the sums, counts and shares of TraceLens's short_kernels_summary (shared data)" {
	need_shared_data
	for t in mi300/Qwen_Qwen1.5-0.5B-Chat__1016005 mi300/gaunernst_bert-small-uncased__1016001; do
		kineto2ev -q -o "$T/x.ev" "$TL/$t.json.gz"
		ev-stats short -o "$T/s.tsv" "$T/x.ev"
		# TraceLens drops kernels without a parent op (pandas groupby on a
		# missing key); evkit keeps them with an empty op: compare the rest.
		run -0 python3 - "$T/s.tsv" "$TL/${t}_perf_report_csvs/short_kernels_summary.csv" <<'PY'
import csv, sys
ev = {}
for r in csv.DictReader(open(sys.argv[1]), delimiter='\t'):
    if r['op']:
        ev.setdefault((r['op'].split(' dims=')[0], r['name']), []).append((int(float(r['count'])), float(r['sum_us']), float(r['percent_of_total_time'])))
tl = {}
for r in csv.DictReader(open(sys.argv[2], encoding='utf-8')):
    tl.setdefault((r['Parent cpu_op'], r['Kernel name']), []).append((int(float(r['Short Kernel count'])), float(r['Short Kernel duration (µs) sum']), float(r['Short Kernel duration (µs) percent of total time'])))
bad = 0
for k in set(ev) | set(tl):
    a, b = sorted(ev.get(k, [])), sorted(tl.get(k, []))
    if len(a) != len(b) or any(x[0] != y[0] or abs(x[1] - y[1]) > 1e-6 or abs(x[2] - y[2]) > 1e-4 * y[2] for x, y in zip(a, b)):
        bad += 1
print(len(tl), "TraceLens rows,", bad, "differ")
PY
		assert_output --regexp '^[1-9][0-9]* TraceLens rows, 0 differ$'
	done
}

@test "short: threshold, bins and usage; an empty result says why" {
	gen-kineto -q --ranks 1 --iters 1 "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T/g/rank0/trace.json"
	run -0 ev-stats short --table=histogram --bins=7 "$T/g.ev"
	assert_equal "${#lines[@]}" 8
	run -0 --separate-stderr ev-stats short --short-us=1 "$T/g.ev"
	[[ "$stderr" == *"short: no kernel shorter than 1 us among"* ]]
	run -2 ev-stats short --short-us=0 "$T/g.ev"
	run -2 ev-stats short --short-us=5000 "$T/g.ev"
	run -2 ev-stats short --table=each "$T/g.ev"
	# It keeps no duration (it shows no quantile), so no sample budget.
	run -2 ev-stats short --exact-limit=10 "$T/g.ev"
	assert_output --partial "--exact-limit does not apply"
	run -2 ev-stats kernels --bins=3 "$T/g.ev"
	run -2 ev-stats coll --table=histogram "$T/g.ev"
}

@test "--xlsx: each analysis as TraceLens's sheet, read back against the TSV" {
	need_openpyxl
	gen-kineto -q --ranks 2 --iters 2 "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T"/g/rank*/trace.json
	for spec in timeline:gpu_timeline kernels:kernel_summary categories:kernel_summary_by_category \
		ops:ops_unique_args coll:coll_analysis short:short_kernels_summary; do
		sub=${spec%%:*} sheet=${spec#*:}
		ev-stats "$sub" -q -o "$T/$sub.tsv" "$T/g.ev"
		ev-stats "$sub" -q --xlsx -o "$T/$sub.xlsx" "$T/g.ev"
		run -0 "$PY_XLSX" "$XLSX" "$T/$sub.xlsx" "$sheet=$T/$sub.tsv"
		assert_output --regexp "^sheet $sheet rows [1-9]"
	done
	# compare: the comparison workbook, status coloured.
	gen-kineto -q --ranks 2 --iters 2 --scale 1.5 "$T/h"
	kineto2ev -q -o "$T/h.ev" "$T"/h/rank*/trace.json
	ev-merge -q -o "$T/m.ev" base="$T/g.ev" test="$T/h.ev"
	ev-stats compare --what=kernels -o "$T/c.tsv" "$T/m.ev"
	ev-stats compare --what=kernels --xlsx -o "$T/c.xlsx" "$T/m.ev"
	run -0 "$PY_XLSX" "$XLSX" "$T/c.xlsx" "compare=$T/c.tsv"
	# A workbook is not written to a terminal or onto an input.
	run -1 ev-stats kernels --xlsx -o "$T/g.ev" "$T/g.ev"
	assert_output --partial "is also an input"
	cmp "$T/g.ev" <(kineto2ev -q -o - "$T"/g/rank*/trace.json)
}

# A two-rank run with collectives, as one merged stream (T/m.ev).
two_ranks() {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --ranks 2 --iters 2 --channels 28 --threads 256 "$T/k" >/dev/null
	local r
	for r in 0 1; do kineto2ev -q -o "$T/r$r.ev" "$T"/k/*/*/torch_profiler/rank$r/*.json*; done
	ev-merge -q -o "$T/m.ev" "$T/r0.ev" "$T/r1.ev"
}

@test "report: every table from one pass equals the table ev-stats makes alone" {
	two_ranks
	run -0 --separate-stderr ev-stats report -o "$T/rep" "$T/m.ev"
	run -0 ls "$T/rep"
	assert_output "$(printf '%s.tsv\n' coll_analysis coll_each gpu_timeline kernel_summary kernel_summary_by_category ops_summary ops_summary_by_category ops_unique_args short_kernel_histogram short_kernels_summary)"
	local sheet cmd
	while read -r sheet cmd; do
		# shellcheck disable=SC2086 # cmd is a word list
		ev-stats $cmd -q -o "$T/one.tsv" "$T/m.ev"
		cmp "$T/one.tsv" "$T/rep/$sheet.tsv" || { echo "report's $sheet differs from ev-stats $cmd" >&2; return 1; }
	done <<'LIST'
gpu_timeline timeline --by=rank
kernel_summary kernels --by=rank
kernel_summary_by_category categories --by=rank
ops_unique_args ops --by=rank
ops_summary ops-summary --by=rank
ops_summary_by_category ops-category --by=rank
coll_analysis coll --by=
coll_each coll --by= --table=each
short_kernels_summary short --by=rank
short_kernel_histogram short --by= --table=histogram
LIST
	# --csv writes CSV files; a workbook has a sheet per table but the
	# streamed one.
	ev-stats report -q --csv -o "$T/csv" "$T/m.ev"
	ev-stats kernels --by=rank --csv -q -o "$T/one.csv" "$T/m.ev"
	cmp "$T/one.csv" "$T/csv/kernel_summary.csv"
	ev-stats report -q --xlsx -o "$T/r.xlsx" "$T/m.ev"
	need_openpyxl
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; print(" ".join(openpyxl.load_workbook(sys.argv[1]).sheetnames))' "$T/r.xlsx"
	assert_output "gpu_timeline kernel_summary kernel_summary_by_category ops_unique_args ops_summary ops_summary_by_category coll_analysis short_kernels_summary short_kernel_histogram"
}

@test "report --threads: the same tables and messages on two threads as on one; a failure names its record" {
	two_ranks
	local t
	export SOURCE_DATE_EPOCH=1700000000 # (the workbooks' bytes compared)
	for t in 1 2; do
		ev-stats report --threads=$t -q --csv -o "$T/r$t" "$T/m.ev"
		ev-stats report --threads=$t --tracelens --csv -o "$T/tl$t" "$T/m.ev" 2>"$T/tl$t.err"
		# (two threads write their sheets apart, added in order)
		ev-stats report --threads=$t --tracelens --xlsx -o "$T/tl$t.xlsx" "$T/m.ev" 2>"$T/tlx$t.err"
	done
	diff -r "$T/r1" "$T/r2"
	diff -r "$T/tl1" "$T/tl2"
	diff "$T/tl1.err" "$T/tl2.err"
	cmp "$T/tl1.xlsx" "$T/tl2.xlsx"
	diff "$T/tlx1.err" "$T/tlx2.err"
	# TraceLens's tables take records in batches of 4096 on two threads: a
	# record out of order past the first batch, and one in the last,
	# partial batch, are named as one thread names them.
	awk 'BEGIN { print "type\trank\tts\tdur\tname"; for (i = 1; i <= 9000; i++) printf "kernel\t0\t%d\t1\tk\n", i * 10 }' >"$T/o.tsv"
	awk -F'\t' -v OFS='\t' 'NR == 5001 { $3 = 5 } { print }' "$T/o.tsv" >"$T/o1.tsv"
	awk -F'\t' -v OFS='\t' 'NR == 8998 { $3 = 5 } { print }' "$T/o.tsv" >"$T/o2.tsv"
	pack "$T/o1.tsv" "$T/o1.ev"
	pack "$T/o2.tsv" "$T/o2.ev"
	for t in 1 2; do
		run -1 ev-stats report --threads=$t --tracelens -o "$T/x$t" "$T/o1.ev"
		assert_output "ev-stats: $T/o1.ev: record 5000: out of order (ts 5 after 49990); sort with ev-merge --sort"
		run -1 ev-stats report --threads=$t --tracelens --xlsx -o "$T/x$t.xlsx" "$T/o2.ev"
		assert_output "ev-stats: $T/o2.ev: record 8997: out of order (ts 5 after 89960); sort with ev-merge --sort"
	done
	run -2 ev-stats report --threads=3 -o "$T/x" "$T/m.ev"
	assert_output --partial "--threads: expected 1 or 2, got '3'"
	run -2 ev-stats kernels --threads=2 "$T/m.ev"
	assert_output --partial "kernels: --threads does not apply (it is for: report)"
}

@test "report on Kineto JSON: converted in the process, the same tables, workbook and messages as through kineto2ev" {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --ranks 2 --iters 2 --channels 28 --threads 256 "$T/k" >/dev/null
	local r0 r1 f
	r0=$(echo "$T"/k/*/*/torch_profiler/rank0/*.json*)
	r1=$(echo "$T"/k/*/*/torch_profiler/rank1/*.json*)
	export SOURCE_DATE_EPOCH=1700000000
	# (the converter's warnings are kineto2ev's in the pipe, ev-stats' here)
	kineto2ev --flow-links "$r0" "$r1" 2>"$T/k.err" | ev-stats report --tracelens --xlsx -o "$T/p.xlsx" 2>"$T/p.err"
	ev-stats report --tracelens --xlsx -o "$T/j.xlsx" "$r0" "$r1" 2>"$T/j.err"
	cmp "$T/p.xlsx" "$T/j.xlsx"
	diff <(sed 's/^kineto2ev:/ev-stats:/' "$T/k.err" "$T/p.err") "$T/j.err"
	# Without $SOURCE_DATE_EPOCH the workbook's time is the inputs' newest
	# modification: the same inputs, the same bytes.
	touch -d @1600000000 "$r0" "$r1"
	SOURCE_DATE_EPOCH= ev-stats report -q --tracelens --xlsx -o "$T/m1.xlsx" "$r0" "$r1"
	SOURCE_DATE_EPOCH= ev-stats report -q --tracelens --xlsx -o "$T/m2.xlsx" "$r0" "$r1"
	cmp "$T/m1.xlsx" "$T/m2.xlsx"
	run -0 python3 -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("docProps/core.xml").decode())' "$T/m1.xlsx"
	assert_output --partial '<dcterms:created xsi:type="dcterms:W3CDTF">2020-09-13T12:26:40Z</dcterms:created>'
	# Without --tracelens: kineto2ev's default links, evkit's tables.
	kineto2ev -q "$r0" "$r1" | ev-stats report -q -o "$T/pd" -
	ev-stats report -q -o "$T/jd" "$r0" "$r1"
	diff -r "$T/pd" "$T/jd"
	# gzip, and the same messages as kineto2ev's for a bad file.
	gzip -c "$r0" >"$T/r0.json.gz"
	ev-stats report -q --tracelens -o "$T/gz" "$T/r0.json.gz"
	kineto2ev -q --flow-links "$r0" | ev-stats report -q --tracelens -o "$T/gzp" -
	diff -r "$T/gzp" "$T/gz"
	head -c 3000 "$r0" >"$T/cut.json"
	run -1 ev-stats report -q --tracelens -o "$T/bad" "$T/cut.json"
	assert_output "$(kineto2ev -q -o /dev/null "$T/cut.json" 2>&1 | sed 's/^kineto2ev:/ev-stats:/')"
	[ ! -e "$T/bad" ] || [ -z "$(ls "$T/bad")" ]
	run -1 ev-stats report -q -o "$T/dup" "$r0" "$T/r0.json.gz"
	assert_output --partial "are both rank 0"
	# A stream and JSON together: convert the JSON first.
	kineto2ev -q -o "$T/r1.ev" "$r1"
	run -2 ev-stats report -o "$T/mix" "$r0" "$T/r1.ev"
	assert_output --partial "Kineto JSON and ev streams mixed"
}

@test "report: an analysis's notes once, named by its table; usage errors" {
	two_ranks
	# Rank 1 alone: its collectives were not seen on rank 0.
	run -0 --separate-stderr ev-stats report -o "$T/rep" "$T/r1.ev"
	run -0 grep -c 'collectives were not seen on every rank' <<<"$stderr"
	assert_output 1
	[[ "$stderr" == *"ev-stats: warning: coll_analysis: "*" collectives were not seen on every rank of their communicator"* ]]
	run -2 ev-stats report "$T/m.ev"
	assert_output --partial "report: -o DIR is required"
	run -2 ev-stats report --by=rank -o "$T/x" "$T/m.ev"
	assert_output --partial "report: --by does not apply"
	run -2 ev-stats report --table=each -o "$T/x" "$T/m.ev"
	assert_output --partial "report: --table does not apply"
	# An option of a table the report does not make is refused, not
	# ignored; one of a table it makes is taken.
	run -2 ev-stats report --annotate="$T/a.ev" -o "$T/x" "$T/m.ev"
	assert_output --partial "report: --annotate does not apply (no table of it takes it)"
	[ ! -e "$T/a.ev" ] && [ ! -e "$T/x" ]
	run -2 ev-stats report --tracelens --consecutive-kernel-delay=5 -o "$T/x" "$T/m.ev"
	assert_output --partial "report --tracelens: --consecutive-kernel-delay does not apply"
	run -0 ev-stats report -q --short-us=5 -o "$T/x" "$T/m.ev"
	# -o an existing file, not a directory: the error names it
	: >"$T/f"
	run -1 ev-stats report -o "$T/f" "$T/m.ev"
	assert_output --partial "$T/f"
}
