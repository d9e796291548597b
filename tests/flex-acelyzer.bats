#!/usr/bin/env bats
# flex2ev, flex-stats and ev2perfetto against the outputs of acelyzer
# itself on the shared AIU samples (tests/expected/acelyzer, README there
# says how they were made), and the same rules on fixtures worked by hand.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	A="$SHARED_DATA/acelyzer"
	X="$TESTS_DIR/expected/acelyzer"
}

# same_table EVKIT_CSV ACELYZER_TSV: the same rows and columns; names
# equal, numbers within a relative 1e-6 beyond the 0.001 both print.
same_table() {
	awk 'NR == FNR { if (FNR > 1) { n = split($0, f, "\t"); for (i = 1; i <= n; i++) { gsub(/^ +| +$/, "", f[i]); a[FNR, i] = f[i] } ; na = FNR; nf[FNR] = n } ; next }
	FNR == 1 { next }
	{
		n = split($0, g, ",")
		if (n != nf[FNR]) { printf "row %d: %d columns, acelyzer %d\n", FNR, n, nf[FNR]; bad = 1; next }
		for (i = 1; i <= n; i++) {
			x = a[FNR, i]; y = g[i]
			if (x ~ /^-?[0-9.]+$/ && y ~ /^-?[0-9.e+-]+$/) {
				d = x - y; if (d < 0) d = -d; m = (x < 0 ? -x : x)
				if (d > 0.0005 + 1e-6 * m) { printf "row %d column %d: %s, acelyzer %s\n", FNR, i, y, x; bad = 1 }
			} else if (x != y) { printf "row %d column %d: \"%s\", acelyzer \"%s\"\n", FNR, i, y, x; bad = 1 }
		}
		rows = FNR
	}
	END { if (rows + 0 != na + 0) { printf "%d rows, acelyzer %d\n", rows - 1, na - 1; bad = 1 } ; exit bad }' "$2" "$1"
}

@test "ts_analysis by hand: mean, median, min, max, stdev of the stage gaps" {
	# k_1..k_4 on rank 0 normalise to k_[N]; TS3-TS2 = 100, 200, 600, 700:
	# mean 400, median (200 + 600) / 2 = 400, stdev sqrt(260000 / 3) =
	# 294.392; TS4-TS3 = 10 each; TS2-TS1 = 1, 2, 3, 4: mean 2.5, median
	# 2.5, stdev sqrt(5 / 3) = 1.291.  Rank 1's one kernel comes after.
	cat >"$T/k.json" <<'JSON'
[
{"name":"k_1 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":1,"args":{"TS1":"1000","TS2":"1001","TS3":"1101","TS4":"1111","TS5":"1112"}},
{"name":"k_2 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":20,"dur":1,"args":{"TS1":"2000","TS2":"2002","TS3":"2202","TS4":"2212","TS5":"2213"}},
{"name":"k_3 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":30,"dur":1,"args":{"TS1":"3000","TS2":"3003","TS3":"3603","TS4":"3613","TS5":"3614"}},
{"name":"k_4 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":40,"dur":1,"args":{"TS1":"4000","TS2":"4004","TS3":"4704","TS4":"4714","TS5":"4715"}},
{"name":"q Cmpt Exec","ph":"X","pid":1,"tid":1,"ts":40,"dur":1,"args":{"TS1":"0x10","TS2":"0x10","TS3":"0x20","TS4":"0x30","TS5":"0x40"}}
]
JSON
	flex2ev -q --align=none -o "$T/k.ev" "$T/k.json"
	run -0 flex-stats ts_analysis "$T/k.ev"
	assert_output - <<'EOF'
Calls,TS2-1_Mean,TS2-1_Median,TS2-1_Min,TS2-1_Max,TS2-1_StDev,TS3-2_Mean,TS3-2_Median,TS3-2_Min,TS3-2_Max,TS3-2_StDev,TS4-3_Mean,TS4-3_Median,TS4-3_Min,TS4-3_Max,TS4-3_StDev,TS5-4_Mean,TS5-4_Median,TS5-4_Min,TS5-4_Max,TS5-4_StDev,pid,Name
4,2.5,2.5,1,4,1.291,400,400,100,700,294.392,10,10,10,10,0,1,1,1,1,0,0,k_[N] Cmpt Exec
1,0,0,0,0,0,16,16,16,16,0,16,16,16,16,0,16,16,16,16,0,1,q Cmpt Exec
EOF
	# A kernel without counters is left out of the table, and said.
	printf '[{"name":"c Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":5,"dur":1}]' >"$T/c.json"
	flex2ev -q -o "$T/c.ev" "$T/c.json"
	run -1 flex-stats ts_analysis "$T/c.ev"
	assert_output --partial "none of the 1 kernels has TS1..TS5 counters"
	cat "$T/c.ev" "$T/k.ev" >"$T/ck.ev"
	run -0 --separate-stderr flex-stats ts_analysis "$T/ck.ev"
	[[ "$stderr" == *"1 kernel(s) without TS1..TS5 counters: not in the table"* ]]
	assert_line --index 1 --partial ",0,k_[N] Cmpt Exec"
}

@test "shared data: ts_analysis equals acelyzer's on every sample" {
	need_shared_data
	flex2ev -q -o "$T/j4.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats -o "$T/j4.csv" ts_analysis "$T/j4.ev"
	run -0 same_table "$T/j4.csv" "$X/sample_flex_3062_job_4_ts_analysis.csv"
	# The compiler logs and --freq change no counter gap.
	flex2ev -q --freq=557:1100 -o "$T/j4f.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats -o "$T/j4f.csv" ts_analysis "$T/j4f.ev"
	run -0 same_table "$T/j4f.csv" "$X/job4_c_sample_comp_log_ideal_ts_analysis.csv"
	run -0 same_table "$T/j4f.csv" "$X/job4_c_dt_cycles_table_ts_analysis.csv"
	# acelyzer collapses the 4-rank file to pid 0; split per rank it gives
	# one row per rank and kernel, as flex2ev does from the one file.
	flex2ev -q -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	flex-stats -o "$T/tp4.csv" ts_analysis "$T/tp4.ev"
	run -0 same_table "$T/tp4.csv" "$X/allreduce_tp4_split_ts_analysis.csv"
	run -1 same_table "$T/tp4.csv" "$X/allreduce_tp4_ts_analysis.csv"
	# No 'Cmpt Exec' kernels: acelyzer writes a header-only file, evkit
	# an error; metadata only: flex2ev refuses the file.
	flex2ev -q -o "$T/b.ev" "$A/basic_event_test_cases.json"
	run -1 flex-stats ts_analysis "$T/b.ev"
	assert_output --partial "no 'Cmpt Exec' kernels"
	[ "$(wc -l <"$X/basic_event_test_cases_ts_analysis.csv")" -eq 1 ]
	run -1 flex2ev "$A/meta_events_only.json"
	[ "$(wc -l <"$X/meta_events_only_ts_analysis.csv")" -eq 1 ]
}

