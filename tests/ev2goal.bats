#!/usr/bin/env bats
# ev2goal: GOAL text and binary from coll-expand output, the checks, the
# per-rank workflow, and the nsys2goal pipeline end to end.  Every GOAL file
# a test writes goes through tests/goal-check.py (the txt2bin grammar plus
# widths and matching); binary output is read back and compared with text.
bats_require_minimum_version 1.5.0
load test_helper

FX="$TESTS_DIR/fixtures/ev2goal"
CX="$TESTS_DIR/fixtures/coll-expand"
CHECK="$TESTS_DIR/goal-check.py"
REF="$SHARED_DATA/goal/reference"

setup() {
	T="$BATS_TEST_TMPDIR"
}

# gc FILE...: goal-check with --match, failing the test on an error.
gc() {
	python3 "$CHECK" --match "$@"
}

# small_variant AWK_PROGRAM OUT.ev: the small fixture edited by awk.
small_variant() {
	awk -F'\t' -v OFS='\t' "$1" "$FX/small.tsv" >"$T/v.tsv"
	ev-view --pack -o "$2" "$T/v.tsv"
}

# The 1 MiB ring AllReduce of the ATLAHS reference, expanded with the
# clariden latency table.
atlahs_sched() { # atlahs_sched simple|ll OUT.ev
	need_shared_data
	npkit2lat -q -o "$T/lat.tsv" "$SHARED_DATA/npkit/clariden/npkit_data_summary_Simple.json" \
		"$SHARED_DATA/npkit/clariden/npkit_data_summary_LL.json"
	ev-view --pack -o "$T/coll.ev" "$CX/atlahs_$1.tsv"
	coll-expand --lat "$T/lat.tsv" -o "$2" "$T/coll.ev"
}

@test "small schedule: exact text, labels renumbered, zero calcs folded, duplicates dropped" {
	pack "$FX/small.tsv" "$T/s.ev"
	run -0 ev2goal "$T/s.ev"
	assert_output - <<'EOF'
num_ranks 2
rank 0 {
l0: calc 100 cpu 0
l1: send 1024b to 1 tag 42 cpu 0 nic 0
l1 requires l0
l2: recv 8b from 1 tag 43 cpu 1 nic 0
l2 requires l1
l3: calc 50 cpu 1
l3 irequires l2
}
rank 1 {
l0: recv 1024b from 0 tag 42 cpu 0 nic 0
l1: send 8b to 0 tag 43 cpu 1 nic 0
l1 requires l0
l2: calc 5 cpu 0
}
EOF
	ev2goal -o "$T/s.goal" "$T/s.ev"
	gc "$T/s.goal"
}

@test "numbers are written in full at every length, 1 to 20 digits" {
	# calc costs on each side of every power of ten and of two, up to
	# 2^64 - 1: each line's number is the record's dur, digit for digit
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#rank 0 host=n0\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tpeer\tid\tchannel\taux\tflags\n'
		python3 -c 'v = [0, 1, 9] + [10**k + d for k in range(1, 20) for d in (-1, 0, 1)] + [2**k + d for k in range(1, 64) for d in (-1, 0, 1)] + [2**64 - 1]
for i, x in enumerate(v): print(f"calc\tgap\t0\t0\t0\t{x}\t0\t-1\t{i}\t0\t0\tsynth")'
	} >"$T/d.tsv"
	pack "$T/d.tsv" "$T/d.ev"
	ev2goal --keep-sync -o "$T/d.goal" "$T/d.ev"
	awk -F'\t' '$1 == "calc" { print $6 }' "$T/d.tsv" >"$T/want"
	awk '$2 == "calc" { print $3 }' "$T/d.goal" >"$T/got"
	[ "$(wc -l <"$T/want")" -gt 200 ]
	cmp "$T/want" "$T/got"
	# the labels too: l0 .. lN in order
	run -0 awk '$2 == "calc" && $1 != "l" (n++) ":" { bad++ } END { print bad + 0 }' "$T/d.goal"
	assert_output 0
	gc "$T/d.goal"
}

@test "--keep-sync keeps every zero-length calc" {
	pack "$FX/small.tsv" "$T/s.ev"
	ev2goal --keep-sync -o "$T/k.goal" "$T/s.ev"
	gc "$T/k.goal"
	run -0 grep -c 'calc 0 cpu' "$T/k.goal"
	assert_output 2
	ev2goal -o "$T/s.goal" "$T/s.ev"
	run -1 grep -c 'calc 0 cpu' "$T/s.goal"
}

