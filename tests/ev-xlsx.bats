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