@test "--acelyzer-text by hand: acelyzer's header lines, column order and formats" {
	# Rank 0: b first, then k_1..k_4 (k_[N]), then a, b's and a's totals
	# equal: acelyzer's stable sort keeps b before a; rank 1 after rank 0.
	cat >"$T/k.json" <<'JSON'
[
{"name":"b Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":5,"dur":1,"args":{"TS1":"0","TS2":"0","TS3":"0","TS4":"20","TS5":"20"}},
{"name":"k_1 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":1,"args":{"TS1":"1000","TS2":"1001","TS3":"1101","TS4":"1111","TS5":"1112"}},
{"name":"k_2 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":20,"dur":1,"args":{"TS1":"2000","TS2":"2002","TS3":"2202","TS4":"2212","TS5":"2213"}},
{"name":"k_3 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":30,"dur":1,"args":{"TS1":"3000","TS2":"3003","TS3":"3603","TS4":"3613","TS5":"3614"}},
{"name":"k_4 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":40,"dur":1,"args":{"TS1":"4000","TS2":"4004","TS3":"4704","TS4":"4714","TS5":"4715"}},
{"name":"a Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":45,"dur":1,"args":{"TS1":"0","TS2":"0","TS3":"0","TS4":"20","TS5":"20"}},
{"name":"q Cmpt Exec","ph":"X","pid":1,"tid":1,"ts":40,"dur":1,"args":{"TS1":"0x10","TS2":"0x10","TS3":"0x20","TS4":"0x30","TS5":"0x40"}}
]
JSON
	flex2ev -q --align=none -o "$T/k.ev" "$T/k.json"
	# TABs shown as '|'.  A kernel lasts TS4 - TS3 cycles at 1000 MHz and
	# ends at ts + dur (b: 5.980 to 6).
	flex-stats --acelyzer-text summary -o "$T/s.txt" "$T/k.ev"
	run -0 tr '\t' '|' <"$T/s.txt"
	assert_output - <<'EOF'
Time  | Total Time| Calls|    Mean  |  Median  |    Min    |   Max   |   StDev  |  pid| Name 
50.00|      0.040|     4|    0.010|    0.010|    0.010|    0.010|    0.000|    0| k_[N] Cmpt Exec
25.00|      0.020|     1|    0.020|    0.020|    0.020|    0.020|    0.000|    0| b Cmpt Exec
25.00|      0.020|     1|    0.020|    0.020|    0.020|    0.020|    0.000|    0| a Cmpt Exec
100.00|      0.016|     1|    0.016|    0.016|    0.016|    0.016|    0.000|    1| q Cmpt Exec
EOF
	flex-stats active --acelyzer-text -o "$T/a.txt" "$T/k.ev"
	run -0 tr '\t' '|' <"$T/a.txt"
	assert_output - <<'EOF'
Total Kernel Time  |  Elapsed Time|  Start Time|         End Time  | Active percentage  |   pid 
    0.080|     40.020|      5.980|    46.000|  0.20|    0
    0.016|      0.016|     40.984|    41.000| 100.00|    1
EOF
	flex-stats ts_analysis --acelyzer-text -o "$T/t.txt" "$T/k.ev"
	run -0 tr '\t' '|' <"$T/t.txt"
	assert_line --index 0 "Calls  | TS2-1_Mean   |TS2-1_Median  |TS2-1_Min    |TS2-1_Max   |TS2-1_StDev  |TS3-2_Mean   |TS3-2_Median  |TS3-2_Min    |TS3-2_Max   |TS3-2_StDev  |TS4-3_Mean   |TS4-3_Median  |TS4-3_Min    |TS4-3_Max   |TS4-3_StDev  |TS5-4_Mean   |TS5-4_Median  |TS5-4_Min    |TS5-4_Max   |TS5-4_StDev  |pid| Name "
	assert_line --index 1 "     4|    2.500|    2.500|    1.000|    4.000|    1.291|  400.000|  400.000|  100.000|  700.000|  294.392|   10.000|   10.000|   10.000|   10.000|    0.000|    1.000|    1.000|    1.000|    1.000|    0.000|    0| k_[N] Cmpt Exec"
	assert_line --index 2 --partial "|    0| b Cmpt Exec"
	assert_line --index 3 --partial "|    0| a Cmpt Exec"
	assert_line --index 4 "     1|    0.000|    0.000|    0.000|    0.000|    0.000|   16.000|   16.000|   16.000|   16.000|    0.000|   16.000|   16.000|   16.000|   16.000|    0.000|   16.000|   16.000|   16.000|   16.000|    0.000|    1| q Cmpt Exec"
	# acelyzer writes its other tables as CSV: a usage error.
	run -2 flex-stats --acelyzer-text stats "$T/k.ev"
	assert_output --partial "--acelyzer-text applies to summary, active, ts_analysis and categories"
}

@test "shared data: --acelyzer-text is acelyzer's _summary, _active, _ts_analysis byte for byte" {
	need_shared_data
	flex2ev -q -o "$T/j4.ev" "$A/sample_flex_3062_job_4.json"
	for t in summary active ts_analysis; do
		flex-stats --acelyzer-text -o "$T/j4_$t.csv" "$t" "$T/j4.ev"
		cmp "$T/j4_$t.csv" "$X/sample_flex_3062_job_4_$t.csv"
	done
	# The TP4 file as acelyzer's per-rank run (its default alignment).
	flex2ev -q --align=acelyzer -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	for t in summary active ts_analysis; do
		flex-stats --acelyzer-text -o "$T/tp4_$t.csv" "$t" "$T/tp4.ev"
		cmp "$T/tp4_$t.csv" "$X/allreduce_tp4_split_$t.csv"
	done
	# At --freq=557:1100 the kernel times are cycles / 557: evkit keeps
	# whole ns, acelyzer the fraction.  summary and ts_analysis still are
	# acelyzer's bytes; _active's sums and ends differ by 0.001 us at most.
	flex2ev -q --freq=557:1100 -o "$T/j4f.ev" "$A/sample_flex_3062_job_4.json"
	for t in summary ts_analysis; do
		flex-stats --acelyzer-text -o "$T/j4f_$t.csv" "$t" "$T/j4f.ev"
		cmp "$T/j4f_$t.csv" "$X/job4_c_sample_comp_log_ideal_$t.csv"
	done
	flex-stats --acelyzer-text -o "$T/j4f_active.csv" active "$T/j4f.ev"
	[ "$(head -1 "$T/j4f_active.csv")" = "$(head -1 "$X/job4_c_sample_comp_log_ideal_active.csv")" ]
	paste "$T/j4f_active.csv" "$X/job4_c_sample_comp_log_ideal_active.csv" | awk -F'\t' '
		NR == 1 { next }
		{ for (i = 1; i <= 6; i++) { d = $i - $(i + 6); if (d < 0) d = -d; if (d > 0.0011) { print "field " i ": " $i ", acelyzer " $(i + 6); bad = 1 } } }
		END { if (NR != 2) { print NR - 1 " rows" ; bad = 1 } ; exit bad }'
}

