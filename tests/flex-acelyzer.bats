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
	[ -z "$stderr" ]
	# The 4-rank file: acelyzer's estimate on it split per rank.
	want=$(awk '/^== allreduce_tp4_split$/ { on = 1; next } /^==/ { on = 0 } on && /interval-based/ { print $(NF - 5) "/" $(NF - 4) "/" $(NF - 3) }' "$X/freq_log.txt")
	run -0 --separate-stderr flex2ev --align=none -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	[[ "$stderr" == *"allreduce_tp4.json: the cycle counters tick at 557.18 MHz, "*"over 7 kernel(s) of 4 rank(s): by interval $want, "*"use --freq=557.18"* ]]
}
