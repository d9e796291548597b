#!/usr/bin/env bats
# flex2ev --align=acelyzer (acelyzer's mp_sync_tight_v1) on fixtures worked
# by hand and against acelyzer's own outputs on the TP4 sample
# (tests/expected/acelyzer, README there), and the TP4 collective's
# bandwidth derived from its events by hand.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	A="$SHARED_DATA/acelyzer"
	X="$TESTS_DIR/expected/acelyzer"
}

# Two ranks, one CollGroup, at 1000 MHz (1 cycle = 1 ns).  Rank 0 sends
# (DmaO: its slice is TS4..TS5 = 1..5 us on its device clock, host 106..110
# us after tightening); rank 1 receives (DmaI: TS1..TS2 = 100..103 us, host
# 217..220), runs a kernel (Exec: TS3..TS4 = 110..112 us, host 303..305),
# a second one 2^32 cycles later whose counters wrapped to the same values
# (host 4295270.296 us), and a host event at 250 us.  NAME is the send's
# name: with AllReduce_all_reduce in it acelyzer takes the tree order.
fixture() {
	cat >"$T/two.json" <<JSON
[
{"name":"$1 DmaO","ph":"X","pid":0,"tid":1,"ts":100,"dur":10,"args":{"CollGroup":"AllReduce_x","Type":"SingleCast","Peer":"1","Bytes":"64","TS1":"1000","TS2":"1000","TS3":"1000","TS4":"1000","TS5":"5000"}},
{"name":"Recv DmaI","ph":"X","pid":1,"tid":2,"ts":200,"dur":20,"args":{"CollGroup":"AllReduce_x","Type":"WDone Barrier","Peer":"0","Bytes":"64","TS1":"100000","TS2":"103000","TS3":"103000","TS4":"103000","TS5":"103000"}},
{"name":"host_op","ph":"X","pid":1,"tid":3,"ts":250,"dur":1},
{"name":"k Cmpt Exec","ph":"X","pid":1,"tid":4,"ts":300,"dur":5,"args":{"TS1":"110000","TS2":"110000","TS3":"110000","TS4":"112000","TS5":"112000"}},
{"name":"k Cmpt Exec","ph":"X","pid":1,"tid":4,"ts":4295267.296,"dur":5,"args":{"TS1":"110000","TS2":"110000","TS3":"110000","TS4":"112000","TS5":"112000"}}
]
JSON
}

slices() {
	ev-view -M -H -t kernel,p2p,range,memcpy -c rank,ts,dur,name "$1"
}

@test "acelyzer alignment by hand: tree order, host events stay, counters unwrapped" {
	fixture "Send [sync=AllReduce_all_reduce_x_s0_r1_0]"
	run -0 flex2ev --align=acelyzer -o "$T/a.ev" "$T/two.json"
	# Tree: rank 1 (the receiver) moves back by its latest TS2 minus rank
	# 0's latest TS5 in the group, 103 - 5 = 98 us; the aligned clock meets
	# host time at rank 0's event with the latest TS5 (the send): 110 - 5 =
	# 105 us.  Send at TS4 1 + 105 = 106 us; receive TS1 100 - 98 + 105 =
	# 107 us (ends at 110, with its send); kernel TS3 110 - 98 + 105 = 117
	# us, and 2^32 ns later the wrapped one; the host event stays at 250.
	assert_output --partial "tree order"
	assert_output --partial "rank 1 device clock shift -98.000 us"
	assert_output --partial "offset 105.000 us"
	run -0 slices "$T/a.ev"
	assert_output - <<'EOF'
0	106000	4000	Send [sync=AllReduce_all_reduce_x_s0_r1_0] DmaO
1	107000	3000	Recv DmaI
1	117000	2000	k Cmpt Exec
1	250000	1000	host_op
1	4295084296	2000	k Cmpt Exec
EOF
	run -0 ev-view -H --type=mark --rank=999 "$T/a.ev"
	assert_output --partial "#meta acelyzer.align=mp_sync_tight_v1 acelyzer.ref_offset_ns=105000"
	assert_output --partial "#meta acelyzer.rank1.device_shift_ns=-98000"
	# p2p instead shifts rank 1 whole, host event included.
	flex2ev -q -o "$T/p.ev" "$T/two.json"
	run -0 slices "$T/p.ev"
	assert_line "1	140000	1000	host_op"
}