# same_csv EVKIT_CSV ACELYZER_CSV [COLUMN...]: the same header and rows,
# in order; empty fields equal, numbers within a relative 1e-6 (acelyzer's
# float noise: 282.60302734375 for 282.603 us), or SAME_ABS apart.  With
# COLUMNs, only those.
same_csv() {
	local e=$1 a=$2
	shift 2
	awk -F, -v cols="$*" -v abs="${SAME_ABS:-0}" 'BEGIN { nc = split(cols, want, " ") }
	NR == FNR { a[FNR] = $0; na = FNR; next }
	{
		if (FNR > na) { printf "row %d: not in acelyzer\n", FNR - 1; bad = 1; next }
		n = split($0, g, ","); m = split(a[FNR], f, ",")
		if (n != m) { printf "row %d: %d fields, acelyzer %d\n", FNR - 1, n, m; bad = 1; next }
		for (i = 1; i <= n; i++) {
			if (nc) { ok = 0; for (j = 1; j <= nc; j++) if (want[j] == i) ok = 1; if (!ok) continue }
			x = f[i]; y = g[i]
			if (x ~ /^-?[0-9.]+(e-?[0-9]+)?$/ && y ~ /^-?[0-9.]+(e-?[0-9]+)?$/) {
				d = x - y; if (d < 0) d = -d; mx = (x < 0 ? -x : x)
				if (d > 1e-6 * mx && d > abs + 0) { printf "row %d field %d: %s, acelyzer %s\n", FNR - 1, i, y, x; bad = 1 }
			} else if (x != y) { printf "row %d field %d: \"%s\", acelyzer \"%s\"\n", FNR - 1, i, y, x; bad = 1 }
		}
	}
	END { if (FNR != na) { printf "%d rows, acelyzer %d\n", FNR - 1, na - 1; bad = 1 } ; exit bad }' "$a" "$e"
}

@test "stats by hand: acelyzer's _stats_summary, its names, spans and fractions" {
	# Rank 1's kernel starts first: its row first.  Rank 0: kernels
	# [10, 14) and [20, 21) us, a Prep before and a DMA after that are no
	# kernels: elapsed 11, compute 5, no collective: comm empty.  Rank 1:
	# one 2 us kernel, elapsed 2, fraction 1.
	cat >"$T/s.json" <<'JSON'
[
{"name":"p Cmpt Prep","ph":"X","pid":0,"tid":1,"ts":1,"dur":2},
{"name":"a Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":4},
{"name":"b Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":20,"dur":1},
{"name":"x DmaO","ph":"X","pid":0,"tid":2,"ts":30,"dur":5},
{"name":"c Cmpt Exec","ph":"X","pid":1,"tid":1,"ts":5,"dur":2}
]
JSON
	flex2ev -q --align=none -o "$T/s.ev" "$T/s.json"
	run -0 flex-stats stats "$T/s.ev"
	assert_output - <<'EOF'
pid,elapsed_time,comp_active_atime,comm_active_atime,comp_active_atime_perc,comm_active_atime_perc
1,2,2,,1,
0,11,5,,0.45454545454545453,
EOF
}

@test "shared data: stats equals acelyzer's _stats_summary (-R) on every sample" {
	need_shared_data
	flex2ev -q -o "$T/j4.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats -o "$T/j4.csv" stats "$T/j4.ev"
	run -0 same_csv "$T/j4.csv" "$X/sample_flex_3062_job_4_stats_summary.csv"
	flex2ev -q --freq=557:1100 -o "$T/j4f.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats -o "$T/j4f.csv" stats "$T/j4f.ev"
	run -0 same_csv "$T/j4f.csv" "$X/job4_c_sample_comp_log_ideal_stats_summary.csv"
	run -0 same_csv "$T/j4f.csv" "$X/job4_c_dt_cycles_table_stats_summary.csv"
	# The 4-rank file against acelyzer on it split per rank: with the
	# alignment off in both (acelyzer -M) every row, in acelyzer's order.
	# acelyzer builds collective spans only with --flow, which stops with
	# a ValueError on this file: its comm columns are empty, evkit's have
	# the coll spans.
	flex2ev -q --align=none -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	flex-stats -o "$T/tp4.csv" stats "$T/tp4.ev"
	run -0 same_csv "$T/tp4.csv" "$X/allreduce_tp4_split_M_stats_summary.csv" 1 2 3 5
	run -0 cut -d, -f1,4,6 "$X/allreduce_tp4_split_M_stats_summary.csv"
	assert_output - <<'EOF'
pid,comm_active_atime,comm_active_atime_perc
1,,
2,,
3,,
0,,
EOF
	run -0 cut -d, -f1,4 "$T/tp4.csv"
	assert_output - <<'EOF'
pid,comm_active_atime
1,450.856
2,433.667
3,456.391
0,452.801
EOF
	# With each tool's default alignment the compute times agree; the spans
	# of ranks 1-3 do not (acelyzer moves each device event, flex2ev whole
	# ranks), nor the order of the first kernels.
	flex2ev -q -o "$T/tp4p.ev" "$A/allreduce_tp4.json"
	flex-stats -o "$T/tp4p.csv" stats "$T/tp4p.ev"
	sort "$T/tp4p.csv" >"$T/e.csv"
	sort "$X/allreduce_tp4_split_stats_summary.csv" >"$T/a.csv"
	run -0 same_csv "$T/e.csv" "$T/a.csv" 1 3
	run -1 same_csv "$T/tp4p.csv" "$X/allreduce_tp4_split_stats_summary.csv" 1 2
	# acelyzer collapses the one file to pid 0; no kernels: acelyzer writes
	# a header, evkit an error; metadata only: flex2ev refuses the file.
	run -1 same_csv "$T/tp4.csv" "$X/allreduce_tp4_stats_summary.csv" 1 2 3 5
	flex2ev -q -o "$T/b.ev" "$A/basic_event_test_cases.json"
	run -1 flex-stats stats "$T/b.ev"
	assert_output --partial "no 'Cmpt Exec' kernels and no collective spans"
	[ "$(wc -l <"$X/basic_event_test_cases_stats_summary.csv")" -eq 1 ]
	[ "$(wc -l <"$X/meta_events_only_stats_summary.csv")" -eq 1 ]
}

