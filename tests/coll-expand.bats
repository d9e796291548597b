#!/usr/bin/env bats
# coll-expand: closed forms from nccl-model.md, schedule validity, the ATLAHS
# reference GOAL files, options and errors.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	FX="$TESTS_DIR/fixtures/coll-expand"
	T="$BATS_TEST_TMPDIR"
}

# mkcoll OUT N OP BYTES ALGO PROTO DTYPE NCH [ROOT]: one collective on ranks
# 0..N-1 of comm 7 (extra text lines before #comm from $META).
mkcoll() {
	local out="$1" n="$2" op="$3" bytes="$4" algo="$5" proto="$6" dt="$7" nch="$8" root="${9:--1}" r
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n'
		printf '%b' "${META:-}"
		printf '#comm 7 nranks=%d ranks=%s\n' "$n" "$(seq -s, 0 $((n - 1)))"
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tpeer\talgo\tproto\tdtype\tchannel\taux\n'
		for ((r = 0; r < n; r++)); do
			printf 'coll\t%s\t%d\t1\t1000\t500\t%s\t7\t0\t%s\t%s\t%s\t%s\t%s\t%d\n' "$op" "$r" "$bytes" "$root" "$algo" "$proto" "$dt" "$nch" "$n"
		done
		printf '#end %d\n' "$n"
	} >"$out.tsv"
	ev-view --pack -o "$out" "$out.tsv"
}

# check FILE: schedule validity (matched sends, dense ids, backward deps).
check() {
	ev-view -M -H -c type,rank,id,peer,aux,bytes "$1" | awk -f "$FX/check.awk"
}

# per_channel FILE RANK: "channel sends bytes" of one rank's SENDs.
per_channel() {
	ev-view -M -H -t send -r "$2" -c channel,bytes "$1" |
		awk -F'\t' '{ n[$1]++; b[$1] += $2 } END { for (c in n) print c, n[c], b[c] }' | sort -n
}

# sent FILE: total SEND bytes per rank.
sent() {
	ev-view -M -H -t send -c rank,bytes "$1" | awk -F'\t' '{ b[$1] += $2 } END { for (r in b) print r, b[r] }' | sort -n
}

@test "ring AllReduce 256 MiB fp32, n=8, SIMPLE, 32 ch: 28 x 512 KiB per channel and direction" {
	mkcoll "$T/a.ev" 8 allreduce 268435456 ring simple float32 32
	coll-expand -o "$T/a.out" "$T/a.ev"
	run -0 check "$T/a.out"
	assert_output "sends 7168 recvs 7168 ok"
	run -0 bash -c "ev-view -M -H -t send,recv -c type,channel,bytes '$T/a.out' | sort | uniq -c | awk '{ print \$1, \$2, \$4 }' | sort -u"
	assert_output - <<'EOF'
224 recv 524288
224 send 524288
EOF
	# 14 MiB per channel = 2*7/8 * 8 MiB
	run -0 bash -c "per_channel() { $(declare -f per_channel | tail -n +2); }; per_channel '$T/a.out' 3 | awk '{ print \$2, \$3 }' | sort -u"
	assert_output "28 14680064"
}

@test "ring AllReduce 4 MiB fp32, n=8, SIMPLE: 16 KiB slices followed by empty ones" {
	mkcoll "$T/a.ev" 8 allreduce 4194304 ring simple float32 32
	coll-expand -o "$T/a.out" "$T/a.ev"
	run -0 bash -c "ev-view -M -H -t send -r 0 -c channel,bytes '$T/a.out' | awk -F'\t' '\$1 == 5' | head -4 | cut -f2 | paste -sd' '"
	assert_output "16384 0 16384 0"
	run -0 bash -c "ev-view -M -H -t send -r 0 -c channel '$T/a.out' | sort | uniq -c | awk '{ print \$1 }' | sort -u"
	assert_output 28
	run -0 sent "$T/a.out"
	assert_line --index 0 "0 7340032"
}

@test "ring AllReduce LL 512 KiB fp16 and LL128 16 MiB fp16: message counts and wire bytes" {
	mkcoll "$T/ll.ev" 8 allreduce 524288 ring ll float16 32
	coll-expand -o "$T/ll.out" "$T/ll.ev"
	run -0 bash -c "ev-view -M -H -t send -r 0 -c channel,bytes '$T/ll.out' | sort | uniq -c | awk '{ print \$1, \$3 }' | sort -u"
	assert_output "14 4096"
	mkcoll "$T/l8.ev" 8 allreduce 16777216 ring ll128 float16 32
	coll-expand -o "$T/l8.out" "$T/l8.ev"
	run -0 bash -c "ev-view -M -H -t send -r 0 -c channel,bytes '$T/l8.out' | sort | uniq -c | awk '{ print \$1, \$3 }' | sort -u"
	assert_output "14 71680"
	run -0 check "$T/l8.out"
}

@test "per-rank totals: 2(n-1)/n B for AllReduce, (n-1) count T for AllGather and ReduceScatter" {
	mkcoll "$T/ar.ev" 4 allreduce 67108864 ring simple float32 8
	coll-expand -o "$T/ar.out" "$T/ar.ev"
	run -0 sent "$T/ar.out"
	assert_output - <<'EOF'
0 100663296
1 100663296
2 100663296
3 100663296
EOF
	# 64 MiB gathered from 8 ranks: each sends 7 x 8 MiB
	mkcoll "$T/ag.ev" 8 allgather 67108864 ring simple float32 16
	coll-expand -o "$T/ag.out" "$T/ag.ev"
	run -0 bash -c "sent() { $(declare -f sent | tail -n +2); }; sent '$T/ag.out' | awk '{ print \$2 }' | sort -u"
	assert_output 58720256
	mkcoll "$T/rs.ev" 8 reducescatter 67108864 ring simple float32 16
	coll-expand -o "$T/rs.out" "$T/rs.ev"
	run -0 bash -c "sent() { $(declare -f sent | tail -n +2); }; sent '$T/rs.out' | awk '{ print \$2 }' | sort -u"
	assert_output 58720256
	run -0 check "$T/rs.out"
	# uneven sizes: every byte still travels 2(n-1) times in total
	mkcoll "$T/odd.ev" 7 allreduce 1234567 ring simple int8 3
	coll-expand -o "$T/odd.out" "$T/odd.ev"
	run -0 bash -c "ev-view -M -H -t send -c bytes '$T/odd.out' | awk '{ s += \$1 } END { print s }'"
	assert_output $((2 * 6 * 1234567))
	run -0 check "$T/odd.out"
}

