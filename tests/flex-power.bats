#!/usr/bin/env bats
# flex-stats power: acelyzer's --power-stats (its two log lines, "Power
# with kernels" and "Power without kernels") against acelyzer's own
# numbers (tests/expected/acelyzer/power_stats.tsv; the README there says
# how they were made), on a generated trace with a real power draw and on
# the shared job4 sample.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	A="$SHARED_DATA/acelyzer"
	X="$TESTS_DIR/expected/acelyzer"
}

# same_power RUN PID CSV: the two rows of PID in CSV, rounded as acelyzer
# prints them (%.2f), equal its two lines of RUN.
same_power() {
	grep "^$1	" "$X/power_stats.tsv" | cut -f2 |
		sed -E 's/^Power (with|without) kernels: min_non_zero=([0-9.]+)W, max=([0-9.]+)W, mean_non_zero=([0-9.]+)W, median_non_zero=([0-9.]+)W, avg_total=([0-9.]+)W \(time-weighted, dur_total=([0-9.]+)ms, dur_non_zero=([0-9.]+)ms\)$/\1 kernels,\2,\3,\4,\5,\6,\7,\8/' >"$T/want"
	awk -F, -v pid="$2" 'NR > 1 && $1 == pid' "$3" | cut -d, -f2- >"$T/got"
	[ "$(wc -l <"$T/want")" = 2 ] || fail "no two lines of $1 in power_stats.tsv"
	[ "$(wc -l <"$T/got")" = 2 ] || fail "no two rows of pid $2"
	# Within half a unit of acelyzer's last printed digit (its %.2f of a
	# float: 678.885 may print as .89 or .88).
	paste -d, "$T/want" "$T/got" | awk -F, '
		$1 != $9 { print "row " NR ": " $1 " vs " $9; bad = 1 }
		{ for (i = 2; i <= 8; i++) { d = $i - $(i + 8); if (d < 0) d = -d; if (d > 0.0051) { print "row " NR " column " i ": acelyzer " $i ", evkit " $(i + 8); bad = 1 } } }
		END { exit bad }' || fail "pid $2 differs from acelyzer's $1"
}

@test "generated power draw: acelyzer's --power-stats per rank" {
	# Rank r draws 20 + (7 i + 5 r) mod 30 W in iteration i; acelyzer ran
	# on each rank's events alone (its statistics chain all pids into one).
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 2 --iters 4 --seed 7 --power -o "$T/g.json"
	flex2ev -q -o "$T/g.ev" "$T/g.json"
	flex-stats power -o "$T/p.csv" "$T/g.ev"
	same_power gen_flex_2x4_seed7_power_r0 0 "$T/p.csv"
	same_power gen_flex_2x4_seed7_power_r1 1 "$T/p.csv"
	run -0 cat "$T/p.csv"
	assert_line --index 0 "pid,period,min_non_zero,max,mean_non_zero,median_non_zero,avg_total,dur_total,dur_non_zero"
	assert_line "0,with kernels,19.999,41.001,31.73681688061321,34,31.73681688061321,735.542,735.542"
	# Rank placement does not move a rank's samples against its kernels.
	flex2ev -q --align=acelyzer -o "$T/a.ev" "$T/g.json"
	flex-stats power -o "$T/a.csv" "$T/a.ev"
	cmp "$T/p.csv" "$T/a.csv"
}

@test "job4 sample: every Power sample is 0 (bad), the durations are acelyzer's" {
	need_shared_data
	flex2ev -q -o "$T/j.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats power -o "$T/j.csv" "$T/j.ev"
	same_power sample_flex_3062_job_4 0 "$T/j.csv"
	flex2ev -q --freq=557:1100 -o "$T/f.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats power -o "$T/f.csv" "$T/f.ev"
	same_power job4_freq557 0 "$T/f.csv"
}

@test "power: fewer than two samples or records out of time order are errors" {
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 2 --iters 2 --seed 7 --power -o "$T/g.json"
	flex2ev -q -o "$T/g.ev" "$T/g.json"
	# Without the Power track: no table, said.
	ev-view -t kernel "$T/g.ev" | ev-view --pack -o "$T/k.ev"
	run -1 --separate-stderr flex-stats power -o "$T/none.csv" "$T/k.ev"
	[[ "$stderr" == *"0 'Power (mW)' counter sample(s)"*"a period needs two"* ]]
	[ ! -e "$T/none.csv" ]
	# The records of a rank reversed: the sweep cannot split the time.
	ev-view "$T/g.ev" >"$T/g.txt"
	{ awk -F'\t' '/^#/ || $1 == "type"' "$T/g.txt"; awk -F'\t' '!/^#/ && $1 != "type"' "$T/g.txt" | tac; } |
		ev-view --pack -o "$T/rev.ev"
	run -1 --separate-stderr flex-stats power "$T/rev.ev"
	[[ "$stderr" == *"start before their rank's record before: power needs the stream in time order"* ]]
}