@test "shared data: categories equals acelyzer's, header, row order and phase" {
	need_shared_data
	flex2ev -q --freq=557:1100 -o "$T/j4f.ev" "$A/sample_flex_3062_job_4.json"
	# Kernel times are the TS3 -> TS4 cycles at 557 MHz, unrounded, as
	# acelyzer's (within 1e-8 us: it subtracts float time stamps); the
	# .txt (pandas' to_string) byte for byte.
	flex-stats categories -q --freq=557:1100 -c "$A/sample_comp_log_ideal.txt" -o "$T/c1.csv" "$T/j4f.ev"
	SAME_ABS=1e-8 run -0 same_csv "$T/c1.csv" "$X/job4_c_sample_comp_log_ideal_categories.csv"
	flex-stats categories --acelyzer-text -q --freq=557:1100 -c "$A/sample_comp_log_ideal.txt" -o "$T/c1.txt" "$T/j4f.ev"
	cmp "$T/c1.txt" "$X/job4_c_sample_comp_log_ideal_categories.txt"
	# None of job4's kernels in the log: other equals Total and comes after
	# it, as acelyzer's stable sort of Total, StcdpHbm, other, the log's.
	flex-stats categories -q --freq=557:1100 -c "$A/dt_cycles_table.log" -o "$T/c2.csv" "$T/j4f.ev"
	SAME_ABS=1e-8 run -0 same_csv "$T/c2.csv" "$X/job4_c_dt_cycles_table_categories.csv"
	run -0 tail -n 2 "$T/c2.csv"
	assert_output - <<'EOF'
0,UNKN,Total,2702.6068222621193,1,17,0,0,0,0
0,UNKN,other,2702.6068222621193,1,17,0,0,0,0
EOF
	# No ideal time at all: Frac_Ideal is acelyzer's int 0, printed "0".
	flex-stats categories --acelyzer-text -q --freq=557:1100 -c "$A/dt_cycles_table.log" -o "$T/c2.txt" "$T/j4f.ev"
	cmp "$T/c2.txt" "$X/job4_c_dt_cycles_table_categories.txt"
	# Not the SoC clock the stream was converted at: whole ns.
	run -0 flex-stats categories -q --freq=1000:1100 -c "$A/dt_cycles_table.log" "$T/j4f.ev"
	assert_line '0,UNKN,Total,2702.608,1,17,0,0,0,0'
	# A PREFILL or DECODING line before the table: acelyzer's TTFT or ITL
	# phase, also for a job none of whose kernels is in the table.
	sed '/^====== Perf Summary ======$/i\    PREFILL' "$A/sample_comp_log_ideal.txt" >"$T/prefill.txt"
	sed '/^====== Perf Summary ======$/i\    DECODING' "$A/dt_cycles_table.log" >"$T/decoding.log"
	flex-stats categories -q --freq=557:1100 -c "$T/prefill.txt" -o "$T/c3.csv" "$T/j4f.ev"
	SAME_ABS=1e-8 run -0 same_csv "$T/c3.csv" "$X/job4_c_prefill_comp_log_ideal_categories.csv"
	flex-stats categories -q --freq=557:1100 -c "$T/decoding.log" -o "$T/c4.csv" "$T/j4f.ev"
	SAME_ABS=1e-8 run -0 same_csv "$T/c4.csv" "$X/job4_c_decoding_dt_cycles_table_categories.csv"
	flex-stats categories --acelyzer-text -q --freq=557:1100 -c "$T/prefill.txt" -o "$T/c3.txt" "$T/j4f.ev"
	cmp "$T/c3.txt" "$X/job4_c_prefill_comp_log_ideal_categories.txt"
	flex-stats categories --acelyzer-text -q --freq=557:1100 -c "$T/decoding.log" -o "$T/c4.txt" "$T/j4f.ev"
	cmp "$T/c4.txt" "$X/job4_c_decoding_dt_cycles_table_categories.txt"
	run -0 cut -d, -f2 "$T/c4.csv"
	assert_output "$(printf 'Phase\nITL\nITL\nITL\nITL\nITL')"
}

@test "categories by hand: one section per phase, the logs' kernels decide" {
	# Two tables: a (PREFILL) and b (DECODING).  Rank 0 runs x (in no
	# table) before a: x joins a's TTFT section; then b: ITL; then y (in
	# no table): the latest phase, ITL.  ITL sorts before TTFT.
	cat >"$T/two.log" <<'LOG'
    PREFILL
====== Perf Summary ======
~~~~ Ideal/Total Cycles ~~~~
a-opCatConv_fp16                                                                1100
====== Perf Summary End ======
  DECODING
====== Perf Summary ======
~~~~ Ideal/Total Cycles ~~~~
b-opCatBmm_fp16                                                                 2200
====== Perf Summary End ======
LOG
	cat >"$T/two.json" <<'JSON'
[
{"name":"x Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":1,"dur":1},
{"name":"a Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":4},
{"name":"b Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":20,"dur":8},
{"name":"y Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":30,"dur":2}
]
JSON
	flex2ev -q --align=none -o "$T/two.ev" "$T/two.json"
	run -0 flex-stats categories -q -c "$T/two.log" "$T/two.ev"
	assert_output - <<'EOF'
Pid,Phase,Category,Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,PT_Util
0,ITL,StcdpHbm,0,0,0,0,0,0,0
0,ITL,Conv_fp16,0,0,0,0,0,0,0
0,ITL,other,2,0.2,1,0,0,0,0
0,ITL,Bmm_fp16,8,0.8,1,2,2200,1,0.25
0,ITL,Total,10,1,2,2,2200,1,0.2
0,TTFT,StcdpHbm,0,0,0,0,0,0,0
0,TTFT,Bmm_fp16,0,0,0,0,0,0,0
0,TTFT,other,1,0.2,1,0,0,0,0
0,TTFT,Conv_fp16,4,0.8,1,1,1100,1,0.25
0,TTFT,Total,5,1,2,1,1100,1,0.2
EOF
}

@test "categories --acelyzer-text by hand: pandas' to_string(index=False)" {
	# Checked against pandas 1.5.3's DataFrame.to_string(index=False) of
	# the same rows with acelyzer's dtypes.  Columns right-justified to the
	# widest cell, a numeric header one blank wider, one blank between;
	# floats at 6 decimals with the zeros every value of the column ends
	# in cut (Kernel_Time "0.25": two decimals, Frac_Time one); integers
	# as they are; a value over 1e6 fits in 12 characters: fixed.
	cat >"$T/two.log" <<'LOG'
    PREFILL
====== Perf Summary ======
~~~~ Ideal/Total Cycles ~~~~
a-opCatConv_fp16                                                                1100
====== Perf Summary End ======
LOG
	cat >"$T/p.json" <<'JSON'
[
{"name":"x Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":1,"dur":1},
{"name":"a Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":4},
{"name":"a Cmpt Exec","ph":"X","pid":10,"tid":1,"ts":10,"dur":1234567.5},
{"name":"z Cmpt Exec","ph":"X","pid":10,"tid":1,"ts":1234600,"dur":0.25}
]
JSON
	flex2ev -q --align=none -o "$T/p.ev" "$T/p.json"
	run -0 flex-stats categories --acelyzer-text -q -c "$T/two.log" "$T/p.ev"
	assert_output - <<'EOF'
 Pid Phase  Category  Kernel_Time  Frac_Time  Calls  Ideal_Time  Ideal_Cyc  Frac_Ideal  PT_Util
   0  TTFT  StcdpHbm         0.00        0.0      0         0.0          0         0.0     0.00
   0  TTFT     other         1.00        0.2      1         0.0          0         0.0     0.00
   0  TTFT Conv_fp16         4.00        0.8      1         1.0       1100         1.0     0.25
   0  TTFT     Total         5.00        1.0      2         1.0       1100         1.0     0.20
  10  TTFT  StcdpHbm         0.00        0.0      0         0.0          0         0.0     0.00
  10  TTFT     other         0.25        0.0      1         0.0          0         0.0     0.00
  10  TTFT Conv_fp16   1234567.50        1.0      1         1.0       1100         1.0     0.00
  10  TTFT     Total   1234567.75        1.0      2         1.0       1100         1.0     0.00
EOF
	# Over 1e6 and longer than 12 characters: the column in "%.6e"; no
	# ideal time: Frac_Ideal holds acelyzer's int 0s.
	printf '[{"name":"p Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":1,"dur":123456789.123}]' >"$T/b.json"
	flex2ev -q --align=none -o "$T/b.ev" "$T/b.json"
	run -0 flex-stats categories --acelyzer-text -q "$T/b.ev"
	assert_output - <<'EOF'
 Pid Phase Category  Kernel_Time  Frac_Time  Calls  Ideal_Time  Ideal_Cyc  Frac_Ideal  PT_Util
   0  UNKN StcdpHbm 0.000000e+00        0.0      0         0.0          0           0      0.0
   0  UNKN    Total 1.234568e+08        1.0      1         0.0          0           0      0.0
   0  UNKN    other 1.234568e+08        1.0      1         0.0          0           0      0.0
EOF
}