@test "acelyzer alignment by hand: chain order" {
	fixture "Send"
	run -0 flex2ev --align=acelyzer -o "$T/a.ev" "$T/two.json"
	# Chain: the highest rank is the sender, moved forward by the first
	# receiver's (rank 0) latest TS2 minus its own latest TS5: 1 - 103 =
	# -102 us; host time meets rank 0's latest TS2 (the send's, at 1 us;
	# the event ends at 110): offset 109 us.  Send at TS4 1 + 109 = 110;
	# receive 100 - 102 + 109 = 107; kernel 110 - 102 + 109 = 117.
	assert_output --partial "chain order"
	assert_output --partial "rank 1 device clock shift -102.000 us"
	run -0 slices "$T/a.ev"
	assert_line "0	110000	4000	Send DmaO"
	assert_line "1	107000	3000	Recv DmaI"
	assert_line "1	117000	2000	k Cmpt Exec"
}

@test "acelyzer alignment that cannot be done: host times kept, and said" {
	fixture "Send"
	# One rank: nothing to align (acelyzer: no action), no warning.
	run -0 flex2ev --align=acelyzer --rank=0 -o "$T/one.ev" "$T/two.json"
	refute_output --partial "align"
	run -0 flex2ev --align=none --rank=0 -o "$T/none.ev" "$T/two.json"
	diff <(slices "$T/one.ev") <(slices "$T/none.ev")
	# Rank 1 without events of the CollGroup: acelyzer stops; here the
	# device events keep their host times, with a warning.
	grep -v Recv "$T/two.json" >"$T/norecv.json"
	run -0 flex2ev --align=acelyzer -o "$T/n.ev" "$T/norecv.json"
	assert_output --partial "warning: --align=acelyzer: rank 1: no events of a CollGroup AllReduce_x: device events keep their host times"
	flex2ev -q --align=none -o "$T/nn.ev" "$T/norecv.json"
	diff <(slices "$T/n.ev") <(slices "$T/nn.ev")
	run -2 flex2ev --align=acelyzer --no-tighten "$T/two.json"
	assert_output --partial "which --no-tighten turns off"
	run -2 flex2ev --align=mp_sync "$T/two.json"
	assert_output --partial "expected p2p, acelyzer or none"
}

# acelyzer's _active (tab-separated, padded: kernel, elapsed, start, end,
# percent, pid) and flex-stats active's CSV, both as rank,kernel,elapsed,
# start,end,percent with acelyzer's decimals.
active_rows() {
	awk -F'\t' 'NR > 1 { printf "%d,%.3f,%.3f,%.3f,%.3f,%.2f\n", $6, $1, $2, $3, $4, $5 }' "$1"
}
evkit_active_rows() {
	awk -F, 'NR > 1 { printf "%d,%.3f,%.3f,%.3f,%.3f,%.2f\n", $1, $2, $3, $4, $5, $6 }' "$1"
}

@test "shared data: --align=acelyzer gives acelyzer's _active on the TP4 sample, --align=none its -M" {
	need_shared_data
	flex2ev -q --align=acelyzer -o "$T/a.ev" "$A/allreduce_tp4.json"
	flex-stats active -o "$T/a.csv" "$T/a.ev"
	diff <(active_rows "$X/allreduce_tp4_split_active.csv") <(evkit_active_rows "$T/a.csv")
	# Rank 3: 381.905 us elapsed, 74.43% (p2p: 466.798, 60.89%).
	run -0 cat "$T/a.csv"
	assert_line "3,284.238,381.905,2097962448913.566,2097962449295.471,74.43"
	flex2ev -q --align=none -o "$T/n.ev" "$A/allreduce_tp4.json"
	flex-stats active -o "$T/n.csv" "$T/n.ev"
	diff <(active_rows "$X/allreduce_tp4_split_M_active.csv") <(evkit_active_rows "$T/n.csv")
}