@test "--stats: ops by type, lines, bytes per rank, size histogram" {
	pack "$FX/small.tsv" "$T/s.ev"
	ev2goal --stats="$T/st.tsv" -o "$T/s.goal" "$T/s.ev"
	run -0 awk -F'\t' '$1 ~ /^(ops|send|recv|calc|requires|irequires|folded_zero_calcs|duplicate_deps|lines)$/ { print $1 "\t" $2 }' "$T/st.tsv"
	assert_output - <<'EOF'
ops	7
send	2
recv	2
calc	3
requires	3
irequires	1
folded_zero_calcs	2
duplicate_deps	1
lines	16
EOF
	# lines = what the file has
	run -0 wc -l <"$T/s.goal"
	assert_output 16
	run -0 awk -F'\t' 'f && NF == 5 { print } /^rank\tsends/ { f = 1 } /^$/ { f = 0 }' "$T/st.tsv"
	assert_output - <<'EOF'
0	1	1	2	1024
1	1	1	1	8
EOF
	run -0 grep -A3 '^min_bytes' "$T/st.tsv"
	assert_line -n 1 "8	15	1"
	assert_line -n 2 "1024	2047	1"
}

@test "binary output is txt2bin's layout of the same graph" {
	pack "$FX/small.tsv" "$T/s.ev"
	ev2goal -o "$T/s.goal" "$T/s.ev"
	ev2goal --binary -o "$T/s.bin" "$T/s.ev"
	python3 "$CHECK" --bin "$T/s.bin" --text "$T/s.goal"
	# Header: magic 4223, 2 ranks, max cpu 1, max nic 0.
	run -0 bash -c "head -c 14 '$T/s.bin' | od -An -tx1 | tr -s ' '"
	assert_output " 7f 10 00 00 00 00 00 00 02 00 00 00 01 00"
	# The reader notices a damaged file.
	cp "$T/s.bin" "$T/bad.bin"
	printf '\x09' | dd of="$T/bad.bin" bs=1 seek=48 conv=notrunc 2>/dev/null
	run -1 python3 "$CHECK" --bin "$T/bad.bin" --text "$T/s.goal"
	head -c 100 "$T/s.bin" >"$T/short.bin"
	run -1 python3 "$CHECK" --bin "$T/short.bin"
}

@test "binary to a terminal is refused, -f forces it" {
	pack "$FX/small.tsv" "$T/s.ev"
	run -1 script -qec "ev2goal --binary '$T/s.ev'" /dev/null
	assert_output --partial "terminal"
}

@test "ATLAHS reference, Simple 1 MiB: same ops by type and messages, far fewer lines" {
	atlahs_sched simple "$T/x.ev"
	ev2goal --stats="$T/st.tsv" -o "$T/x.goal" "$T/x.ev"
	gc "$T/x.goal"
	gc "$REF/v2_allreduce_ring_simple_4gpu_2node_2ch_1MiB.goal"
	# Messages per (rank, peer, bytes) as in the reference, ignoring tags
	# (written to the test's directory: the reference stays untouched).
	msgs() { awk '/^rank/ { r = $2 } / send / { for (i = 1; i <= NF; i++) if ($i == "send") print r, $(i + 1), $(i + 3) }' "$1" | sort | uniq -c; }
	msgs "$T/x.goal" >"$T/ours.msgs"
	msgs "$REF/v2_allreduce_ring_simple_4gpu_2node_2ch_1MiB.goal" >"$T/ref.msgs"
	[ -s "$T/ref.msgs" ]
	diff "$T/ours.msgs" "$T/ref.msgs"
	# 96 sends, 96 recvs and 176 non-zero calcs, like the reference ...
	run -0 awk '/ send / { s++ } / recv / { r++ } /calc [1-9]/ { c++ } END { print s, r, c }' "$T/x.goal"
	assert_output "96 96 176"
	run -0 awk '/ send / { s++ } / recv / { r++ } /calc [1-9]/ { c++ } END { print s, r, c }' "$REF/v2_allreduce_ring_simple_4gpu_2node_2ch_1MiB.goal"
	assert_output "96 96 176"
	# ... in 785 lines instead of 1121 (coll-expand's FIFO adds 64 requires);
	# the ATLAHS-style estimate is close to
	# the real ATLAHS file.
	run -0 wc -l <"$T/x.goal"
	assert_output 785
	run -0 awk -F'\t' '$1 == "lines_atlahs_style" { print ($2 > 1050 && $2 < 1200) ? "close" : $2 }' "$T/st.tsv"
	assert_output close
}

