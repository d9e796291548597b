#!/usr/bin/env bats
# flex-stats iterations: acelyzer's iteration detection (its ITSTATS line,
# avg_iteration_time and iterations per pid) against acelyzer's own
# numbers (tests/expected/acelyzer/iterations.tsv; the README there says
# how they were made), on generated traces and the shared AIU samples.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	A="$SHARED_DATA/acelyzer"
	X="$TESTS_DIR/expected/acelyzer"
}

# same_iters RUN CSV: flex-stats iterations' rows equal acelyzer's rows of
# RUN in iterations.tsv: the same pids, iterations equal, the mean within
# 0.001 us (acelyzer's running mean of float us).
same_iters() {
	awk -F'\t' -v run="$1" '$1 == run { printf "%s\t%s\t%s\n", $2, $4, $5 }' "$X/iterations.tsv" | sort >"$T/want"
	awk -F, 'NR > 1 { printf "%s\t%s\t%s\n", $1, $2, $3 }' "$2" | sort >"$T/got"
	[ -s "$T/want" ] || fail "no rows of $1 in iterations.tsv"
	paste "$T/want" "$T/got" | awk -F'\t' '
		{ d = $2 - $5; if (d < 0) d = -d
		  if ($1 != $4 || $3 != $6 || d > 0.001) { print "pid " $4 ": " $5 " us, " $6 " iterations; acelyzer pid " $1 ": " $2 ", " $3; bad = 1 } ; n++ }
		END { exit bad }'
	[ "$(wc -l <"$T/want")" = "$(wc -l <"$T/got")" ] || fail "$(wc -l <"$T/got") rows, acelyzer $(wc -l <"$T/want")"
}

@test "generated traces: acelyzer's avg_iteration_time and iterations per rank" {
	local g="$TESTS_DIR/gen/gen-flex.py"
	# Four ranks: rank 0 repeats 8 layers every 2000 us; ranks 1-3 add an
	# Add kernel named after one of four groups, so their word is four
	# iterations long: found in 12 iterations, not in 5.
	python3 "$g" --ranks 4 --iters 5 --seed 7 -o "$T/g5.json"
	flex2ev -q --align=acelyzer -o "$T/g5.ev" "$T/g5.json"
	flex-stats iterations -o "$T/g5.csv" "$T/g5.ev"
	same_iters gen_flex_4x5_seed7_split "$T/g5.csv"
	python3 "$g" --ranks 4 --iters 12 --seed 7 -o "$T/g12.json"
	flex2ev -q --align=acelyzer -o "$T/g12.ev" "$T/g12.json"
	flex-stats iterations -o "$T/g12.csv" "$T/g12.ev"
	same_iters gen_flex_4x12_seed7_split "$T/g12.csv"
	run -0 cat "$T/g12.csv"
	assert_line "0,2000,11,8,0"
	assert_line "1,8000,2,36,0"
}

@test "generated trace with late and broken iterations: acelyzer's restarts" {
	# Iterations 7 and 9 start 37.512 and 101.003 us late; iterations 4 and
	# 10 lose a kernel: twice the word breaks on rank 0, its next copy is
	# not counted (acelyzer's restart): 7 intervals, mean 2019.788 us.
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 2 --iters 12 --seed 7 --late 7:37512 --late 9:101003 \
		--drop 4:3 --drop 10:0 -o "$T/i.json"
	flex2ev -q --align=acelyzer -o "$T/i.ev" "$T/i.json"
	flex-stats iterations -o "$T/i.csv" "$T/i.ev"
	same_iters gen_flex_2x12_irregular_split "$T/i.csv"
	run -0 cat "$T/i.csv"
	assert_line --regexp '^0,2019\.78785714[0-9]*,7,8,2$'
	# Within a rank the placement does not matter here: host ends are the
	# device ends in the generator.
	flex2ev -q --align=none -o "$T/n.ev" "$T/i.json"
	run -0 flex-stats iterations "$T/n.ev"
	assert_line --regexp '^0,2019\.78785714[0-9]*,7,8,2$'
}