@test "ring AllReduce with several loops: every message says reduce-scatter or all-gather" {
	# 64 MiB on 4 ranks and 1 channel: 8 loops of 4 x 2 MiB, 6 ring steps each
	mkcoll "$T/a.ev" 4 allreduce 67108864 ring simple float32 1
	coll-expand -o "$T/a.out" "$T/a.ev"
	run -0 bash -c "ev-view -M -H -t send,recv -r 1 -c step,flags '$T/a.out' | awk -F'\t' '{ print (\$1 % 6 < 3 ? \"phase_rs\" : \"phase_ag\") == substr(\$2, 1, 8) }' | sort | uniq -c | sed 's/^ *//'"
	assert_output "192 1"
	run -0 bash -c "ev-view -M -H -t send -r 1 -c step '$T/a.out' | sort -n | tail -1"
	assert_output 47
}

@test "Broadcast and Reduce pipelines: no edge into (out of) the root" {
	mkcoll "$T/b.ev" 5 broadcast 10000000 ring simple float32 4 2
	coll-expand -o "$T/b.out" "$T/b.ev"
	run -0 check "$T/b.out"
	assert_output "sends 80 recvs 80 ok"
	run -0 sent "$T/b.out"
	assert_output - <<'EOF'
0 10000000
2 10000000
3 10000000
4 10000000
EOF
	mkcoll "$T/r.ev" 5 reduce 10000000 ring simple float32 4 3
	coll-expand -o "$T/r.out" "$T/r.ev"
	run -0 sent "$T/r.out"
	assert_output - <<'EOF'
0 10000000
1 10000000
2 10000000
4 10000000
EOF
}

@test "tree AllReduce: one message up and one down per tree edge and chunk" {
	# 2 nodes x 4 ranks: chains inside nodes, heads 0 and 4 linked; channel 0
	# uses tree 0 (root 0), channel 1 the mirrored tree 1 (root 4)
	META='#rank 0 host=a\n#rank 1 host=a\n#rank 2 host=a\n#rank 3 host=a\n#rank 4 host=b\n#rank 5 host=b\n#rank 6 host=b\n#rank 7 host=b\n'
	mkcoll "$T/t.ev" 8 allreduce 8388608 tree simple float32 2
	coll-expand --intra=send -o "$T/t.out" "$T/t.ev"
	run -0 check "$T/t.out"
	# 2 channels x 4 MiB = 8 chunks of 512 KiB; 7 edges x 2 directions
	assert_output "sends 224 recvs 224 ok"
	run -0 bash -c "ev-view -M -H -t send -c rank,peer,flags '$T/t.out' | sort | uniq -c | sed 's/^ *//'"
	assert_output - <<'EOF'
16 0	1	intra|tree_down|synth
8 0	4	tree_down|synth
8 0	4	tree_up|synth
16 1	0	intra|tree_up|synth
16 1	2	intra|tree_down|synth
16 2	1	intra|tree_up|synth
16 2	3	intra|tree_down|synth
16 3	2	intra|tree_up|synth
8 4	0	tree_down|synth
8 4	0	tree_up|synth
16 4	5	intra|tree_down|synth
16 5	4	intra|tree_up|synth
16 5	6	intra|tree_down|synth
16 6	5	intra|tree_up|synth
16 6	7	intra|tree_down|synth
16 7	6	intra|tree_up|synth
EOF
}

@test "send/recv and grouped p2p: every message matched, LL for small intra-node sends" {
	ev-view --pack -o "$T/p.ev" "$FX/p2p.tsv"
	coll-expand -o "$T/p.out" "$T/p.ev"
	run -0 check "$T/p.out"
	assert_output "sends 106 recvs 106 ok"
	run -0 bash -c "ev-view -M -H -t send -r 1 -c proto,bytes,flags '$T/p.out'"
	assert_line --index 0 "$(printf 'll\t0\tintra|synth')"
}

@test "ATLAHS reference, ring SIMPLE 1 MiB, 4 GPUs on 2 nodes, 2 channels: the same messages" {
	need_shared_data
	ev-view --pack -o "$T/r.ev" "$FX/atlahs_simple.tsv"
	coll-expand -o "$T/r.out" "$T/r.ev"
	ev-view -M -H -c type,rank,bytes,peer "$T/r.out" | awk -F'\t' '$1 == "send" || $1 == "recv" { print $1, $2, $3 "b", $4 }' | sort | uniq -c >"$T/ours"
	awk '/^rank/ { r = $2 } { for (i = 1; i <= NF; i++) if ($i == "send" || $i == "recv") print $i, r, $(i + 1), $(i + 3) }' \
		"$SHARED_DATA/goal/reference/v2_allreduce_ring_simple_4gpu_2node_2ch_1MiB.goal" | sort | uniq -c >"$T/theirs"
	diff -u "$T/theirs" "$T/ours"
	# intra-node hops cost 65536 / 300 ns on both sides, as in the reference
	run -0 bash -c "ev-view -M -H -t calc -c op,dur '$T/r.out' | sort | uniq -c | sed 's/^ *//'"
	assert_output "96 intra	218"
}