@test "ATLAHS reference, LL 64 KiB: six messages per rank, LL wire bytes doubled" {
	atlahs_sched ll "$T/x.ev"
	ev2goal -o "$T/x.goal" "$T/x.ev"
	gc "$T/x.goal"
	gc "$REF/v2_allreduce_ring_ll_4gpu_2node_1ch_64KiB.goal"
	run -0 awk '/^rank/ { r = $2 } / send / && !/ 0b / { n[r]++; b = $3 } END { for (r = 0; r < 4; r++) printf "%d ", n[r] + 0; print b }' "$T/x.goal"
	# ranks 1 and 3 send across nodes; 0 and 2 send intra-node handshakes
	assert_output "0 6 0 6 32768b"
	run -0 awk '/^rank/ { r = $2 } / send / && !/ 0b / { n[r]++; b = $3 } END { for (r = 0; r < 4; r++) printf "%d ", n[r] + 0; print b }' "$REF/v2_allreduce_ring_ll_4gpu_2node_1ch_64KiB.goal"
	assert_output "0 6 0 6 16384b"
}

@test "binary equals text on the ATLAHS schedule" {
	atlahs_sched simple "$T/x.ev"
	ev2goal -o "$T/x.goal" "$T/x.ev"
	ev2goal -b -o "$T/x.bin" "$T/x.ev"
	python3 "$CHECK" --bin "$T/x.bin" --text "$T/x.goal"
	run -0 bash -c "python3 '$CHECK' --dump --bin '$T/x.bin' | md5sum"
	local a="$output"
	run -0 bash -c "python3 '$CHECK' --dump '$T/x.goal' | md5sum"
	assert_output "$a"
}

@test "goal-check accepts the shared reference GOAL files" {
	need_shared_data
	python3 "$CHECK" "$SHARED_DATA/goal/binary_tree_32.goal"
	python3 "$CHECK" "$SHARED_DATA/goal/schedgen_schedule_4ranks.goal"
	gc "$REF/tiny_handwritten_2rank.goal"
	gc "$REF/v2_allreduce_ring_simple_4gpu_2node_2ch_1MiB.goal"
	gc "$REF/v2_allreduce_ring_ll_4gpu_2node_1ch_64KiB.goal"
	# Schedgen's any-source receives cannot be matched.
	run -1 gc "$SHARED_DATA/goal/schedgen_schedule_4ranks.goal"
}

# bad_goal NAME MESSAGE_REGEX: a GOAL text on stdin must be rejected.
bad_goal() {
	cat >"$T/$1.goal"
	run -1 python3 "$CHECK" --match "$T/$1.goal"
	[[ "$output" =~ $2 ]] || { echo "$1: $output"; return 1; }
}