@test "shared data: acelyzer's iteration statistics on job4 and TP4" {
	need_shared_data
	flex2ev -q -o "$T/j.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats iterations -o "$T/j.csv" "$T/j.ev"
	same_iters sample_flex_3062_job_4 "$T/j.csv"
	# The compiler logs and clock change no kernel sequence.
	flex2ev -q --freq=557:1100 -c "$A/sample_comp_log_ideal.txt" -o "$T/jc.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats iterations -o "$T/jc.csv" "$T/jc.ev"
	same_iters job4_c_sample_comp_log_ideal "$T/jc.csv"
	flex2ev -q --freq=557:1100 -c "$A/dt_cycles_table.log" -o "$T/jd.ev" "$A/sample_flex_3062_job_4.json"
	flex-stats iterations -o "$T/jd.csv" "$T/jd.ev"
	same_iters job4_c_dt_cycles_table "$T/jd.csv"
	# acelyzer on the file split per rank (on the one file it puts the
	# four ranks on pid 0: one row, also 0 iterations).
	flex2ev -q --align=acelyzer -o "$T/t.ev" "$A/allreduce_tp4.json"
	flex-stats iterations -o "$T/t.csv" "$T/t.ev"
	same_iters allreduce_tp4_split "$T/t.csv"
	grep -q "^allreduce_tp4	0	0	0.0	0$" "$X/iterations.tsv"
}

@test "iterations: a window too small gives up, says so, and leaves the fields empty" {
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 1 --iters 5 --seed 7 -o "$T/g.json"
	flex2ev -q -o "$T/g.ev" "$T/g.json"
	# Rank 0's word is found at its 16th kernel: a window of 15 is too
	# small, one of 16 is enough.
	run -0 --separate-stderr flex-stats iterations --iter-window=15 "$T/g.ev"
	assert_line "0,,,,"
	[[ "$stderr" == *"1 rank(s) without a repeating kernel sequence in their first --iter-window kernels"* ]]
	run -0 --separate-stderr flex-stats iterations --iter-window=16 "$T/g.ev"
	assert_line "0,2000,4,8,0"
	[ -z "$stderr" ]
	run -2 flex-stats iterations --iter-window=9 "$T/g.ev"
	assert_output --partial "--iter-window: expected a number of kernels >= 10"
}

@test "iterations: out of time order is an error" {
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 1 --iters 3 --seed 7 -o "$T/g.json"
	flex2ev -q -o "$T/g.ev" "$T/g.json"
	# The same stream twice: the second copy starts before the first ends.
	cat "$T/g.ev" "$T/g.ev" >"$T/twice.ev"
	run -1 flex-stats iterations "$T/twice.ev"
	assert_output --partial "start before their rank's kernel before: iterations needs the stream in time order"
}

@test "iterations: kernels without TS1..TS5 are not in the sequence, and said" {
	# k0..k4 twice, one every 10 us (5 us long, TS at 1000 MHz), and an x
	# without counters between: acelyzer's rule leaves x out, so the word
	# k0..k4 is found at the tenth kernel, 50 us long.
	python3 -c '
import json
ev = []
def k(name, ts, attr):
    ev.append(dict(name=name + " Cmpt Exec", ph="B", pid=0, tid=1, ts=ts, args=attr))
    ev.append(dict(name=name + " Cmpt Exec", ph="E", pid=0, tid=1, ts=ts + 5))
for i in range(10):
    c = 10000 * i
    k("k%d" % (i % 5), 10 * i, dict(TS1=str(c), TS2=str(c), TS3=str(c), TS4=str(c + 5000), TS5=str(c + 5001)))
    if i == 4:
        k("x", 46, {})
json.dump(ev, open("'"$T/x.json"'", "w"))
'
	flex2ev -q --freq=1000 -o "$T/x.ev" "$T/x.json"
	run -0 --separate-stderr flex-stats iterations "$T/x.ev"
	assert_line "0,50,1,5,0"
	[[ "$stderr" == *"1 kernel(s) without TS1..TS5 counters: not in the kernel sequence"* ]]
}