@test "shared data: --align=acelyzer at --freq=557.18 gives acelyzer's _active to the ns" {
	need_shared_data
	# At a clock that is no whole number of kHz per cycle, acelyzer's
	# float times and evkit's ns differ by the ns rounding at most: every
	# time within 0.001 us (rank 1's 512.003 here 512.004), percents equal.
	flex2ev -q --freq=557.18 --align=acelyzer -o "$T/a.ev" "$A/allreduce_tp4.json"
	flex-stats active -o "$T/a.csv" "$T/a.ev"
	paste -d, <(active_rows "$X/allreduce_tp4_split_freq557_active.csv") <(evkit_active_rows "$T/a.csv") | awk -F, '
		{ if ($1 != $7 || $6 != $12) bad = 1
		  for (i = 2; i <= 5; i++) { d = $i - $(i + 6); if (d < -0.0011 || d > 0.0011) bad = 1 }
		  if (bad) { print "differs: " $0; exit 1 } ; n++ }
		END { exit n != 4 }'
	# Rank 3: 685.425 us as with p2p (685.418): at the right clock the two
	# placements agree.
	run -0 cat "$T/a.csv"
	assert_line --regexp "^3,510.137,685.425,"
}

@test "a generated 4-rank trace with four AllReduce groups: acelyzer's _active" {
	# acelyzer's run on the same generator output split per rank.
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 4 --iters 5 --seed 7 -o "$T/g.json"
	run -0 flex2ev --align=acelyzer -o "$T/g.ev" "$T/g.json"
	assert_output --partial "rank 2 device clock shift -2295668.829 us"
	flex-stats active -o "$T/g.csv" "$T/g.ev"
	diff <(active_rows "$X/gen_flex_4x5_seed7_split_active.csv") <(evkit_active_rows "$T/g.csv")
}

@test "shared data: acelyzer's shifts, device slices and ConcurrentPreps on the TP4 sample" {
	need_shared_data
	run -0 flex2ev --align=acelyzer -o "$T/a.ev" "$A/allreduce_tp4.json"
	# acelyzer's log: dts_shifts [0, 1480185.004, 2437781.255, 1772610.446],
	# dts_2_hts_ref_offset 2097959895759.0242 (us).
	grep -q "dts_shifts: *\[0, 1480185.004, 2437781.255, 1772610.446\]" "$X/allreduce_tp4_split_mp_sync.txt"
	assert_output --partial "rank 1 device clock shift +1480185.004 us"
	assert_output --partial "rank 2 device clock shift +2437781.255 us"
	assert_output --partial "rank 3 device clock shift +1772610.446 us"
	assert_output --partial "(offset 2097959895759.024 us)"
	# Each of acelyzer's 21 device slices (Preps dropped) has one here on
	# its rank, to the ns.
	slices "$T/a.ev" >"$T/ours.tsv"
	awk -F'\t' 'NR == FNR { r[NR] = $1; t[NR] = $2; d[NR] = $3; n = NR; next }
		FNR == 1 { next }
		{ ts = $2 * 1000; du = $3 * 1000; hit = 0
		  for (i = 1; i <= n; i++) if (r[i] == $1 && t[i] - ts <= 1 && ts - t[i] <= 1 && d[i] - du <= 1 && du - d[i] <= 1) hit = 1
		  if (!hit) { print "no slice for " $0; bad = 1 } ; m++ }
		END { if (m != 21) { print m " slices in the acelyzer file"; bad = 1 } ; exit bad }' "$T/ours.tsv" "$X/allreduce_tp4_split_slices.tsv"
	# ConcurrentPreps: acelyzer's 14 samples, same times (ns) and values.
	ev-view -M -H -n '^ConcurrentPreps$' -c rank,ts,bytes "$T/a.ev" >"$T/prep.tsv"
	diff <(awk -F'\t' 'NR > 1 { printf "%d\t%.0f\t%d\n", $1, $2 * 1000, $3 }' "$X/allreduce_tp4_split_prep_queue.tsv") "$T/prep.tsv"
	# Power: acelyzer's 17 samples (all 0 W, its "bad power events") at the
	# same times, each at its event's TS4 on the aligned clock.
	ev-view -M -H -n '^Power' -c rank,ts,bytes "$T/a.ev" | sort >"$T/power.tsv"
	diff <(awk -F'\t' 'NR > 1 { printf "%d\t%.0f\t%d\n", $1, $2 * 1000, $3 * 1000 }' "$X/allreduce_tp4_split_power.tsv" | sort) "$T/power.tsv"
}