@test "goal-check rejects bad GOAL" {
	printf 'num_ranks 1\nrank 0 {\nl0: calc 5\n}\n' >"$T/ok.goal"
	python3 "$CHECK" "$T/ok.goal"
	bad_goal label_before_use 'used before it is defined' <<'EOF'
num_ranks 1
rank 0 {
l0: calc 5
l0 requires l1
l1: calc 5
}
EOF
	bad_goal rank_order 'out of order' <<'EOF'
num_ranks 2
rank 1 {
}
rank 0 {
}
EOF
	bad_goal missing_rank '1 rank blocks' <<'EOF'
num_ranks 2
rank 0 {
}
EOF
	bad_goal no_num_ranks 'before num_ranks' <<'EOF'
rank 0 {
}
EOF
	bad_goal tag_width 'tag 5000000702' <<'EOF'
num_ranks 2
rank 0 {
l0: send 8b to 1 tag 5000000702
}
rank 1 {
l0: recv 8b from 0 tag 5000000702
}
EOF
	bad_goal cpu_width 'cpu 300' <<'EOF'
num_ranks 1
rank 0 {
l0: calc 5 cpu 300
}
EOF
	bad_goal field_order 'not a GOAL line' <<'EOF'
num_ranks 2
rank 0 {
l0: send 8b to 1 cpu 0 tag 3
}
rank 1 {
}
EOF
	bad_goal calc_nic 'not a GOAL line' <<'EOF'
num_ranks 1
rank 0 {
l0: calc 5 cpu 0 nic 0
}
EOF
	bad_goal no_b 'not a GOAL line' <<'EOF'
num_ranks 2
rank 0 {
l0: send 8 to 1
}
rank 1 {
}
EOF
	bad_goal peer_range 'peer 5' <<'EOF'
num_ranks 2
rank 0 {
l0: send 8b to 5
}
rank 1 {
}
EOF
	bad_goal unclosed 'no closing' <<'EOF'
num_ranks 1
rank 0 {
l0: calc 5
EOF
	bad_goal cycle 'cycle' <<'EOF'
num_ranks 1
rank 0 {
l0: calc 5
l1: calc 5
l0 requires l1
l1 requires l0
}
EOF
	bad_goal unmatched 'no recv' <<'EOF'
num_ranks 2
rank 0 {
l0: send 8b to 1 tag 4
}
rank 1 {
}
EOF
	bad_goal size_mismatch 'matches a send of 8b' <<'EOF'
num_ranks 2
rank 0 {
l0: send 8b to 1 tag 4
}
rank 1 {
l0: recv 16b from 0 tag 4
}
EOF
	bad_goal dup_label 'defined twice' <<'EOF'
num_ranks 1
rank 0 {
l0: calc 5
l0: calc 6
}
EOF
}

@test "an unmatched send is an error naming it; --no-check writes it anyway" {
	# drop rank 1's recv of tag 42 (and the dependency on it)
	small_variant '!($1 == "recv" && $3 == 1) && !($1 == "dep" && $3 == 1 && $9 == 1)' "$T/u.ev"
	run -1 ev2goal -o "$T/u.goal" "$T/u.ev"
	assert_output --partial "rank 0: send to rank 1 tag 42 has no matching recv"
	[ ! -e "$T/u.goal" ]
	ev2goal --no-check -o "$T/u.goal" "$T/u.ev"
	python3 "$CHECK" "$T/u.goal"
	run -1 gc "$T/u.goal"
}

@test "a size mismatch is an error" {
	small_variant '$1 == "recv" && $3 == 1 { $7 = 1000 } { print }' "$T/m.ev"
	run -1 ev2goal -o "$T/m.goal" "$T/m.ev"
	assert_output --regexp 'record [0-9]+: rank 0 send of 1024 bytes to rank 1 tag 42 is matched \(FIFO\) by a recv of 1000 bytes'
	[ ! -e "$T/m.goal" ]
}

@test "dangling, later, self and misplaced dependencies are errors" {
	# dep on op 7 of rank 0, which does not exist yet
	small_variant '$1 == "dep" && $3 == 0 && $9 == 2 { $11 = 7 } { print }' "$T/d.ev"
	run -1 ev2goal -o "$T/d.goal" "$T/d.ev"
	assert_output --regexp 'record [0-9]+: rank 0 op 2 depends on op 7, which is not earlier'
	# a hole in the ids: op 5 never defined
	small_variant '$1 != "dep" && $3 == 0 && $9 == 4 { $9 = 6 } $1 == "dep" && $3 == 0 && $9 == 4 { $9 = 6; $11 = 5 } { print }' "$T/h.ev"
	run -1 ev2goal -o "$T/h.goal" "$T/h.ev"
	assert_output --partial "rank 0 op 6 depends on op 5, which is not defined (dangling dependency)"
	# a dep record that does not follow its op
	small_variant '$1 == "dep" && $3 == 0 && $9 == 2 { $9 = 1 } { print }' "$T/p.ev"
	run -1 ev2goal -o "$T/p.goal" "$T/p.ev"
	assert_output --partial "rank 0: dep of op 1 does not follow that op"
	# ids going backwards
	small_variant '$1 != "dep" && $3 == 0 && $9 == 3 { $9 = 1 } $1 == "dep" && $3 == 0 && $9 == 3 { $9 = 1; $11 = 0 } { print }' "$T/b.ev"
	run -1 ev2goal -o "$T/b.goal" "$T/b.ev"
	assert_output --partial "rank 0: op id 1 after op 2"
	[ ! -e "$T/b.goal" ]
}

@test "a dependency that left the window is an error, --window raises it" {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\ntype\top\trank\tstream\tdur\tid\taux\n'
		awk 'BEGIN { OFS = "\t"; for (i = 0; i < 100; i++) { print "calc", "gap", 0, 0, 1, i, 0; if (i) print "dep", "-", 0, 0, 0, i, i - 1 }
			print "calc", "gap", 0, 0, 1, 100, 0; print "dep", "-", 0, 0, 0, 100, 0 }'
	} >"$T/w.tsv"
	ev-view --pack -o "$T/w.ev" "$T/w.tsv"
	run -1 ev2goal --window=16 -o "$T/w.goal" "$T/w.ev"
	assert_output --partial "rank 0 op 100 depends on op 0, 100 ops back, which left the window of 16 ops; raise --window"
	ev2goal --window=128 -o "$T/w.goal" "$T/w.ev"
	gc "$T/w.goal"
	ev2goal --window=128 -b -o "$T/w.bin" "$T/w.ev"
	python3 "$CHECK" --bin "$T/w.bin" --text "$T/w.goal"
}