@test "ATLAHS reference, ring LL 64 KiB, 1 channel: same messages, LL wire bytes doubled" {
	need_shared_data
	ev-view --pack -o "$T/r.ev" "$FX/atlahs_ll.tsv"
	coll-expand -o "$T/r.out" "$T/r.ev"
	ev-view -M -H -c type,rank,bytes,peer "$T/r.out" | awk -F'\t' '$1 == "send" { print $2, $3 / 2 "b", $4 }' | sort | uniq -c >"$T/ours"
	awk '/^rank/ { r = $2 } { for (i = 1; i <= NF; i++) if ($i == "send") print r, $(i + 1), $(i + 3) }' \
		"$SHARED_DATA/goal/reference/v2_allreduce_ring_ll_4gpu_2node_1ch_64KiB.goal" | sort | uniq -c >"$T/theirs"
	diff -u "$T/theirs" "$T/ours"
	run -0 bash -c "ev-view -M -H -t send -c bytes '$T/r.out' | sort -u"
	assert_output - <<'EOF'
0
32768
EOF
}

@test "latency table: linear between points, extrapolated beyond the last two" {
	printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": {"4": [110], "1024": [210], "65536": [1050]}, "NPKIT_EVENT_GPU_DIRECT_RECV_COPY_SEND": {"4": [92.5], "1024": [150], "65536": [810]}, "NPKIT_EVENT_GPU_DIRECT_RECV_REDUCE_COPY_SEND": {"4": [180], "65536": [1900]}}' >"$T/x_Simple.json"
	npkit2lat -o "$T/lat.tsv" "$T/x_Simple.json"
	# n=3 AR, 32 KiB chunks (interpolated), then 128 KiB slices (extrapolated)
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 7 nranks=3 ranks=0,1,2\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\talgo\tproto\tdtype\tchannel\n'
		for r in 0 1 2; do printf 'coll\tallreduce\t%d\t1\t1000\t500\t98304\t7\t0\tring\tll\tfloat32\t1\n' $r; done
		for r in 0 1 2; do printf 'coll\tallreduce\t%d\t1\t2000\t500\t786432\t7\t1\tring\tsimple\tfloat32\t1\n' $r; done
		printf '#end 6\n'
	} >"$T/l.tsv"
	ev-view --pack -o "$T/l.ev" "$T/l.tsv"
	coll-expand --lat "$T/lat.tsv" -o "$T/l.out" "$T/l.ev"
	run -0 ev-view -M -H -t calc -r 0 -c seq,op,bytes,dur "$T/l.out"
	assert_output - <<'EOF'
0	reduce	32768	623
0	reduce	32768	1040
0	copy	32768	475
1	sync	0	0
1	gap	0	500
1	reduce	131072	1903
1	reduce	131072	1903
1	reduce	131072	3620
1	reduce	131072	3620
1	copy	131072	1480
1	copy	131072	1480
EOF
}

@test "same input, same bytes; --jitter is seeded" {
	mkcoll "$T/a.ev" 4 allreduce 1048576 ring simple float32 2
	npkit2lat --proto simple -o "$T/lat.tsv" "$TESTS_DIR/fixtures/npkit2lat/small_Simple.json"
	coll-expand --lat "$T/lat.tsv" -o "$T/1.out" "$T/a.ev"
	coll-expand --lat "$T/lat.tsv" -o "$T/2.out" "$T/a.ev"
	cmp "$T/1.out" "$T/2.out"
	coll-expand --lat "$T/lat.tsv" --jitter 7 -o "$T/j1.out" "$T/a.ev"
	coll-expand --lat "$T/lat.tsv" --jitter 7 -o "$T/j2.out" "$T/a.ev"
	coll-expand --lat "$T/lat.tsv" --jitter 8 -o "$T/j3.out" "$T/a.ev"
	cmp "$T/j1.out" "$T/j2.out"
	run ! cmp -s "$T/j1.out" "$T/j3.out"
	run ! cmp -s "$T/1.out" "$T/j1.out"
	run -0 check "$T/j3.out"
}

@test "gaps between operations of a stream, pass-through, --only-comm, --compute" {
	ev-view --pack -o "$T/g.ev" "$FX/ar2.tsv"
	coll-expand -o "$T/g.out" "$T/g.ev"
	# the stream starts at its first operation (ATLAHS): no CALC for the
	# 900 ns before it unless --lead-in asks for it
	run -0 ev-view -M -H -t calc,kernel -r 0 -c type,op,ts,dur "$T/g.out"
	assert_output - <<'EOF'
kernel	gemm	100	400
calc	sync	3000	0
calc	gap	3000	1500
EOF
	run -0 bash -c "coll-expand -q --lead-in '$T/g.ev' | ev-view -M -H -t calc -r 0 -c op,ts,dur"
	assert_output - <<'EOF'
gap	1000	900
sync	3000	0
gap	3000	1500
EOF
	run -0 --separate-stderr coll-expand -o "$T/g2.out" "$T/g.ev"
	[[ "$stderr" == *"1 stream(s) start at their first operation"* ]]
	run -0 bash -c "coll-expand -q --only-comm '$T/g.ev' | ev-view -M -H -t kernel -c type"
	assert_output ""
	run -0 bash -c "coll-expand -q --compute=kernels --lead-in '$T/g.ev' | ev-view -M -H -t calc -r 0 -c op,dur"
	assert_output - <<'EOF'
kernel	400
sync	0
EOF
	run -0 bash -c "coll-expand -q --compute=kernels '$T/g.ev' | ev-view -M -H -t calc -r 0 -c op,dur"
	assert_output "$(printf 'sync\t0')"
	run -0 bash -c "coll-expand -q --compute=none '$T/g.ev' | ev-view -M -H -t calc -c op | sort -u"
	assert_output sync
	run -0 bash -c "coll-expand -q --keep-coll '$T/g.ev' | ev-view -M -H -t coll -c rank,seq"
	assert_equal "${#lines[@]}" 4
	run -0 bash -c "coll-expand -q '$T/g.ev' | ev-view | grep '^#comm'"
	assert_output "#comm 7 nranks=2 ranks=0,1"
}