# Receive end minus send end of each matched p2p pair of an ev stream, in
# us: "a->b<TAB>gap".
gaps() {
	ev-view -M -H -t p2p -c op,rank,peer,comm,seq,ts,dur "$1" | awk -F'\t' '
	$1 == "send" { k = $2 "," $3 "," $4 "," $5; se[k] = $6 + $7; order[++n] = k }
	$1 == "recv" { k = $3 "," $2 "," $4 "," $5; re[k] = $6 + $7 }
	END { for (i = 1; i <= n; i++) if (order[i] in re) { split(order[i], f, ","); printf "%s->%s\t%+.3f\n", f[1], f[2], (re[order[i]] - se[order[i]]) / 1000 } }' | sort
}

@test "shared data: send/recv gaps, acelyzer's with --align=acelyzer, receive-ends-with-send with p2p" {
	need_shared_data
	flex2ev -q --align=acelyzer -o "$T/a.ev" "$A/allreduce_tp4.json"
	# acelyzer's flows (--flow): +0.218 +0.175 +42.019 -10.116 -10.172 -10.236.
	diff <(awk -F'\t' 'NR > 1 { print $1 "\t" $4 }' "$X/allreduce_tp4_split_flow_gaps.tsv" | sort) <(gaps "$T/a.ev")
	# p2p: the pairs rank 1, 2 and 3 were aligned on end together; the
	# others keep what one offset per rank cannot take up.
	flex2ev -q -o "$T/p.ev" "$A/allreduce_tp4.json"
	run -0 gaps "$T/p.ev"
	assert_output - <<'EOF'
0->1	+0.000
1->2	+0.000
2->3	+58.000
3->0	+0.000
3->1	-0.531
3->2	-0.960
EOF
}

@test "shared data: the TP4 AllReduce's bandwidth derived from its events by hand" {
	need_shared_data
	# With --align=p2p (default) the collective spans from rank 0's first
	# event to rank 3's last.  Rank 0's first: its send (DmaO) slice,
	# tightened to TS4..TS5 = 2553438341 - 2553143669 = 294672 cycles =
	# 294.672 us (1000 MHz) ending at its host end.  Rank 3's last: the
	# broadcast's data send ("SenRdmaSend_82233 Data"), ending at its host
	# end plus rank 3's offset, which p2p takes from the pair 3->0: rank 0's
	# receive end minus rank 3's "Xseg to rank 0" send end.  Every figure
	# below is read from the JSON.
	j="$A/allreduce_tp4.json"
	hend() { jq -r --arg n "$1" --argjson p "$2" '[.[] | select(.ph == "E" and .pid == $p and (.name | startswith($n)))] | .[0].ts' "$j"; }
	cyc() { jq -r --arg n "$1" --argjson p "$2" --arg a "$3" --arg b "$4" '[.[] | select(.ph == "B" and .pid == $p and (.name | startswith($n)))] | .[0].attr | (.[$b] | tonumber) - (.[$a] | tonumber)' "$j"; }
	s0_end=$(hend "SenRdmaSend_82227" 0)
	s0_len=$(cyc "SenRdmaSend_82227" 0 TS4 TS5)
	[ "$s0_len" = 294672 ]
	data_end=$(hend "SenRdmaSend_82233 Data" 3)
	x0_end=$(hend "SenRdmaSend_82233 - Xseg to rank 0" 3)
	r0_end=$(hend "SenRdmaReceive_82229" 0)
	bytes=$(jq -r '[.[] | select(.pid == 0 and .attr.Bytes != null)] | .[0].attr.Bytes' "$j")
	[ "$bytes" = 524288 ]
	# span = (data end + (r0 end - x0 end)) - (s0 end - 294.672) = 509.173
	# us; 2 (4 - 1) x 524288 = 3145728 B over it = 6.178 GB/s.
	want=$(awk -v d="$data_end" -v x="$x0_end" -v r="$r0_end" -v s="$s0_end" -v l="$s0_len" -v b="$bytes" 'BEGIN {
		span = (d + (r - x)) - (s - l / 1000); printf "%d,%.3f,%.3f", 2 * 3 * b, span, 2 * 3 * b / span / 1000 }')
	[ "$want" = "3145728,509.173,6.178" ]
	flex2ev -q -o "$T/p.ev" "$j"
	run -0 flex-stats colls "$T/p.ev"
	assert_line --index 1 --regexp "^AllReduce_all_reduce_4,1,allreduce,4,4,524288,3145728,[0-9.]+,[0-9.]+,509.173,6.178$"
}