@test "counters that cannot be stage gaps: no tsx record, and said" {
	# TS2 is 2^33 + 1 cycles below TS1: not a 32-bit wrap, so no gap.
	printf '[{"name":"w Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":5,"dur":1,"args":{"TS1":"0x200000001","TS2":"0","TS3":"1","TS4":"2","TS5":"3"}}]' >"$T/w.json"
	run -0 --separate-stderr flex2ev -o "$T/w.ev" "$T/w.json"
	[[ "$stderr" == *"1 kernel(s) whose TS1..TS5 go backwards or lie 2^32 cycles apart: no tsx record"* ]]
	run -0 ev-view -M -H -c type "$T/w.ev"
	assert_output "kernel"
}

# exec_ts TIMELINE: pid, name and TS1..TS5 args of every 'Cmpt Exec' slice,
# sorted, as the *_exec_ts.tsv files list acelyzer's.
exec_ts() {
	python3 - "$1" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
rows = sorted((e["args"]["rank"], e["name"], *(e["args"].get(k, "-") for k in ("TS1", "TS2", "TS3", "TS4", "TS5")))
              for e in ev if e.get("ph") == "X" and "Cmpt Exec" in e.get("name", ""))
print("pid\tname\tTS1\tTS2\tTS3\tTS4\tTS5")
for r in rows:
    print("\t".join(str(x) for x in r))
PY
}

@test "shared data: every kernel in the timeline has acelyzer's TS1..TS5 args" {
	need_shared_data
	flex2ev -q "$A/sample_flex_3062_job_4.json" | ev2perfetto -q -o "$T/j4.json"
	run -0 exec_ts "$T/j4.json"
	assert_output "$(cat "$X/sample_flex_3062_job_4_exec_ts.tsv")"
	flex2ev -q "$A/allreduce_tp4.json" | ev2perfetto -q -o "$T/tp4.json"
	run -0 exec_ts "$T/tp4.json"
	assert_output "$(cat "$X/allreduce_tp4_split_exec_ts.tsv")"
	# The counters belong to the kernel right after them only.
	flex2ev -q "$A/allreduce_tp4.json" | ev-view -t tsx,range --ev | ev2perfetto -q -o "$T/none.json"
	run -1 grep -c '"TS1"' "$T/none.json"
	assert_output 0
}

@test "clock detection by hand: acelyzer's two estimates and its 10% rule" {
	# Rank 0: k1 at 10 us, 2 us, TS4-TS3 = 1000 cycles: 500 MHz by
	# duration; k2 at 20 us, 1 us, 500 cycles: 500 MHz; TS3 5000 cycles
	# later over 10 us: 500 MHz by interval.
	cat >"$T/f.json" <<'JSON'
[
{"name":"k1 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":2,"args":{"TS1":"0","TS2":"0","TS3":"1000","TS4":"2000","TS5":"2001"}},
{"name":"k2 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":20,"dur":1,"args":{"TS1":"5000","TS2":"5000","TS3":"6000","TS4":"6500","TS5":"6501"}}
]
JSON
	run -0 --separate-stderr flex2ev -o "$T/f.ev" "$T/f.json"
	[[ "$stderr" == *"f.json: the cycle counters tick at 500.00 MHz, not at the default --freq of 1000 MHz (input_soc_freq/detected=2.000; min/mean/max over 2 kernel(s) of 1 rank(s): by interval 500.00/500.00/500.00, by duration 500.00/500.00/500.00): use --freq=500.00"* ]]
	run -0 --separate-stderr flex2ev --freq=560 -o "$T/f.ev" "$T/f.json"
	[[ "$stderr" == *"not at the --freq of 560 MHz (input_soc_freq/detected=1.120;"* ]]
	# Within 10%: nothing said.
	run -0 --separate-stderr flex2ev --freq=540 -o "$T/f.ev" "$T/f.json"
	[ -z "$stderr" ]
	run -0 --separate-stderr flex2ev -v --freq=500 -o "$T/f.ev" "$T/f.json"
	[[ "$stderr" == *"f.json: clock 500.00 MHz (min/mean/max"* ]]
	# Durations 450 and 550 MHz: a mean of 500, but 20% apart; by interval
	# 450 (the first kernel has no interval: its duration's estimate, as
	# acelyzer) and 500: 50 / 475 = 0.105 apart.
	sed 's/"TS4":"2000","TS5":"2001"/"TS4":"1900","TS5":"1901"/; s/"TS4":"6500","TS5":"6501"/"TS4":"6550","TS5":"6551"/' "$T/f.json" >"$T/s.json"
	run -0 --separate-stderr flex2ev --freq=500 -o "$T/s.ev" "$T/s.json"
	[[ "$stderr" == *"s.json: the clock estimates spread over more than 10% (rel_range 0.105 by interval, 0.200 by duration;"* ]]
}

@test "shared data: a wrong or default --freq gets acelyzer's detection and the --freq to use" {
	need_shared_data
	# acelyzer's interval estimate on job4, min/mean/max.
	want=$(awk '/^== sample_flex_3062_job_4$/ { on = 1; next } /^==/ { on = 0 } on && /interval-based/ { print $(NF - 5) "/" $(NF - 4) "/" $(NF - 3) }' "$X/freq_log.txt")
	[ "$want" = "557.05/557.05/557.06" ]
	run -0 --separate-stderr flex2ev -o "$T/j4.ev" "$A/sample_flex_3062_job_4.json"
	[[ "$stderr" == *"sample_flex_3062_job_4.json: the cycle counters tick at 557.05 MHz, not at the default --freq of 1000 MHz (input_soc_freq/detected=1.795; "*"by interval $want, "*"): use --freq=557.05"* ]]
	run -0 --separate-stderr flex2ev --freq=557:1100 -o "$T/j4.ev" "$A/sample_flex_3062_job_4.json"
	[[ "$stderr" != *"tick at"* && "$stderr" != *"clock estimates"* ]]
	# The 4-rank file: acelyzer's estimate on it split per rank.
	want=$(awk '/^== allreduce_tp4_split$/ { on = 1; next } /^==/ { on = 0 } on && /interval-based/ { print $(NF - 5) "/" $(NF - 4) "/" $(NF - 3) }' "$X/freq_log.txt")
	run -0 --separate-stderr flex2ev --align=none -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	[[ "$stderr" == *"allreduce_tp4.json: the cycle counters tick at 557.18 MHz, "*"over 7 kernel(s) of 4 rank(s): by interval $want, "*"use --freq=557.18"* ]]
}