@test "binary: a spool write failing while the windows are drained is an error, no output left" {
	# 200,000 ops all depending on op 0: every node stays in the window until
	# the end, so their successor lists are written by the drain (a thread of
	# its own at this size), after the 4.6 MB of nodes spooled on the way.
	{
		printf '#ev 1.0 96 clock=ns origin=trace\ntype\top\trank\tstream\tdur\tid\taux\n'
		awk 'BEGIN { OFS = "\t"; print "calc", "gap", 0, 0, 1, 0, 0
			for (i = 1; i <= 200000; i++) { print "calc", "gap", 0, 0, 1, i, 0; print "dep", "-", 0, 0, 0, i, 0 } }'
	} >"$T/d.tsv"
	ev-view --pack -o "$T/d.ev" "$T/d.tsv"
	mkdir "$T/tmp"
	ev2goal -b --tmpdir="$T/tmp" -o "$T/d.bin" "$T/d.ev"
	# 6 MB of spool: room for the nodes, not for the successor lists too
	# (the output goes to /dev/null, which has no size limit).
	run -1 bash -c 'ulimit -f 6000; ev2goal -b --tmpdir="$1/tmp" -o /dev/null "$1/d.ev"' _ "$T"
	assert_output --partial "ev2goal: $T/tmp/.ev2goal."
	assert_output --partial "File too large"
	[ -z "$(ls -A "$T/tmp")" ]
	python3 "$CHECK" --bin "$T/d.bin" >/dev/null
}

@test "cpu and nic beyond 8 bits are errors naming the op" {
	small_variant '$1 == "send" && $3 == 0 { $4 = 300 } { print }' "$T/c.ev"
	# dense numbering keeps it small
	ev2goal -o "$T/c.goal" "$T/c.ev"
	gc "$T/c.goal"
	run -1 ev2goal --cpu=lane -o "$T/c.goal" "$T/c.ev"
	assert_output --regexp 'record [0-9]+: rank 0 op 2 \(send\): cpu 300 does not fit'
	small_variant '$1 == "send" && $3 == 0 { $10 = 260 } { print }' "$T/n.ev"
	run -1 ev2goal --nic=channel -o "$T/n.goal" "$T/n.ev"
	assert_output --partial "nic 260 does not fit"
	ev2goal --nic=channel:4 -o "$T/n.goal" "$T/n.ev"
	run -0 grep -c 'send 1024b to 1 tag 42 cpu 0 nic 0' "$T/n.goal"
}

@test "--nic policies" {
	atlahs_sched simple "$T/x.ev"
	ev2goal --nic=channel -o "$T/c.goal" "$T/x.ev"
	gc "$T/c.goal"
	run -0 bash -c "grep -o 'nic [0-9]*' '$T/c.goal' | sort -u | tr '\n' ' '"
	assert_output "nic 0 nic 1 "
	ev2goal --nic=rail -o "$T/r.goal" "$T/x.ev"
	gc "$T/r.goal"
	# GPU index in the node: ranks 0 and 2 are 0, ranks 1 and 3 are 1
	run -0 awk '/^rank/ { r = $2 } / nic / { n[r] = n[r] " " $NF } END { for (r = 0; r < 4; r++) { split(n[r], a, " "); print r, a[1] } }' "$T/r.goal"
	assert_output - <<'EOF'
0 0
1 1
2 0
3 1
EOF
	pack "$FX/small.tsv" "$T/s.ev"
	ev-view -M "$T/s.ev" | grep -v '^#rank' >/dev/null
	small_variant '!/^#rank/' "$T/nr.ev"
	run -1 ev2goal --nic=rail -o "$T/nr.goal" "$T/nr.ev"
	assert_output --partial "give --ranks-per-node"
	ev2goal --nic=rail --ranks-per-node=2 -o "$T/nr.goal" "$T/nr.ev"
	run -2 ev2goal --nic=bogus "$T/s.ev"
}

