#!/usr/bin/env bats
# ev-xlsx: TSV tables into an Excel workbook, read back with openpyxl.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	XLSX="$TESTS_DIR/fixtures/evkit-report/check-xlsx.py"
}


@test "--help, --version and usage errors" {
	run -0 --separate-stderr ev-xlsx --help
	assert_line --index 0 "Usage: ev-xlsx [options] [-o OUT.xlsx] [SHEET=]TABLE.tsv..."
	[ -z "$stderr" ]
	run -0 ev-xlsx --version
	assert_line --index 0 --regexp '^ev-xlsx \(evkit\) '
	printf 'a\tb\n1\t2\n' >"$T/t.tsv"
	run -2 ev-xlsx -o "$T/o.xlsx"
	assert_output --partial "no table given"
	run -1 ev-xlsx -o "$T/t.tsv" "$T/t.tsv"
	assert_output --partial "is also an input"
	# Standard output (not a terminal), the same bytes as -o.
	ev-xlsx "$T/t.tsv" >"$T/stdout.xlsx"
	ev-xlsx -o "$T/o.xlsx" "$T/t.tsv"
	cmp "$T/stdout.xlsx" "$T/o.xlsx"
	run -0 cat "$T/t.tsv"
	assert_line --index 1 "1	2"
	run -2 ev-xlsx --bogus
}

@test "sheets, headers and every value read back; colours, frozen header, filters" {
	need_openpyxl
	long=$(printf 'x%.0s' $(seq 40000))
	{
		printf 'baseline\ttest\tmetric\tbase\tvalue\timprovement_pct\tstatus\n'
		printf 'Base ROCm\tnew\tGPU_total_time_ms\t2.41\t2.41\t0\tSimilar\n'
		printf 'Base ROCm\tnew\tGPU_idle_time_ms\t1.8585\t1.8285\t1.61420500404\tBetter\n'
		printf 'Base ROCm\tnew\tNCCL_x\t27.298999999999978\t\t-5.4\tWorse\n'
	} >"$T/dash.tsv"
	# Epoch ns: 19 digits, more than a double (or Excel) holds.
	printf 'name\tcount\tnote\tmin_ts\ngemm\t4194304\tnan\t1765217845926542330\ncomm\t1e-3\t0x10\t-1765217845926542331\n' >"$T/k.tsv"
	run -0 ev-xlsx -o "$T/b.xlsx" "Summary_Dashboard=$T/dash.tsv" "$T/k.tsv"
	run -0 "$PY_XLSX" "$XLSX" "$T/b.xlsx" Summary_Dashboard="$T/dash.tsv" k="$T/k.tsv"
	assert_output - <<'OUT'
sheet Summary_Dashboard rows 3 cols 7
sheet k rows 2 cols 4
OUT
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; ws = openpyxl.load_workbook(sys.argv[1])["k"]; print(repr(ws["D2"].value), repr(ws["B2"].value))' "$T/b.xlsx"
	assert_output "'1765217845926542330' 4194304"
	# A cell beyond Excel's limit is cut, with a warning; odd sheet names fixed.
	printf 'name\n%s\n' "$long" >"$T/long.tsv"
	run -0 ev-xlsx -o "$T/c.xlsx" "a[b]:c=$T/long.tsv"
	assert_line "ev-xlsx: warning: $T/long.tsv: sheet name 'a[b]:c' is 'a_b__c' in the workbook (Excel's limits)"
	assert_line --partial "1 cell(s) longer than 32767 characters were cut"
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; wb = openpyxl.load_workbook(sys.argv[1]); print(wb.sheetnames, len(wb["a_b__c"]["A2"].value))' "$T/c.xlsx"
	assert_output "['a_b__c'] 32767"
}

@test "bad tables: the file and line, exit 1, nothing left behind" {
	printf 'a\tb\n1\t2\n3\n' >"$T/bad.tsv"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/bad.tsv"
	assert_output "ev-xlsx: $T/bad.tsv: line 3: 1 fields, the header has 2"
	: >"$T/empty.tsv"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/empty.tsv"
	assert_output "ev-xlsx: $T/empty.tsv: empty: no header line"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/nosuch.tsv"
	assert_output --partial "$T/nosuch.tsv: No such file or directory"
	printf 'a\n1\n' >"$T/a.tsv"
	run -1 ev-xlsx -o "$T/o.xlsx" x="$T/a.tsv" x="$T/a.tsv"
	assert_output --partial "sheet 'x'"
	run -0 ls -A "$T"
	refute_output --partial ".xlsx"
	# Standard input, once.
	run -0 bash -c 'printf "a\tb\n1\t2\n" | ev-xlsx -o "$1/s.xlsx" in=-' _ "$T"
	[ -s "$T/s.xlsx" ]
	run -2 ev-xlsx -o "$T/s.xlsx" - -
}