@test "counter tracks by hand: ConcurrentPreps and Power (mW), acelyzer's rules" {
	# Preps (host times, --no-tighten): A [10, 20), B [12, 15), C [20, 25)
	# us: 1 at 10, 2 at 12, 1 at 15, A's end and C's start at 20: 1, 0
	# at 25.  (acelyzer writes 0 at 15: its count after an end inside
	# another Prep forgets the outer one.)
	cat >"$T/p.json" <<'JSON'
[
{"name":"a Cmpt Prep","ph":"X","pid":0,"tid":1,"ts":10,"dur":10},
{"name":"b Cmpt Prep","ph":"X","pid":0,"tid":2,"ts":12,"dur":3},
{"name":"c Cmpt Prep","ph":"X","pid":0,"tid":1,"ts":20,"dur":5}
]
JSON
	run -0 bash -c 'flex2ev -q --no-tighten "$1" | ev-view -M -H -t counter -c rank,ts,name,bytes' _ "$T/p.json"
	assert_output - <<'EOF'
0	10000	ConcurrentPreps	1
0	12000	ConcurrentPreps	2
0	15000	ConcurrentPreps	1
0	20000	ConcurrentPreps	1
0	25000	ConcurrentPreps	0
EOF
	# Power at 1000 MHz (1 cycle = 1 ns), each kernel's TS4 at its end.
	# k1 -> k2: 5120 over 12 us: 12 x 5120 / 512 / 12 = 10 W at k1's TS4
	# (20 us); k3 reads 0: skipped; k2 -> k4: 200000 over 30 us = 156 W,
	# above 100: 0; k4 -> k5: 2304 over 18 us = 3 W; k5 is the last
	# reading; k6 lasts 50 ns and the Prep is a Prep: no readings.
	cat >"$T/w.json" <<'JSON'
[
{"name":"p Cmpt Prep","ph":"X","pid":0,"tid":1,"ts":5,"dur":3,"args":{"TS1":"5000","TS2":"5000","TS3":"8000","TS4":"8000","TS5":"8001","Power":"999"}},
{"name":"k1 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":10,"dur":10,"args":{"TS1":"10000","TS2":"10000","TS3":"10000","TS4":"20000","TS5":"20001","Power":"1000"}},
{"name":"k2 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":22,"dur":10,"args":{"TS1":"22000","TS2":"22000","TS3":"22000","TS4":"32000","TS5":"32001","Power":"6120"}},
{"name":"k3 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":40,"dur":10,"args":{"TS1":"40000","TS2":"40000","TS3":"40000","TS4":"50000","TS5":"50001","Power":"0"}},
{"name":"k4 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":52,"dur":10,"args":{"TS1":"52000","TS2":"52000","TS3":"52000","TS4":"62000","TS5":"62001","Power":"206120"}},
{"name":"k5 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":70,"dur":10,"args":{"TS1":"70000","TS2":"70000","TS3":"70000","TS4":"80000","TS5":"80001","Power":"208424"}},
{"name":"k6 Cmpt Exec","ph":"X","pid":0,"tid":1,"ts":90,"dur":0.05,"args":{"TS1":"90000","TS2":"90000","TS3":"90000","TS4":"90050","TS5":"90051","Power":"300000"}}
]
JSON
	# --drop-prep leaves the Prep out, not its counter.
	run -0 bash -c 'flex2ev -q --drop-prep "$1" | ev-view -M -H -t range,counter -c type,name,bytes -n Prep' _ "$T/w.json"
	assert_output - <<'EOF'
counter	ConcurrentPreps	1
counter	ConcurrentPreps	0
EOF
	run -0 --separate-stderr bash -c 'flex2ev "$1" | ev-view -M -H -t counter -n Power -c ts,name,bytes' _ "$T/w.json"
	assert_output - <<'EOF'
20000	Power (mW)	10000
32000	Power (mW)	0
62000	Power (mW)	3000
EOF
	[[ "$stderr" == *"1 Power sample(s) above 100 W (or from readings going backwards): written as 0 (acelyzer's rule)"* ]]
	# The timeline draws them as counter tracks; flex-stats counts them in
	# no table of events.
	flex2ev -q "$T/w.json" | ev2perfetto -q -o "$T/w.tl.json"
	run -0 python3 -c 'import json, sys; ev = json.load(open(sys.argv[1]))["traceEvents"]; print(sorted(e["name"] for e in ev if e.get("ph") == "C" and e["name"] in ("Power (mW)", "ConcurrentPreps")))' "$T/w.tl.json"
	assert_output "['ConcurrentPreps', 'ConcurrentPreps', 'Power (mW)', 'Power (mW)', 'Power (mW)']"
	run -0 bash -c 'flex2ev -q "$1" | flex-stats classes' _ "$T/w.json"
	assert_line "0,COMPUTE_EXEC,6,50.05"
	assert_line "0,COMPUTE_PREP,1,3"
}

# timeline_count RUN COUNTER: acelyzer's count in timeline_counts.tsv.
timeline_count() {
	awk -F'\t' -v r="$1" -v c="$2" '$1 == r && $2 == c { print $3 }' "$X/timeline_counts.tsv"
}

# counters TIMELINE NAME: the counter events of one series.
counters() {
	python3 -c 'import json, sys; ev = json.load(open(sys.argv[1]))["traceEvents"]; print(sum(1 for e in ev if e.get("ph") == "C" and e["name"] == sys.argv[2]))' "$1" "$2"
}

@test "shared data: as many Power and ConcurrentPreps samples as acelyzer's timelines" {
	need_shared_data
	flex2ev -q "$A/sample_flex_3062_job_4.json" | ev2perfetto -q -o "$T/j4.json"
	run -0 counters "$T/j4.json" "Power (mW)"
	assert_output "$(timeline_count sample_flex_3062_job_4 Power)"
	[ "$output" = 15 ]
	run -0 counters "$T/j4.json" ConcurrentPreps
	assert_output "$(timeline_count sample_flex_3062_job_4 ConcurrentPreps)"
	# The 4-rank file: acelyzer split per rank (on the one file it
	# collapses the ranks and finds 20 Power samples).
	flex2ev -q "$A/allreduce_tp4.json" | ev2perfetto -q -o "$T/tp4.json"
	run -0 counters "$T/tp4.json" "Power (mW)"
	assert_output "$(timeline_count allreduce_tp4_split Power)"
	run -0 counters "$T/tp4.json" ConcurrentPreps
	assert_output "$(timeline_count allreduce_tp4_split ConcurrentPreps)"
	[ "$output" = 14 ]
	[ "$(timeline_count allreduce_tp4 ConcurrentPreps)" = 14 ]
}