@test "--per-rank parts, --concat, --join and --delete-parts give the same schedule" {
	atlahs_sched simple "$T/x.ev"
	ev2goal -o "$T/one.goal" "$T/x.ev"
	ev2goal --per-rank="$T/parts" "$T/x.ev"
	run -0 ls "$T/parts"
	assert_output - <<'EOF'
rank_0.goal
rank_1.goal
rank_2.goal
rank_3.goal
EOF
	run -0 head -n 1 "$T/parts/rank_2.goal"
	assert_output "rank 2 {"
	ev2goal --join="$T/parts" -o "$T/joined.goal"
	cmp "$T/one.goal" "$T/joined.goal"
	ev2goal --per-rank="$T/p2" -c -o "$T/c.goal" "$T/x.ev"
	cmp "$T/one.goal" "$T/c.goal"
	ev2goal --per-rank="$T/p3" -r -o "$T/r.goal" "$T/x.ev"
	cmp "$T/one.goal" "$T/r.goal"
	run -0 ls -A "$T/p3"
	assert_output ""
	# Parallel workers, each writing the ranks r with r mod 3 = k.
	for k in 0 1 2; do ev2goal --ranks="$k%3" --per-rank="$T/p4" "$T/x.ev"; done
	ev2goal --join="$T/p4" -o "$T/w.goal"
	cmp "$T/one.goal" "$T/w.goal"
	# A missing part is an error, not a shorter schedule.
	rm "$T/p4/rank_1.goal"
	run -1 ev2goal --join="$T/p4" -o "$T/w2.goal"
	assert_output --partial "rank_1.goal is missing but rank_3.goal exists"
	[ ! -e "$T/w2.goal" ]
	run -2 ev2goal --ranks=0-1 "$T/x.ev"
	run -2 ev2goal --concat "$T/x.ev"
	run -2 ev2goal --ranks=3%3 --per-rank="$T/p5" "$T/x.ev"
}

@test "--join checks every part: truncated, garbage, missing and out-of-range parts are errors naming file and line" {
	pack "$FX/small.tsv" "$T/s.ev"
	ev2goal -o "$T/one.goal" "$T/s.ev"
	ev2goal --per-rank="$T/p" "$T/s.ev"
	ev2goal --join="$T/p" -o "$T/j.goal"
	cmp "$T/one.goal" "$T/j.goal"
	cp "$T/p/rank_1.goal" "$T/r1"
	# A worker killed mid-write: the block has no closing brace.
	head -n 2 "$T/r1" >"$T/p/rank_1.goal"
	run -1 ev2goal --join="$T/p" -o "$T/bad.goal"
	assert_output "ev2goal: $T/p/rank_1.goal: line 2: truncated: rank 1's block has no closing }"
	[ ! -e "$T/bad.goal" ]
	# Cut inside a line.
	head -c 30 "$T/r1" >"$T/p/rank_1.goal"
	run -1 ev2goal --join="$T/p" -o "$T/bad.goal"
	assert_output "ev2goal: $T/p/rank_1.goal: line 2: truncated: the last line has no newline"
	# Garbage and an empty part.
	printf 'hello\n' >"$T/p/rank_1.goal"
	run -1 ev2goal --join="$T/p" -o "$T/bad.goal"
	assert_output --partial "rank_1.goal: line 1: expected \`rank 1 {\`"
	: >"$T/p/rank_1.goal"
	run -1 ev2goal --join="$T/p" -o "$T/bad.goal"
	assert_output --partial "rank_1.goal: line 1: empty part"
	sed 's/^l1 requires l0$/l1 requires l5/' "$T/r1" >"$T/p/rank_1.goal"
	run -1 ev2goal --join="$T/p" -o "$T/bad.goal"
	assert_output --partial "rank_1.goal: line 4: l1 requires l5, which is not earlier"
	# A missing last part: rank 0 sends to a rank the schedule would not have.
	rm "$T/p/rank_1.goal"
	run -1 ev2goal --join="$T/p" -o "$T/bad.goal"
	assert_output "ev2goal: $T/p/rank_0.goal: line 3: peer 1 is not below num_ranks 1 (the parts are rank_0 .. rank_0)"
	[ ! -e "$T/bad.goal" ]
	# Binary: a truncated section.
	ev2goal -b --per-rank="$T/pb" "$T/s.ev"
	ev2goal -b --join="$T/pb" -o "$T/j.bin"
	ev2goal -b -o "$T/one.bin" "$T/s.ev"
	cmp "$T/one.bin" "$T/j.bin"
	head -c 40 "$T/pb/rank_1.bin" >"$T/t.bin"
	mv "$T/t.bin" "$T/pb/rank_1.bin"
	run -1 ev2goal -b --join="$T/pb" -o "$T/bad.bin"
	assert_output --regexp "^ev2goal: $T/pb/rank_1.bin: byte [0-9]+: truncated rank section"
	[ ! -e "$T/bad.bin" ]
}