# cells BOOK SHEET: every row of the sheet, one Python repr list a line.
cells() {
	"$PY_XLSX" -c 'import openpyxl, sys
for row in openpyxl.load_workbook(sys.argv[1])[sys.argv[2]].iter_rows(values_only=True):
    print(list(row))' "$1" "$2"
}

@test "CSV tables (RFC 4180 quoting) by name or by content, TSV unchanged" {
	need_openpyxl
	# Quoted commas, doubled quotes, a line break inside a field, CRLF.
	printf 'name,calls,total_us\r\n"conv, fused",2,3.5\r\n"say ""hi""",1,\r\n"two\nlines",1,2\r\n' >"$T/k.csv"
	run -0 --separate-stderr ev-xlsx -o "$T/k.xlsx" "$T/k.csv"
	[ -z "$stderr" ]
	run -0 cells "$T/k.xlsx" k
	assert_output - <<'OUT'
['name', 'calls', 'total_us']
['conv, fused', 2, 3.5]
['say "hi"', 1, None]
['two\nlines', 1, 2]
OUT
	# Without the name: CSV when the header has commas and no TAB, said.
	run -0 --separate-stderr bash -c 'ev-xlsx -o "$1/in.xlsx" k=- <"$1/k.csv"' _ "$T"
	[ "$stderr" = "ev-xlsx: warning: standard input: read as CSV (its header has commas and no TAB; name it .csv or .tsv to say)" ]
	run -0 cells "$T/in.xlsx" k
	assert_line --index 1 "['conv, fused', 2, 3.5]"
	# A TSV keeps its commas and quotes in the cells, by name or content.
	printf 'a,x\tb\n"1,5"\tx,y\n' >"$T/t.tsv"
	cp "$T/t.tsv" "$T/t.dat"
	run -0 --separate-stderr ev-xlsx -o "$T/t.xlsx" "$T/t.tsv" d="$T/t.dat"
	[ -z "$stderr" ]
	run -0 cells "$T/t.xlsx" t
	assert_output - <<'OUT'
['a,x', 'b']
['"1,5"', 'x,y']
OUT
	run -0 cells "$T/t.xlsx" d
	assert_line --index 1 "['\"1,5\"', 'x,y']"
	# flex-stats' CSV: every column of the table (one column before).
	flex2ev -q -o "$T/j.ev" "$TESTS_DIR/fixtures/flex2ev/job.json"
	flex-stats summary -o "$T/summary.csv" "$T/j.ev"
	run -0 ev-xlsx -o "$T/s.xlsx" "$T/summary.csv"
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; ws = openpyxl.load_workbook(sys.argv[1])["summary"]; print(ws.max_column, ws.max_row)' "$T/s.xlsx"
	assert_output "10 $(wc -l <"$T/summary.csv")"
	# A CSV named .tsv: one column, and the likely reason said.
	cp "$T/summary.csv" "$T/summary.tsv"
	run -0 --separate-stderr ev-xlsx -o "$T/s2.xlsx" "$T/summary.tsv"
	[ "$stderr" = "ev-xlsx: warning: $T/summary.tsv: one column, its header has commas: if the table is CSV, name it .csv" ]
}