@test "PT Active by hand: ideal time over duration while each kernel runs" {
	# At the default core clock 1100 MHz: a 2200 cycles = 2 us of 5 us,
	# 40%; b_1 ideal 0: no sample (as acelyzer); b_2 8800 cycles = 8 us
	# of 6 us: acelyzer's 101%.  In 0.01%: 4000, 10100.
	cat >"$T/c.log" <<'LOG'
====== Perf Summary ======
~~~~ Ideal/Total Cycles ~~~~
-------------------------------------------------------------------------------------------
Name                                                                            Ideal Cy.
-------------------------------------------------------------------------------------------
a-opCatBroadcast                                                                2200
b_1-opCatBroadcast                                                              0
b_2-opCatBmm_fp16                                                               8800
-------------------------------------------------------------------------------------------
Total                                                                           11000
-------------------------------------------------------------------------------------------
====== Perf Summary End ======
LOG
	run -0 --separate-stderr bash -c 'flex2ev -c "$1" "$2" | ev-view -M -H -t counter -n PT -c ts,name,bytes' _ "$T/c.log" "$TESTS_DIR/fixtures/flex2ev/clean.json"
	assert_output - <<'EOF'
10000	PT Active (0.01%)	4000
15000	PT Active (0.01%)	0
30000	PT Active (0.01%)	10100
36000	PT Active (0.01%)	0
EOF
	[[ "$stderr" == *"1 kernel(s) ran shorter than their ideal time: PT Active 101% (acelyzer's rule; check --freq)"* ]]
	# A core clock twice as fast halves the ideal times: 20%, and b_2 67%.
	run -0 bash -c 'flex2ev -q --freq=1000:2200 -c "$1" "$2" | ev-view -M -H -t counter -n PT -c bytes' _ "$T/c.log" "$TESTS_DIR/fixtures/flex2ev/clean.json"
	assert_output - <<'EOF'
2000
0
6667
0
EOF
	# Without the kernel: said; a log without a table is refused.
	run -0 --separate-stderr flex2ev -c "$T/c.log" -o "$T/j.ev" "$TESTS_DIR/fixtures/flex2ev/job.json"
	[[ "$stderr" == *"4 kernel(s) not in the compiler tables (-c): no PT Active sample"* ]]
	echo nothing >"$T/none.log"
	run -1 flex2ev -c "$T/none.log" "$TESTS_DIR/fixtures/flex2ev/clean.json"
	assert_output --partial 'none.log: no compiler "Perf Summary / Ideal/Total Cycles" table found'
}

@test "shared data: PT Active samples equal acelyzer's (-c, --freq=557:1100)" {
	need_shared_data
	flex2ev -q --freq=557:1100 -c "$A/sample_comp_log_ideal.txt" "$A/sample_flex_3062_job_4.json" | ev2perfetto -q -o "$T/j4.json"
	run -0 counters "$T/j4.json" "PT Active (0.01%)"
	assert_output "$(timeline_count job4_c_sample_comp_log_ideal 'PT Active')"
	[ "$output" = 18 ]
	# Time (to the ns) and value (to 0.01%) of each, in order.
	flex2ev -q --freq=557:1100 -c "$A/sample_comp_log_ideal.txt" "$A/sample_flex_3062_job_4.json" |
		ev-view -M -H -t counter -n PT -c ts,bytes >"$T/pt.tsv"
	run -0 awk -F'\t' 'NR == FNR { if (FNR > 1) { t[FNR - 1] = $1; v[FNR - 1] = $2; n = FNR - 1 } ; next }
		{ d = $1 / 1000 - t[FNR]; if (d < 0) d = -d
		  if (d > 0.001 || $2 != int(v[FNR] * 100 + 0.5)) { print "sample " FNR ": " $0 ", acelyzer " t[FNR] " " v[FNR]; bad = 1 } }
		END { if (FNR != n) { print FNR " samples, acelyzer " n; bad = 1 } ; exit bad }' "$X/job4_c_sample_comp_log_ideal_pt_active.tsv" "$T/pt.tsv"
	# dt_cycles_table.log has none of job4's kernels: no sample, in both.
	flex2ev -q --freq=557:1100 -c "$A/dt_cycles_table.log" "$A/sample_flex_3062_job_4.json" | ev2perfetto -q -o "$T/j4d.json"
	run -0 counters "$T/j4d.json" "PT Active (0.01%)"
	assert_output "$(timeline_count job4_c_dt_cycles_table 'PT Active')"
}

# pt_args TIMELINE: name and args.pt_active of each slice that has it
# ("core used" true with it), sorted.
pt_args() {
	python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
for e in ev:
    a = e.get("args", {})
    if e.get("ph") == "X" and "pt_active" in a:
        assert a.get("core used") is True, e
        print("%s\t%r" % (e["name"], a["pt_active"]))' "$1" | LC_ALL=C sort
}

@test "args.pt_active by hand: the ideal record carries the exact fraction to each kernel" {
	# As the PT Active test above: a 2 us of 5 us, b_2 8 us of 6 us (no
	# 101% here: acelyzer's arg is not clipped), b_1 ideal 0: none.
	cat >"$T/c.log" <<'LOG'
====== Perf Summary ======
~~~~ Ideal/Total Cycles ~~~~
-------------------------------------------------------------------------------------------
Name                                                                            Ideal Cy.
-------------------------------------------------------------------------------------------
a-opCatBroadcast                                                                2200
b_1-opCatBroadcast                                                              0
b_2-opCatBmm_fp16                                                               8800
-------------------------------------------------------------------------------------------
Total                                                                           11000
-------------------------------------------------------------------------------------------
====== Perf Summary End ======
LOG
	flex2ev -q -c "$T/c.log" -o "$T/c.ev" "$TESTS_DIR/fixtures/flex2ev/clean.json"
	run -0 ev-view -M -H -t ideal -c type,ts,bytes,aux "$T/c.ev"
	assert_output - <<'EOF'
ideal	10000	2200	1100000
ideal	30000	8800	1100000
EOF
	ev2perfetto -q -o "$T/c.json" "$T/c.ev"
	run -0 pt_args "$T/c.json"
	assert_output - <<'EOF'
a Cmpt Exec	0.4
b_2 Cmpt Exec	1.3333333333333333
EOF
	# The other readers pass over it: flex-stats' tables are unchanged.
	flex2ev -q -o "$T/n.ev" "$TESTS_DIR/fixtures/flex2ev/clean.json"
	cmp <(flex-stats ts_analysis -q "$T/n.ev") <(flex-stats ts_analysis -q "$T/c.ev")
}