@test "ranks and peers beyond the limit are errors; a large rank costs no dense table" {
	small_variant '$1 == "calc" && $3 == 1 && $9 == 3 { $3 = 2000000 } { print }' "$T/r.ev"
	run -1 ev2goal --no-check -o "$T/r.goal" "$T/r.ev"
	assert_output --regexp 'record [0-9]+: rank 2000000 is not below the limit of 1048576 ranks'
	small_variant '$1 == "send" && $3 == 0 { $8 = 5000000 } { print }' "$T/p.ev"
	run -1 ev2goal --no-check -o "$T/p.goal" "$T/p.ev"
	assert_output --partial "rank 0 op 2: peer 5000000 is not below the limit of 1048576 ranks"
	# Rank 1000000 is allowed: the schedule has that many (empty) blocks,
	# but the rank table holds only the ranks seen.
	small_variant '$1 == "calc" && $3 == 1 && $9 == 3 { $3 = 1000000; $9 = 0 } $1 == "dep" && $3 == 1 && $9 == 3 { next } { print }' "$T/big.ev"
	/usr/bin/time -f '%M' -o "$T/rss" ev2goal --no-check -o "$T/big.goal" "$T/big.ev"
	run -0 head -n 1 "$T/big.goal"
	assert_output "num_ranks 1000001"
	run -0 tail -n 3 "$T/big.goal"
	assert_output - <<'EOF'
rank 1000000 {
l0: calc 5 cpu 0
}
EOF
	[ "$(cat "$T/rss")" -lt 102400 ] || { echo "peak RSS $(cat "$T/rss") KiB"; false; }
}

@test "--help and usage errors return cleanly" {
	run -0 ev2goal --help
	assert_output --partial "Usage: ev2goal"
	run -2 ev2goal --ranks=x --per-rank="$T/p"
	assert_output --partial "--ranks: expected a list like 0,2,4-7, got 'x'"
	run -2 ev2goal --ranks=0-3
	run -2 ev2goal --window=1
}

@test "binary parts join into the same binary schedule" {
	atlahs_sched simple "$T/x.ev"
	ev2goal -b -o "$T/one.bin" "$T/x.ev"
	for k in 0 1; do ev2goal -b --ranks="$k%2" --per-rank="$T/pb" "$T/x.ev"; done
	ev2goal -b --join="$T/pb" -o "$T/j.bin"
	cmp "$T/one.bin" "$T/j.bin"
}

@test "num_ranks counts peers and --num-ranks; empty ranks get empty blocks" {
	pack "$FX/small.tsv" "$T/s.ev"
	ev2goal --num-ranks=4 -o "$T/s4.goal" "$T/s.ev"
	gc "$T/s4.goal"
	run -0 tail -n 4 "$T/s4.goal"
	assert_output - <<'EOF'
rank 2 {
}
rank 3 {
}
EOF
	ev2goal --num-ranks=4 -b -o "$T/s4.bin" "$T/s.ev"
	python3 "$CHECK" --bin "$T/s4.bin" --text "$T/s4.goal"
	run -1 ev2goal --num-ranks=1 -o "$T/s1.goal" "$T/s.ev"
	assert_output --partial "not below --num-ranks=1"
}

@test "input without schedule records is an error" {
	printf '#ev 1.0 96 clock=ns origin=trace\ntype\trank\tts\nkernel\t0\t5\n' >"$T/k.tsv"
	pack "$T/k.tsv" "$T/k.ev"
	run -1 ev2goal -o "$T/k.goal" "$T/k.ev"
	assert_output --partial "no send, recv or calc records"
}