@test "channel split per NCCL version; CHAN records are used as recorded" {
	mkcoll "$T/a.ev" 2 allreduce 4000000 ring simple float32 2
	# >= 2.22: continuous byte distribution in 16 KiB cells
	run -0 bash -c "coll-expand -q --nccl-version 2.22 '$T/a.ev' | ev-view -M -H -t send -r 0 -c channel,bytes | awk -F'\t' '{ b[\$1] += \$2 } END { for (c in b) print c, b[c] }' | sort"
	assert_output - <<'EOF'
0 2015232
1 1984768
EOF
	# 2.20-2.21: contiguous, aligned to 4 KiB
	run -0 bash -c "coll-expand -q --nccl-version 2.20.5 '$T/a.ev' | ev-view -M -H -t send -r 0 -c channel,bytes | awk -F'\t' '{ b[\$1] += \$2 } END { for (c in b) print c, b[c] }' | sort"
	assert_output - <<'EOF'
0 2002944
1 1997056
EOF
	# <= 2.19: interleaved grid loop: chunks of roundUp(250000, 1024) elements,
	# channel 0 takes chunks 0-1, channel 1 chunks 2-3 (the last one short)
	run -0 bash -c "coll-expand -q --nccl-version 2.18.3 '$T/a.ev' | ev-view -M -H -t send -r 0 -c channel,bytes | awk -F'\t' '{ b[\$1] += \$2 } END { for (c in b) print c, b[c] }' | sort"
	assert_output - <<'EOF'
0 2007040
1 1992960
EOF
	coll-expand -q --nccl-version 2.18.3 -o "$T/a18.out" "$T/a.ev"
	run -0 check "$T/a18.out"
	# CHAN records: channel 3 with workCount 1000 elements, chunkCount 400
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 7 nranks=2 ranks=0,1\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\talgo\tproto\tdtype\tchannel\taux\tstep\n'
		for r in 0 1; do
			printf 'coll\tallreduce\t%d\t1\t1000\t0\t4000\t7\t0\tring\tsimple\tfloat32\t1\t2\t0\n' $r
			printf 'chan\tallreduce\t%d\t1\t1000\t0\t1000\t7\t0\t-\t-\t-\t3\t400\t100\n' $r
		done
		printf '#end 4\n'
	} >"$T/c.tsv"
	ev-view --pack -o "$T/c.ev" "$T/c.tsv"
	run -0 bash -c "coll-expand -q '$T/c.ev' | ev-view -M -H -t send -r 0 -c channel,bytes | paste -sd' '"
	# loop 1: chunks of 400 elements, loop 2: lastChunkCount 100; SIMPLE posts
	# two slices per ring step, the second one empty here
	assert_output "$(printf '3\t1600 3\t0 3\t1600 3\t0 3\t400 3\t0 3\t400 3\t0')"
}

@test "the chooser picks algorithm, protocol and channels when the trace has none" {
	mkcoll "$T/a.ev" 8 allreduce 1073741824 - - float32 0
	run -0 bash -c "coll-expand -q '$T/a.ev' | ev-view -M -H -t send -r 0 -c algo,proto | sort -u"
	assert_output "$(printf 'ring\tsimple')"
	mkcoll "$T/b.ev" 8 allreduce 4096 - - float32 0
	run -0 bash -c "coll-expand -q --algo ring '$T/b.ev' | ev-view -M -H -t send -r 0 -c algo,proto,channel | sort -u"
	assert_output "$(printf 'ring\tll\t0')"
	run -0 bash -c "coll-expand -q --algo ring --proto simple --nchannels 3 '$T/a.ev' | ev-view -M -H -t send -r 0 -c algo,proto,channel | sort -u | wc -l"
	assert_output 3
	run -0 bash -c "coll-expand -q --proto '^ll,ll128' '$T/b.ev' | ev-view -M -H -t send -r 0 -c proto | sort -u"
	assert_output simple
}

@test "errors: unknown communicator, rank missing from a ring, inconsistent sizes; --lenient" {
	printf '#ev 1.0 96 clock=ns origin=trace\ntype\top\trank\tts\tbytes\tcomm\nkernel\tgemm\t0\t5\t0\t0\ncoll\tallreduce\t0\t10\t64\t99\n#end 2\n' >"$T/u.tsv"
	ev-view --pack -o "$T/u.ev" "$T/u.tsv"
	run -1 coll-expand -o "$T/u.out" "$T/u.ev"
	assert_output "coll-expand: $T/u.ev: record 2: communicator 99 has no #comm line with ranks"
	[ ! -e "$T/u.out" ]
	run -0 --separate-stderr coll-expand --lenient -o "$T/u.out" "$T/u.ev"
	[[ "$stderr" == *"skipped; --lenient"* ]]
	META='#ring 7 0 0 1 3\n'
	mkcoll "$T/r.ev" 3 allreduce 65536 ring simple float32 1
	run -1 coll-expand -o "$T/r.out" "$T/r.ev"
	assert_output --partial "record 1: the ring of communicator 7 channel 0 lists rank 3, which is not a member"
	META='#ring 7 0 0 1 1\n'
	mkcoll "$T/r.ev" 3 allreduce 65536 ring simple float32 1
	run -1 coll-expand -o "$T/r.out" "$T/r.ev"
	assert_output --partial "record 3: rank 2 is missing from the ring of communicator 7 channel 0"
	META=''
	mkcoll "$T/i.ev" 3 allreduce 65536 ring simple float32 1
	sed -i '5s/\t65536\t/\t32768\t/' "$T/i.ev.tsv"
	ev-view --pack -o "$T/i.ev" "$T/i.ev.tsv"
	run -1 coll-expand -o "$T/i.out" "$T/i.ev"
	assert_output --partial "record 2: allreduce seq 0 on communicator 7 has 32768 bytes on rank 1 but 65536 on another rank"
}