@test "shared data: args.pt_active equals acelyzer's on job4 (-c, --freq=557:1100)" {
	need_shared_data
	flex2ev -q --freq=557:1100 -c "$A/sample_comp_log_ideal.txt" "$A/sample_flex_3062_job_4.json" | ev2perfetto -q -o "$T/j4.json"
	pt_args "$T/j4.json" >"$T/got"
	[ "$(wc -l <"$T/got")" = "$(timeline_count job4_c_sample_comp_log_ideal 'Cmpt Exec slices with args.pt_active')" ]
	# Within 1e-9 of acelyzer's fraction: both divide the same ideal cycles
	# by the same TS3 -> TS4 cycles; acelyzer's duration went through us
	# doubles near 1.5e12.
	run -0 awk -F'\t' 'NR == FNR { if (FNR > 1) { v[$1] = $2; n++ } ; next }
		{ d = $2 - v[$1]; if (d < 0) d = -d; if (!($1 in v) || d > 1e-9 * v[$1]) { print $0 ", acelyzer " v[$1]; bad = 1 } ; m++ }
		END { if (m != n) { print m " slices, acelyzer " n; bad = 1 } ; exit bad }' \
		"$X/job4_c_sample_comp_log_ideal_pt_active_args.tsv" "$T/got"
	run -0 grep -c . "$T/got"
	assert_output 9
	# dt_cycles_table.log has none of job4's kernels: no arg, in both.
	flex2ev -q --freq=557:1100 -c "$A/dt_cycles_table.log" "$A/sample_flex_3062_job_4.json" | ev2perfetto -q -o "$T/j4d.json"
	run -0 pt_args "$T/j4d.json"
	assert_output ""
}

# The SenRdma slices of an ev stream as the comm_seq reference rows:
# rank, start and end (us, 3 decimals), name with acelyzer's Receive ->
# Recv, peers (the sig's peers=, else a p2p's peer), sorted.
senrdma() {
	ev-view -M -H -c rank,ts,dur,peer,sig,name "$1" | awk -F'\t' '$6 ~ /SenRdma/ {
		p = ""; if (match($5, /peers=[0-9,]+/)) p = substr($5, RSTART + 6, RLENGTH - 6); else if ($4 >= 0) p = $4
		n = $6; gsub(/Receive/, "Recv", n)
		printf "%d\t%.3f\t%.3f\t%s\t%s\n", $1, $2 / 1000, ($2 + $3) / 1000, n, p }' | sort
}

@test "shared data: --comm-summarize-seq, acelyzer's --comm_summarize_seq slices on TP4 and job4" {
	need_shared_data
	flex2ev -q --align=acelyzer --comm-summarize-seq -o "$T/c.ev" "$A/allreduce_tp4.json"
	# 10 slices, rank 3's five sends of request 82233 one of them.
	diff <(awk -F'\t' 'NR > 1 { printf "%d\t%.3f\t%.3f\t%s\t%s\n", $1, $2, $3, $4, $5 }' \
		"$X/allreduce_tp4_split_comm_seq.tsv" | sort) <(senrdma "$T/c.ev")
	run -0 grep -c 'SenRdmaSend_82233 	' <(senrdma "$T/c.ev")
	assert_output 1
	# job4 has no SenRdma slice: the stream is the one without the option.
	[ "$(wc -l <"$X/sample_flex_3062_job_4_comm_seq.tsv")" -eq 1 ]
	flex2ev -q -o "$T/j.ev" "$A/sample_flex_3062_job_4.json"
	flex2ev -q --comm-summarize-seq -o "$T/jc.ev" "$A/sample_flex_3062_job_4.json"
	cmp "$T/j.ev" "$T/jc.ev"
}

comm_seq_fixture() {
	cat >"$T/cs.json" <<'JSON'
[
{"ph":"X","name":"SenRdmaSend_0105 - Set BcList","pid":0,"tid":1,"ts":10,"dur":2,"args":{"Peers":"1,2"}},
{"ph":"X","name":"SenRdmaSend_105 - Xseg to rank 2","pid":0,"tid":1,"ts":11,"dur":3,"args":{"Peer":"2"}},
{"ph":"X","name":"SenRdmaSend_105 - Xseg to rank 1","pid":0,"tid":1,"ts":12,"dur":2,"args":{"Peer":"1"}},
{"ph":"X","name":"SenRdmaSend_105 Data","pid":0,"tid":1,"ts":13,"dur":7,"args":{"Bytes":"64"}},
{"ph":"X","name":"SenRdmaReceive_106 [sync=x] DmaI","pid":0,"tid":2,"ts":15,"dur":4,"args":{"Peer":"3"}},
{"ph":"X","name":"add_1 Cmpt Exec","pid":0,"tid":3,"ts":30,"dur":5},
{"ph":"X","name":"SenRdmaSend_105 late","pid":0,"tid":1,"ts":2000,"dur":1,"args":{"Peer":"3"}},
{"ph":"X","name":"SenRdmaSend_105 - b","pid":1,"tid":1,"ts":12,"dur":1,"args":{"Peer":"0"}},
{"ph":"X","name":"SenRdmaSend_105 - c","pid":1,"tid":1,"ts":12.5,"dur":1,"args":{"Peer":"2"}}
]
JSON
}

@test "--comm-summarize-seq by hand: one slice per (rank, request), closed past its end plus the window" {
	comm_seq_fixture
	# Rank 0's request 105 (0105 is 105, as acelyzer's int()): 10..20 us,
	# named by the common prefix, peers from args.Peer only (not the
	# BcList's Peers); 2000 us is past 20 us + 1000 us: a request of its
	# own.  Rank 1's 105 is another job's.  106 alone is left as it is.
	run -0 bash -c "flex2ev -q -a none --comm-summarize-seq '$T/cs.json' | ev-view -M -H -c rank,ts,dur,name,sig"
	assert_output - <<'EOF'
0	10000	10000	SenRdmaSend_	OTHER peers=1,2
1	12000	1500	SenRdmaSend_105 - 	OTHER peers=0,2
0	15000	4000	SenRdmaReceive_106 [sync=x] DmaI	DATA_IN sync=x
0	30000	5000	add_1 Cmpt Exec	COMPUTE_EXEC
0	2000000	1000	SenRdmaSend_105 late	OTHER
EOF
	# A window of 2 ms keeps the late send in the request.
	run -0 bash -c "flex2ev -q -a none --comm-summarize-seq --comm-seq-window=2000 '$T/cs.json' | ev-view -M -H -c rank,ts,dur,name,sig -n late"
	assert_output ""
	run -0 bash -c "flex2ev -q -a none --comm-summarize-seq --comm-seq-window=2000 '$T/cs.json' | ev-view -M -H -c ts,dur,sig -n '^SenRdmaSend_$'"
	assert_output "10000	1991000	OTHER peers=1,2,3"
}

@test "--comm-summarize-seq: past --comm-seq-max the oldest request closes early, said on stderr" {
	comm_seq_fixture
	run -0 --separate-stderr flex2ev -a none --comm-summarize-seq --comm-seq-max=1 -o "$T/m.ev" "$T/cs.json"
	[[ "$stderr" == *"--comm-summarize-seq: 3 request(s) closed early: more than 1 open at once"* ]]
	run -0 ev-view -M -H -c rank,ts,dur,name "$T/m.ev"
	assert_line --index 0 "0	10000	4000	SenRdmaSend_"
	assert_line --index 2 "0	13000	7000	SenRdmaSend_105 Data"
	run -2 flex2ev --comm-seq-max=0 "$T/cs.json"
	run -2 flex2ev --comm-seq-window=x "$T/cs.json"
}