@test "a self-dependency (a cycle) is an error" {
	small_variant '$1 == "dep" && $3 == 0 && $9 == 4 { $11 = 4 } { print }' "$T/c.ev"
	run -1 ev2goal -o "$T/c.goal" "$T/c.ev"
	assert_output --partial "rank 0 op 4 depends on op 4, which is not earlier"
}

# gen_nsys FLAVOUR DIR: 2 nodes x 2 GPUs, 2 iterations: ring (Simple) and
# tree (LL) AllReduce, AllGather, ReduceScatter, Broadcast, Reduce and a
# grouped Send/Recv exchange.
gen_nsys() {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour "$1" --nodes 2 --gpus 2 --iters 2 "$2" >/dev/null
}

@test "nsys2goal end to end: annotated NCCL, several nodes, ring and tree, Simple and LL, grouped p2p" {
	gen_nsys annotated "$T/nsys"
	run -0 nsys2goal -i "$T/nsys" -o "$T/out"
	assert_output --partial "annotated NCCL"
	gc "$T/out/output.goal"
	run -0 awk -F'\t' '$1 == "ranks" { print $2 }' "$T/out/stats.tsv"
	assert_output 4
	# the expansion has both algorithms and both protocols, and p2p messages
	nsys2goal -q -k -i "$T/nsys" -o "$T/k"
	run -0 bash -c "ev-view -M -H -t send -c algo,proto '$T/k/sched.ev' | sort -u | tr '\n' ' '"
	assert_output --partial "ring	simple"
	assert_output --partial "tree	ll"
	run -0 bash -c "ev-view -M -H -t send -c op '$T/k/sched.ev' | sort -u | tr '\n' ' '"
	assert_output --partial "send"
	# -p -r -j 2 gives the same file; binary describes the same graph
	nsys2goal -q -i "$T/nsys" -o "$T/par" -p -r -j 2
	cmp "$T/out/output.goal" "$T/par/output.goal"
	run -0 ls -A "$T/par"
	assert_output - <<'EOF'
output.goal
stats.tsv
EOF
	nsys2goal -q -i "$T/nsys" -o "$T/bin" -b -j 2
	python3 "$CHECK" --bin "$T/bin/output.bin" --text "$T/out/output.goal"
	# -p alone keeps the parts, -m merges streams
	nsys2goal -q -i "$T/nsys" -o "$T/parts" -p -j 2
	run -0 ls "$T/parts/parts"
	assert_line -n 0 rank_0.goal
	assert_line -n 3 rank_3.goal
	nsys2goal -q -i "$T/nsys" -o "$T/m" -m
	gc "$T/m/output.goal"
}

@test "nsys2goal on stock NCCL uses the chooser and says so" {
	gen_nsys stock "$T/nsys"
	run -0 nsys2goal -i "$T/nsys" -o "$T/out"
	assert_output --partial "no annotated NCCL markers (stock NCCL)"
	gc "$T/out/output.goal"
}

@test "nsys2goal with NPKit tables" {
	need_shared_data
	gen_nsys annotated "$T/nsys"
	run -0 nsys2goal -q -i "$T/nsys" -o "$T/out" -s "$SHARED_DATA/npkit/clariden/npkit_data_summary_Simple.json" \
		-l "$SHARED_DATA/npkit/clariden/npkit_data_summary_LL.json"
	[ -s "$T/out/lat.tsv" ]
	# Tree expansion with a latency table chains reduce/copy costs: every
	# one must depend on an earlier op (a self-dependency was once written).
	gc "$T/out/output.goal"
	run -0 grep -c 'calc [1-9]' "$T/out/output.goal"
}

@test "nsys2goal usage errors and missing input" {
	run -2 nsys2goal -o "$T/o"
	assert_output --partial "(-i SQLITE_DIR)"
	run -2 nsys2goal -i "$T" -o "$T/o" -c
	run -2 nsys2goal -i "$T" -o "$T/o" -j 0
	run -1 nsys2goal -i "$T/nosuch" -o "$T/o"
	assert_output --partial "nosuch: No such file or directory"
	mkdir -p "$T/empty"
	run -1 nsys2goal -i "$T/empty" -o "$T/o"
	assert_output --partial "no *.sqlite exports"
	run -0 nsys2goal --help
	assert_output --partial "Usage: nsys2goal"
}