@test "out-of-order input names ev-merge; a partial trace is warned about" {
	printf '#ev 1.0 96 clock=ns origin=trace\ntype\trank\tts\nkernel\t0\t50\nkernel\t1\t10\n#end 2\n' >"$T/o.tsv"
	ev-view --pack -o "$T/o.ev" "$T/o.tsv"
	run -1 coll-expand -o "$T/o.out" "$T/o.ev"
	assert_output "coll-expand: $T/o.ev: record 2: out of order (ts 10 after 50); sort with ev-merge --sort"
	mkcoll "$T/p.ev" 3 allreduce 65536 ring simple float32 1
	grep -av $'^\x04\x01\x00\x00\x00\x00\x00\x00\x02' "$T/p.ev" >/dev/null || true
	awk -F'\t' '$3 != 2' "$T/p.ev.tsv" | sed 's/^#end 3/#end 2/' >"$T/q.tsv"
	ev-view --pack -o "$T/q.ev" "$T/q.tsv"
	run -0 --separate-stderr coll-expand -o "$T/q.out" "$T/q.ev"
	[[ "$stderr" == *"1 collectives were seen on fewer ranks than their communicator has"* ]]
}

@test "kineto2ev trace of 8 ranks: expands, every message of complete collectives matched" {
	need_shared_data
	kineto2ev -q -o "$T/k.ev" "$SHARED_DATA"/kineto/aorta-sweep/256thread/nccl_28channels/torch_profiler/rank*/*.json.gz
	run -0 --separate-stderr coll-expand --ranks-per-node 8 --intra=send -o "$T/k.out" "$T/k.ev"
	[[ "$stderr" == *"fewer ranks"* ]]
	# seq 0-9 exist on every rank: their messages must match
	ev-view -M -H -c type,rank,id,peer,aux,bytes,seq "$T/k.out" | awk -F'\t' '$1 == "dep" || $7 < 10' | cut -f1-6 >"$T/k.tsv"
	run -0 awk -f "$FX/check.awk" "$T/k.tsv"
	assert_output --regexp '^sends [0-9]+ recvs [0-9]+ ok$'
	# MI350X: RCCL's gfx950 tables price 4 MiB AllReduce on one node as
	# ring SIMPLE (ring LL128's bandwidth ratio is 0.08; LL128 is off anyway)
	run -0 bash -c "ev-view -M -H -t send -c algo,proto '$T/k.out' | sort -u"
	assert_output "$(printf 'ring\tsimple')"
}

@test "usage errors exit 2" {
	run -2 coll-expand --nccl-version x /dev/null
	run -2 coll-expand --algo bogus /dev/null
	run -2 coll-expand --proto ll,xx /dev/null
	run -2 coll-expand --intra=maybe /dev/null
	run -2 coll-expand --nchannels 65 /dev/null
	run -2 coll-expand --preset cray /dev/null
	assert_output --partial "unknown system 'cray'"
}

# one_coll OUT COMM_LINE RANK BYTES [ALGO] [SEQ]: a stream with one collective record.
one_coll() {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n%s\n' "$2"
		printf 'type\top\trank\tts\tbytes\tcomm\tseq\talgo\tproto\tdtype\tchannel\n'
		printf 'coll\tallreduce\t%s\t10\t%s\t7\t%s\t%s\tsimple\tfloat32\t2\n' "$3" "$4" "${6:-0}" "${5:-ring}"
		printf '#end 1\n'
	} >"$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}

@test "absurd input: a clear error in bounded time, nothing half written" {
	one_coll "$T/r.ev" '#comm 7 nranks=2 ranks=0,100000000' 100000000 64
	run -1 timeout 20 coll-expand -o "$T/r.out" "$T/r.ev"
	assert_output --partial "record 1: rank 100000000 is above the largest rank expanded (1048575)"
	[ ! -e "$T/r.out" ]
	one_coll "$T/r0.ev" '#comm 7 nranks=2 ranks=0,100000000' 0 64
	run -1 timeout 20 coll-expand -o "$T/r.out" "$T/r0.ev"
	assert_output --partial "record 1: communicator 7 lists rank 100000000; ranks above 1048575 are not expanded"
	one_coll "$T/b.ev" '#comm 7 nranks=2 ranks=0,1' 0 9223372036854775807
	run -1 timeout 20 coll-expand -o "$T/b.out" "$T/b.ev"
	assert_output --partial "allreduce of 9223372036854775807 bytes on 2 ranks would expand into about"
	assert_output --partial "(--max-messages)"
	one_coll "$T/c.ev" '#comm 7 nranks=2 ranks=0,1' 0 18000000000000000000 -
	run -1 timeout 20 coll-expand -o "$T/c.out" "$T/c.ev"
	assert_output --partial "would expand into about"
	one_coll "$T/a.ev" '#comm 7 nranks=2 ranks=0,1' 0 64 114
	run -1 timeout 20 coll-expand -o "$T/a.out" "$T/a.ev"
	assert_output --partial "record 1: unknown algorithm 114"
	one_coll "$T/m.ev" "#comm 7 nranks=1000000 ranks=$(seq -s, 0 999999)" 0 1048576
	run -1 timeout 20 coll-expand -o "$T/m.out" "$T/m.ev"
	assert_output --partial "communicator 7 has 1000000 ranks; more than 65536 are not expanded"
	# the bound is an option
	one_coll "$T/s.ev" '#comm 7 nranks=2 ranks=0,1' 0 1048576
	run -1 coll-expand --max-messages 3 -o "$T/s.out" "$T/s.ev"
	assert_output --partial "more than the limit of 3 (--max-messages)"
	run -0 coll-expand -q --max-messages 64 -o "$T/s.out" "$T/s.ev"
	run -2 coll-expand --max-messages 0 "$T/s.ev"
}

@test "a seq jump of 2^32 costs nothing and is said; the size check goes on" {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 7 nranks=2 ranks=0,1\n'
		printf 'type\top\trank\tts\tbytes\tcomm\tseq\talgo\tproto\tdtype\tchannel\n'
		printf 'coll\tallreduce\t0\t10\t64\t7\t0\tring\tsimple\tfloat32\t1\n'
		printf 'coll\tallreduce\t0\t20\t64\t7\t4294967295\tring\tsimple\tfloat32\t1\n'
		printf 'coll\tallreduce\t1\t30\t128\t7\t4294967295\tring\tsimple\tfloat32\t1\n'
		printf '#end 3\n'
	} >"$T/j.tsv"
	ev-view --pack -o "$T/j.ev" "$T/j.tsv"
	run -1 timeout 10 coll-expand -o "$T/j.out" "$T/j.ev"
	assert_line --partial "collective seq jumps from 0 to 4294967295"
	assert_line --partial "record 3: allreduce seq 4294967295 on communicator 7 has 128 bytes on rank 1 but 64 on another rank"
}

# two_comms OUT FIRST SECOND: the same two collectives with the #comm lines in the given order.
two_comms() {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n%s\n%s\n' "$2" "$3"
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\talgo\tproto\tdtype\tchannel\n'
		for r in 0 1 2; do printf 'coll\tallreduce\t%d\t1\t100\t50\t65536\t40\t0\tring\tsimple\tfloat32\t2\n' $r; done
		for r in 0 1 2; do printf 'coll\tallgather\t%d\t1\t300\t50\t3000\t900\t0\tring\tll\tint8\t1\n' $r; done
		printf '#end 6\n'
	} >"$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}

@test "tags come from communicator ids: the same GOAL whatever the order of the inputs" {
	two_comms "$T/a.ev" '#comm 40 nranks=3 ranks=0,1,2' '#comm 900 nranks=3 ranks=0,1,2'
	two_comms "$T/b.ev" '#comm 900 nranks=3 ranks=0,1,2' '#comm 40 nranks=3 ranks=0,1,2'
	coll-expand -q --only-comm -o "$T/a.out" "$T/a.ev"
	coll-expand -q --only-comm -o "$T/b.out" "$T/b.ev"
	cmp <(ev-view -M -H "$T/a.out") <(ev-view -M -H "$T/b.out")
	# communicator 40 has index 0, 900 index 1 (bits 22-31 of the tag)
	run -0 bash -c "ev-view -M -H -t send -c comm,aux '$T/b.out' | awk -F'\t' '{ print \$1, int(\$2 / 4194304) }' | sort -u"
	assert_output - <<'EOF'
40 0
900 1
EOF
	ev2goal -q -o "$T/a.goal" "$T/a.out"
	ev2goal -q -o "$T/b.goal" "$T/b.out"
	cmp "$T/a.goal" "$T/b.goal"
}

# p2p_group OUT HOST1: rank 0 (host a) sends 256 KiB to rank 1 (host HOST1) in
# a group with its receive, 4 recorded parts of 64 KiB (chunkSize 64 KiB).
p2p_group() {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#rank 0 host=a\n#rank 1 host=%s\n#comm 3 nranks=2 ranks=0,1\n' "$2"
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tpeer\tproto\tchannel\taux\n'
		printf 'p2p\tsend\t0\t1\t100\t50\t262144\t3\t0\t1\tsimple\t4\t0\n'
		for c in 0 1 2 3; do printf 'chan\tsend\t0\t1\t100\t0\t65536\t3\t0\t-1\t-\t%d\t65536\n' $c; done
		printf 'p2p\trecv\t1\t1\t100\t50\t262144\t3\t0\t0\tsimple\t4\t0\n'
		for c in 0 1 2 3; do printf 'chan\trecv\t1\t1\t100\t0\t65536\t3\t0\t-1\t-\t%d\t65536\n' $c; done
		printf '#end 10\n'
	} >"$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}

@test "grouped send/recv across and within nodes: the recorded parts, chunk size and channels" {
	for h in a b; do
		p2p_group "$T/$h.ev" "$h"
		coll-expand -q --intra=send -o "$T/$h.out" "$T/$h.ev"
		run -0 check "$T/$h.out"
		assert_output "sends 4 recvs 4 ok"
		run -0 bash -c "ev-view -M -H -t send,recv -c type,channel,bytes '$T/$h.out' | sort"
		assert_output - <<'EOF'
recv	0	65536
recv	1	65536
recv	2	65536
recv	3	65536
send	0	65536
send	1	65536
send	2	65536
send	3	65536
EOF
	done
	# without chan records: NCCL's chunking, channels within the 4 the kernel ran on
	grep -v '^chan' "$T/b.ev.tsv" | sed 's/^#end 10/#end 2/' >"$T/m.tsv"
	ev-view --pack -o "$T/m.ev" "$T/m.tsv"
	coll-expand -q -o "$T/m.out" "$T/m.ev"
	run -0 bash -c "ev-view -M -H -t send -c channel,bytes '$T/m.out' | awk -F'\t' '\$1 >= 4' | wc -l"
	assert_output 0
	run -0 bash -c "ev-view -M -H -t send -c bytes '$T/m.out' | sort -u"
	assert_output 131072
	# parts that do not add up to the size are an error, not a guess
	sed 's/^chan\tsend\t0\t1\t100\t0\t65536/chan\tsend\t0\t1\t100\t0\t1000/' "$T/b.ev.tsv" >"$T/x.tsv"
	ev-view --pack -o "$T/x.ev" "$T/x.tsv"
	run -1 coll-expand -o "$T/x.out" "$T/x.ev"
	assert_output --partial "record 1: the chan records of this send add up to a different size than its 262144 bytes"
}

@test "the preset comes from the device the trace names; every choice is stated" {
	META='#rank 0 gpu=AMD_Instinct_MI250X\n'
	mkcoll "$T/a.ev" 4 allreduce 1048576 - - float32 0
	run -0 --separate-stderr coll-expand -o "$T/a.out" "$T/a.ev"
	[[ "$stderr" == *"NCCL's tuning model chooses them (preset mi250, device)"* ]]
	[[ "$stderr" == *"chose allreduce of 1048576 bytes on 4 ranks, 4 node(s): "*"(algorithm and protocol chosen, preset mi250) [4 operations]"* ]]
	# MI250 has no LL128
	run -0 bash -c "ev-view -M -H -t send -c proto '$T/a.out' | sort -u"
	refute_output ll128
	META=''
	mkcoll "$T/b.ev" 4 allreduce 1048576 ring simple float32 2
	run -0 --separate-stderr coll-expand -o "$T/b.out" "$T/b.ev"
	[[ "$stderr" != *"chose"* ]]
}

@test "members of a communicator without any record are named" {
	mkcoll "$T/p.ev" 3 allreduce 65536 ring simple float32 1
	awk -F'\t' '$3 != 2' "$T/p.ev.tsv" | sed 's/^#end 3/#end 2/' >"$T/q.tsv"
	ev-view --pack -o "$T/q.ev" "$T/q.tsv"
	run -0 --separate-stderr coll-expand -o "$T/q.out" "$T/q.ev"
	[[ "$stderr" == *"communicator 7 (3 ranks): no records of rank 2 (a missing export or trace file?)"* ]]
}

# send_deps FILE RANK CHANNEL: per SEND of that rank and channel, in order,
# "k: ireq=<send index it irequires> req=<send indexes it requires>" where
# an index names the k-th send (an intra CALC counts as its send).
send_deps() {
	ev-view -M -H -r "$2" -c type,id,aux,flags,channel "$1" | awk -F'\t' -v ch="$3" '
		$1 == "send" && $5 == ch { k = n++; of[$2] = k; cur = k; line[k] = k ":"; next }
		$1 == "send" || $1 == "recv" { cur = -1; next }
		$1 == "calc" { if (cur >= 0 && last == "send") of[$2] = cur; last = "calc"; next }
		$1 == "dep" && cur >= 0 && $2 in of && of[$2] == cur && ($3 in of) {
			line[cur] = line[cur] " " ($4 == "ireq" ? "ireq=" : "req=") of[$3] }
		{ if ($1 != "dep") last = $1 }
		$1 == "send" { last = "send" }
		END { for (i = 0; i < n; i++) print line[i] }'
}

@test "a channel's sends go in program order within NCCL's 8-step FIFO, not one delivery at a time" {
	# ring AllReduce SIMPLE, 4 ranks on 4 nodes, 1 channel, 8 MiB: 2 slices
	# of 2 steps per ring step, so 4 sends in flight (8 / sliceSteps)
	mkcoll "$T/s.ev" 4 allreduce 8388608 ring simple float32 1
	coll-expand -o "$T/s.out" "$T/s.ev"
	run -0 check "$T/s.out"
	run -0 send_deps "$T/s.out" 0 0
	assert_line --index 0 "0:"
	assert_line --index 1 "1: ireq=0"
	# send 4 reuses the slot of send 0: it requires it (delivered) and
	# irequires send 3 (posted)
	assert_line --index 4 "4: ireq=3 req=0"
	assert_line --index 5 "5: ireq=4 req=1"
	# the earlier model: each send waits for the previous one's delivery
	coll-expand --sends=serial -o "$T/x.out" "$T/s.ev"
	run -0 send_deps "$T/x.out" 0 0
	assert_line --index 1 "1: req=0"
	assert_line --index 4 "4: req=3"
	run -0 bash -c "ev-view -M -H -t dep -c flags '$T/x.out' | awk '\$1 == \"ireq\" { n++ } END { print n + 0 }'"
	assert_output 0
	# LL: one step per message, 8 in flight
	mkcoll "$T/l.ev" 4 allreduce 1048576 ring ll float32 1
	coll-expand -o "$T/l.out" "$T/l.ev"
	run -0 send_deps "$T/l.out" 0 0
	assert_line --index 7 "7: ireq=6"
	assert_line --index 8 "8: ireq=7 req=0"
	# GOAL: irequires lines, every send of a rank matched
	ev2goal -o "$T/s.goal" "$T/s.out"
	run -0 grep -c ' irequires l' "$T/s.goal"
	[ "$output" -gt 0 ]
	run -2 coll-expand --sends=lazy "$T/s.ev"
	assert_output --partial "--sends: expected fifo or serial, got 'lazy'"
}

@test "latency table: a mean over 2^53 ns is an error naming the line" {
	printf 'primitive\tproto\tsize_bytes\tn\tmean_ns\tp10\tp50\tp90\tmin\tmax\n' >"$T/lat.tsv"
	printf 'RECV_REDUCE_SEND\tsimple\t4\t1\t1e300\t1\t1\t1\t1\t1\n' >>"$T/lat.tsv"
	mkcoll "$T/a.ev" 4 allreduce 1048576 ring simple float32 2
	run -1 coll-expand --lat "$T/lat.tsv" -o "$T/out.ev" "$T/a.ev"
	assert_output "coll-expand: $T/lat.tsv: line 2: mean_ns 1e300 is over 2^53 ns (104 days)"
	[ ! -e "$T/out.ev" ]
}

@test "an MI350X trace gets the mi350x preset (RCCL's gfx950 tables), said as a device choice" {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#rank 0 gpu=AMD_Instinct_MI350X\n#rank 1 gpu=AMD_Instinct_MI350X\n'
		printf '#comm 7 nranks=2 ranks=0,1\ntype\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tdtype\n'
		for r in 0 1; do printf 'coll\tallreduce\t%d\t1\t1000\t500\t1048576\t7\t0\tfloat32\n' $r; done
		printf '#end 2\n'
	} >"$T/g.tsv"
	pack "$T/g.tsv" "$T/g.ev"
	run -0 --separate-stderr coll-expand -o /dev/null "$T/g.ev"
	[[ "$stderr" == *"NCCL's tuning model chooses them (preset mi350x, device)"* ]]
	[[ "$stderr" != *"approximated"* ]]
}


@test "ranks without a host share nodes of the GPUs their process saw (local_gpus), said once" {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n'
		for r in 0 1 2 3; do printf '#rank %d gpu=AMD_Instinct_MI300X local_gpus=2\n' $r; done
		printf '#comm 7 nranks=4 ranks=0,1,2,3\ntype\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tdtype\n'
		for r in 0 1 2 3; do printf 'coll\tallreduce\t%d\t1\t1000\t500\t1048576\t7\t0\tfloat32\n' $r; done
		printf '#end 4\n'
	} >"$T/n.tsv"
	pack "$T/n.tsv" "$T/n.ev"
	run -0 --separate-stderr coll-expand -o /dev/null "$T/n.ev"
	[[ "$stderr" == *"ranks placed on nodes of 2 GPUs (rank / 2), the GPUs each process saw (deviceProperties)"* ]]
	[[ "$stderr" == *"on 4 ranks, 2 node(s)"* ]]
	# --ranks-per-node decides otherwise, and nothing is said
	run -0 --separate-stderr coll-expand --ranks-per-node=4 -o /dev/null "$T/n.ev"
	[[ "$stderr" == *"on 4 ranks, 1 node(s)"* && "$stderr" != *"ranks placed"* ]]
}

@test "--format=goal writes what coll-expand | ev2goal writes, ev2goal's options and --stats included" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour annotated --nodes 2 --gpus 2 --iters 2 "$T/nsys" >/dev/null
	nsys2ev -q -o "$T/in.ev" "$T/nsys"/*.sqlite
	for opts in "" "--binary" "--nic=channel:2 --cpu=lane --keep-sync -w 1024" "--ranks-per-node=4 --nic=rail"; do
		read -r -a o <<<"$opts"
		coll-expand --only-comm --ranks-per-node=4 "$T/in.ev" | ev2goal "${o[@]}" --stats="$T/s1" -o "$T/g1"
		run -0 coll-expand --only-comm --ranks-per-node=4 --format=goal "${o[@]}" --stats="$T/s2" -o "$T/g2" "$T/in.ev"
		cmp "$T/g1" "$T/g2"
		cmp "$T/s1" "$T/s2"
	done
	# The same failure, at the same record of the expansion.
	run -1 --separate-stderr bash -c "coll-expand -q --only-comm '$T/in.ev' | ev2goal -w 64 -o '$T/g1'"
	[[ "$stderr" == "ev2goal: standard input: record "*", which left the window of 64 ops; raise --window" ]]
	want="${stderr#ev2goal: standard input: }"
	run -1 --separate-stderr coll-expand -q --only-comm --format=goal -w 64 -o "$T/g2" "$T/in.ev"
	[ "$stderr" = "coll-expand: $T/in.ev (expanded): $want" ]
	# Without --only-comm, records that pass through are counted as ignored,
	# as ev2goal counts them.
	coll-expand -q "$T/in.ev" | ev2goal -s 2>"$T/s1" -o "$T/g1"
	coll-expand -q --format=goal -s "$T/in.ev" 2>"$T/s2" -o "$T/g2"
	grep -qx $'ignored_records\t[1-9][0-9]*' "$T/s2"
	cmp "$T/g1" "$T/g2"
	cmp "$T/s1" "$T/s2"
}

@test "--format=goal: a schedule that fails ev2goal's checks says so after the inferences; GOAL options need it" {
	mkcoll "$T/p.ev" 3 allreduce 65536 ring simple float32 1
	awk -F'\t' '$3 != 2' "$T/p.ev.tsv" | sed 's/^#end 3/#end 2/' >"$T/q.tsv"
	ev-view --pack -o "$T/q.ev" "$T/q.tsv"
	run -1 --separate-stderr coll-expand --only-comm --format=goal -o "$T/q.goal" "$T/q.ev"
	[ "${stderr_lines[0]}" = "coll-expand: warning: 1 collectives were seen on fewer ranks than their communicator has (a partial trace?): their messages have no partner" ]
	[[ "${stderr_lines[2]}" == "coll-expand: $T/q.ev (expanded): record 4: rank 0: recv from rank 2 tag 0 has no matching send"* ]]
	[ ! -e "$T/q.goal" ]
	run -0 coll-expand --only-comm --format=goal --no-check -o "$T/q.goal" "$T/q.ev"
	[ "$(head -n 1 "$T/q.goal")" = "num_ranks 3" ]
	run -2 coll-expand --nic=channel "$T/q.ev"
	assert_output --partial "coll-expand: --binary, --nic, --cpu, --stats and the other GOAL options need --format=goal"
	run -2 coll-expand --format=goal --keep-coll "$T/q.ev"
	run -2 coll-expand --format=goal --cpu=wide "$T/q.ev"
	assert_output --partial "coll-expand: --cpu: expected dense or lane, got 'wide'"
}