@test "acelyzer's padded text named .csv: read as TSV (said once), padded numbers are numbers" {
	need_openpyxl
	# flex-stats --acelyzer-text writes acelyzer's _summary.csv: TABs and
	# blanks, no comma; read as CSV it was one column per line.
	flex2ev -q -o "$T/j.ev" "$TESTS_DIR/fixtures/flex2ev/job.json"
	flex-stats summary --acelyzer-text -o "$T/summary.csv" "$T/j.ev"
	flex-stats summary -o "$T/plain.csv" "$T/j.ev"
	run -0 --separate-stderr ev-xlsx -o "$T/s.xlsx" "$T/summary.csv"
	[ "$stderr" = "ev-xlsx: warning: $T/summary.csv: read as TSV (its header has TABs and no comma, as acelyzer's padded text)" ]
	run -0 cells "$T/s.xlsx" summary
	assert_line --index 0 "['Time', 'Total Time', 'Calls', 'Mean', 'Median', 'Min', 'Max', 'StDev', 'pid', 'Name']"
	[ "${#lines[@]}" -eq "$(wc -l <"$T/plain.csv")" ]
	# Row for row the CSV's numbers and names, as numbers and text.
	"$PY_XLSX" -c 'import csv, openpyxl, sys
rows = list(openpyxl.load_workbook(sys.argv[1])["summary"].iter_rows(values_only=True))[1:]
want = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(want), (len(rows), len(want))
for r, w in zip(rows, want):
    got = dict(zip(["percent", "total_us", "calls", "mean_us", "median_us", "min_us", "max_us", "stdev_us", "rank", "name"], r))
    for k, v in w.items():
        if k == "name":
            assert got[k] == v, (got[k], v)
        else:
            assert isinstance(got[k], (int, float)) and abs(got[k] - float(v)) < 0.0051, (k, got[k], v)' "$T/s.xlsx" "$T/plain.csv"
	# By hand: numbers padded with blanks are numbers, in a .tsv too, where
	# a padded text keeps its blanks; a header with a TAB and a comma in a
	# .csv stays CSV; a CSV header may still span lines inside quotes.
	printf ' a \t b\n  12.500\t x \n' >"$T/p.tsv"
	printf 'a\t,b\n1\t,2\n' >"$T/c.csv"
	printf '"x\ny",z\n1, 2 \n' >"$T/q.csv"
	run -0 --separate-stderr ev-xlsx -o "$T/p.xlsx" "$T/p.tsv" "$T/c.csv" "$T/q.csv"
	[ -z "$stderr" ]
	run -0 cells "$T/p.xlsx" p
	assert_output - <<'OUT'
[' a ', ' b']
[12.5, ' x ']
OUT
	run -0 cells "$T/p.xlsx" c
	assert_line --index 1 "['1\\t', 2]"
	run -0 cells "$T/p.xlsx" q
	assert_output - <<'OUT'
['x\ny', 'z']
[1, 2]
OUT
}

@test "bad CSV: the file, the record's line and the reason, nothing left behind" {
	printf 'a,b\n"x"y,1\n' >"$T/q.csv"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/q.csv"
	assert_output "ev-xlsx: $T/q.csv: line 2: not CSV: text after a closing quote (a quote inside a field is doubled: \"\")"
	printf 'a,b\n1,2\nx"y,1\n' >"$T/u.csv"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/u.csv"
	assert_output "ev-xlsx: $T/u.csv: line 3: not CSV: a quote inside an unquoted field (quote the field, doubling the quote)"
	printf 'a,b\n"open,1\n2,3\n' >"$T/o.csv"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/o.csv"
	assert_output "ev-xlsx: $T/o.csv: line 2: not CSV: a quoted field is not closed"
	printf 'a,b\n"x\ny",1\n1\n' >"$T/n.csv"
	run -1 ev-xlsx -o "$T/o.xlsx" "$T/n.csv"
	assert_output "ev-xlsx: $T/n.csv: line 4: 1 fields, the header has 2"
	run -0 ls -A "$T"
	refute_output --partial ".xlsx"
}

@test "the workbook is a sound zip written front to back: through a pipe, no temporary files" {
	need_openpyxl
	printf 'name\ttime_ms\tstatus\ngemm\t2.000\tBetter\n<a&b>\t68.3469\tWorse\n' >"$T/t.tsv"
	# Standard output a pipe: nothing is seeked back to.
	ev-xlsx "$T/t.tsv" | cat >"$T/p.xlsx"
	# No temporary file anywhere: an unusable TMPDIR does not matter.
	TMPDIR="$T/nosuch" ev-xlsx -o "$T/o.xlsx" "$T/t.tsv"
	cmp "$T/p.xlsx" "$T/o.xlsx"
	run -0 "$PY_XLSX" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
print(sorted(z.namelist()))' "$T/p.xlsx"
	assert_output "['[Content_Types].xml', '_rels/.rels', 'docProps/app.xml', 'docProps/core.xml', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml']"
	# Numbers as their shortest text, read back exactly; text escaped.
	run -0 cells "$T/p.xlsx" t
	assert_output - <<'OUT'
['name', 'time_ms', 'status']
['gemm', 2, 'Better']
['<a&b>', 68.3469, 'Worse']
OUT
	run -0 ls -A "$T"
	assert_output - <<'OUT'
o.xlsx
p.xlsx
t.tsv
OUT
}
