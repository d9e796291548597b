#!/usr/bin/env bats
# ev2perfetto: Chrome trace-event JSON from ev streams.  Every output is
# checked by tests/fixtures/ev2perfetto/validate.py (JSON, metadata, nesting,
# flows with both ends and unique ids), and the small fixture against a golden.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$TESTS_DIR/fixtures/ev2perfetto"
	pack "$F/small.tsv" "$T/small.ev"
}

validate() {
	python3 "$F/validate.py" "$@"
}

# tsv FILE: rows after a header naming the columns used below.
hdr=$'type\top\trank\tstream\tts\tdur\tbytes\tname\tcomm\tseq\tpeer\tid\tchannel\taux'

@test "small fixture: output equals the golden file" {
	run -0 ev2perfetto -o "$T/small.json" "$T/small.ev"
	diff -u "$F/small.json" "$T/small.json"
}

@test "small fixture: valid trace, processes named and sorted by rank, every kind of flow" {
	ev2perfetto -o "$T/small.json" "$T/small.ev"
	run -0 validate "$T/small.json"
	diff -u "$F/small.summary" <(printf '%s\n' "$output")
}

@test "standard input and a pipe work; output is the same as with a file" {
	ev2perfetto -o "$T/a.json" "$T/small.ev"
	ev2perfetto <"$T/small.ev" >"$T/b.json"
	cmp "$T/a.json" "$T/b.json"
}

@test "-z writes gzip that decompresses to the plain output" {
	ev2perfetto -o "$T/plain.json" "$T/small.ev"
	ev2perfetto -z -o "$T/z.json.gz" "$T/small.ev"
	run -0 gzip -t "$T/z.json.gz"
	cmp "$T/plain.json" <(gzip -dc "$T/z.json.gz")
	run -0 validate "$T/z.json.gz" --gzip
}

@test "-z: a full disk or a file-size limit exits 1 and leaves nothing" {
	run -1 ev2perfetto -z -o /dev/full "$T/small.ev"
	assert_output "ev2perfetto: /dev/full: No space left on device"
	# Enough records that the compressed output passes 1 KiB.
	awk 'BEGIN { print "type\trank\tts\tdur\tname"; for (i = 0; i < 20000; i++) printf "kernel\t%d\t%d\t5\tk%d\n", i % 4, i * 10, i }' >"$T/many.tsv"
	pack "$T/many.tsv" "$T/many.ev"
	run -1 bash -c 'ulimit -f 1; ev2perfetto -z -o "$1/z.json.gz" "$1/many.ev"' _ "$T"
	assert_output "ev2perfetto: $T/z.json.gz: File too large"
	[ -z "$(find "$T" -name '*z.json.gz*')" ]
}

@test "--layout=aorta: GPU pid 1000*rank, CPU pid 1000*rank+500" {
	ev2perfetto --layout=aorta -o "$T/a.json" "$T/small.ev"
	run -0 validate "$T/a.json"
	assert_line "process 0 rank 0 GPU (device 0, nodeA)"
	assert_line "process 500 rank 0 CPU (pid 100, nodeA)"
	assert_line "process 1000 rank 1 GPU (device 1, nodeB)"
	assert_line "process 1500 rank 1 CPU (pid 200, nodeB)"
	run -0 jq -r '[.traceEvents[] | select(.ph == "X") | .pid] | unique | map(tostring) | join(" ")' "$T/a.json"
	assert_output "0 500 1000 1500"
}

@test "--rank-prefix puts [R<rank>] before every slice name" {
	ev2perfetto --rank-prefix -o "$T/a.json" "$T/small.ev"
	run -0 jq -r '.traceEvents[] | select(.ph == "X" or .ph == "i") | .name' "$T/a.json"
	assert_line '[R0] gemm_kernel'
	assert_line '[R1] recv from 0'
	refute_line --regexp '^[^[]'
}

@test "time is relative to the first record by default, absolute on request" {
	ev2perfetto -o "$T/r.json" "$T/small.ev"
	ev2perfetto --time=absolute -o "$T/a.json" "$T/small.ev"
	run -0 jq -r '[.traceEvents[] | select(.ph == "X")][0] | "\(.ts) \(.dur)"' "$T/r.json"
	assert_output "0 20"
	run -0 jq -r '[.traceEvents[] | select(.ph == "X")][0] | "\(.ts) \(.dur)"' "$T/a.json"
	assert_output "1 20"
	run -0 jq -r '.otherData.ts_base_ns' "$T/r.json"
	assert_output "1000"
	# Large absolute times keep every nanosecond: exact decimal text.
	printf '%s\nkernel\tgemm\t0\t1\t1765217844837674381\t1001\t0\tk\t0\t0\t-1\t0\t0\t0\n' "$hdr" >"$T/big.tsv"
	pack "$T/big.tsv" "$T/big.ev"
	run -0 ev2perfetto --time=absolute "$T/big.ev"
	assert_output --partial '"ts":1765217844837674.381,"dur":1.001'
}

@test "collective args: bytes, comm (as text), seq, algo, proto, dtype, op signature" {
	ev2perfetto -o "$T/a.json" "$T/small.ev"
	run -0 jq -c '[.traceEvents[] | select(.cat == "coll")][0].args' "$T/a.json"
	assert_output '{"rank":0,"bytes":1048576,"comm":"77","seq":0,"algo":"ring","proto":"ll","dtype":"float32","redop":"sum","nranks":2,"channels":2,"kernel":"ncclKernel_AllReduce_RING_LL_Sum_float","op":"dist.all_reduce"}'
}

@test "flows link send to recv across ranks even when the recv comes first" {
	{
		echo "$hdr"
		# rank 1 posts its recv before rank 0 sends; two messages on channel 3.
		printf 'recv\tallreduce\t1\t0\t100\t50\t8\t\t5\t0\t0\t0\t3\t0\n'
		printf 'send\tallreduce\t0\t0\t120\t10\t8\t\t5\t0\t1\t0\t3\t0\n'
		printf 'send\tallreduce\t0\t0\t140\t10\t8\t\t5\t0\t1\t0\t3\t0\n'
		printf 'recv\tallreduce\t1\t0\t160\t50\t8\t\t5\t0\t0\t0\t3\t0\n'
		# a send nobody receives: no flow, no dangling end
		printf 'send\tallreduce\t0\t0\t300\t10\t8\t\t5\t0\t2\t0\t3\t0\n'
	} >"$T/m.tsv"
	pack "$T/m.tsv" "$T/m.ev"
	ev2perfetto -o "$T/m.json" "$T/m.ev"
	run -0 validate "$T/m.json"
	assert_line "flows message=2"
	# Both flows start on rank 0 (pid 0) and end on rank 1 (pid 2), first send -> first recv;
	# each leaves at the send's start and lands then (receive already posted)
	# or when the receive is posted.
	run -0 jq -r '.traceEvents[] | select(.ph == "s" or .ph == "f") | "\(.id) \(.ph) \(.pid) \(.ts)"' "$T/m.json"
	assert_output - <<'EOF'
1 s 0 0.02
1 f 2 0.02
2 s 0 0.04
2 f 2 0.06
EOF
}

@test "each collective is chained across its ranks with flow ids unique in the trace" {
	{
		echo "$hdr"
		for seq in 0 1; do
			for r in 0 1 2 3; do
				printf 'coll\tallreduce\t%d\t4\t%d\t100\t64\tk\t9\t%d\t-1\t0\t1\t4\n' "$r" $((seq * 1000 + r * 10)) "$seq"
			done
		done
	} >"$T/c.tsv"
	pack "$T/c.tsv" "$T/c.ev"
	ev2perfetto -o "$T/c.json" "$T/c.ev"
	run -0 validate "$T/c.json"
	assert_line "flows collective=6"
	run -0 jq -r '[.traceEvents[] | select(.ph == "s" or .ph == "f")] | group_by(.id) | map(map(.pid) | join(">")) | join(" ")' "$T/c.json"
	assert_output "0>2 2>4 4>6 0>2 2>4 4>6"
}

@test "overlapping slices on one stream go to an extra track; beyond 8 they are clipped" {
	{
		echo "$hdr"
		for i in 0 1 2 3 4 5 6 7 8 9; do
			printf 'kernel\tgemm\t0\t7\t%d\t100\t0\tk%d\t0\t0\t-1\t0\t0\t0\n' $((i * 10)) "$i"
		done
	} >"$T/o.tsv"
	pack "$T/o.tsv" "$T/o.ev"
	run --separate-stderr -0 ev2perfetto -o "$T/o.json" "$T/o.ev"
	assert_equal "$stderr" "ev2perfetto: warning: 2 slices clipped: more than 8 overlapping slices on one stream"
	run -0 validate "$T/o.json"
	run -0 jq -r '.traceEvents[] | select(.name == "thread_name") | .args.name' "$T/o.json"
	assert_line "stream 7"
	assert_line "stream 7 #8"
	refute_line "stream 7 #9"
	run -0 jq -r '.traceEvents[] | select(.name == "k9") | "\(.dur) \(.args.clipped_from_ns)"' "$T/o.json"
	assert_output "0.01 100"
}

@test "counters: kernels running and bytes in flight per rank" {
	ev2perfetto -o "$T/a.json" "$T/small.ev"
	run -0 jq -r '.traceEvents[] | select(.ph == "C" and .pid == 0 and .name == "kernels") | "\(.ts) \(.args.running)"' "$T/a.json"
	assert_output - <<'EOF'
2 1
4 2
5 3
6 2
7 0
EOF
	run -0 jq -r '.traceEvents[] | select(.ph == "C" and .pid == 0 and .name == "comm in flight") | "\(.ts) \(.args.bytes)"' "$T/a.json"
	assert_output - <<'EOF'
5 1048576
7 0
8 1024
8.5 0
EOF
}

@test "--no-flows and --no-counters leave them out (counter records of the input stay)" {
	ev2perfetto --no-flows --no-counters -o "$T/a.json" "$T/small.ev"
	run -0 validate "$T/a.json"
	assert_line "phases C=1 M=30 X=20 i=1"
	assert_line "flows "
}

@test "records out of time order: exit 1 naming ev-merge, no output" {
	printf '%s\nkernel\tgemm\t0\t1\t500\t10\t0\tk\t0\t0\t-1\t0\t0\t0\nkernel\tgemm\t1\t1\t400\t10\t0\tk\t0\t0\t-1\t0\t0\t0\n' "$hdr" >"$T/u.tsv"
	pack "$T/u.tsv" "$T/u.ev"
	run -1 ev2perfetto -o "$T/u.json" "$T/u.ev"
	assert_output "ev2perfetto: $T/u.ev: record 2: out of order (ts 400 after 500); sort with ev-merge --sort"
	[ ! -e "$T/u.json" ]
	# ev-merge --sort repairs it.
	ev-merge --sort "$T/u.ev" | ev2perfetto -o "$T/u.json"
	run -0 validate "$T/u.json"
}

@test "several inputs are read in turn; a stream with no records is an empty timeline" {
	printf '%s\n' "$hdr" >"$T/e.tsv"
	pack "$T/e.tsv" "$T/e.ev"
	run -0 ev2perfetto "$T/e.ev"
	assert_output - <<'EOF'
{"traceEvents":[
],
"displayTimeUnit":"ns",
"otherData":{"producer":"ev2perfetto (evkit) 0.1.0","time":"relative","ts_base_ns":"0","records":0,"flows":0}}
EOF
	ev2perfetto -o "$T/two.json" "$T/e.ev" "$T/small.ev"
	ev2perfetto -o "$T/one.json" "$T/small.ev"
	cmp "$T/one.json" "$T/two.json"
}

@test "bad option values are usage errors" {
	run -2 ev2perfetto --layout=nope "$T/small.ev"
	assert_output --partial "--layout: expected rank or aorta"
	run -2 ev2perfetto --time=later "$T/small.ev"
	run -2 ev2perfetto --max-pending=x "$T/small.ev"
}

@test "the validator itself rejects broken traces" {
	printf '{"traceEvents":[{"ph":"s","id":1,"pid":1,"tid":1,"ts":1}],"otherData":{}}' >"$T/b1.json"
	run -1 validate "$T/b1.json"
	assert_output --partial "flow 1: ends ['s']"
	printf '{"traceEvents":[%s,%s,%s,%s],"otherData":{}}' \
		'{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}}' \
		'{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}}' \
		'{"ph":"X","name":"a","cat":"c","pid":1,"tid":1,"ts":0,"dur":10}' \
		'{"ph":"X","name":"b","cat":"c","pid":1,"tid":1,"ts":5,"dur":10}' >"$T/b2.json"
	run -1 validate "$T/b2.json"
	assert_output --partial "overlaps its parent"
	assert_output --partial "no process_name or process_sort_index"
}

@test "memory does not grow with the number of events" {
	gen() { # gen N: N kernels and launches on 4 ranks, in time order
		awk -v n="$1" 'BEGIN { OFS = "\t"; print "type", "op", "rank", "stream", "ts", "dur", "name", "id", "comm", "seq", "aux", "bytes";
			for (i = 0; i < n; i++) { r = i % 4; t = i * 100;
				print "api", "runtime", r, 1, t, 20, "launch", i + 1, 0, 0, 0, 0
				print "kernel", "gemm", r, 7, t + 30, 150, "k" (i % 50), i + 1, 0, 0, 0, 0
				if (i % 10 == 0) print "coll", "allreduce", r, 8, t + 40, 50, "nccl", 0, 5, int(i / 40), 4, 4096 } }' |
			ev-view --pack
	}
	gen 20000 >"$T/s.ev"
	gen 200000 >"$T/l.ev"
	/usr/bin/time -f %M -o "$T/s.rss" ev2perfetto -o /dev/null "$T/s.ev"
	/usr/bin/time -f %M -o "$T/l.rss" ev2perfetto -o /dev/null "$T/l.ev"
	small=$(tail -n 1 "$T/s.rss") large=$(tail -n 1 "$T/l.rss")
	echo "# peak RSS: $small KiB for 20k, $large KiB for 200k" >&3
	[ "$large" -lt $((small + 2048)) ]
}

@test "shared data: the aorta 8-rank trace becomes one valid timeline" {
	need_shared_data
	d="$SHARED_DATA/kineto/aorta-sweep/256thread/nccl_28channels/torch_profiler"
	kineto2ev -q "$d"/rank*/*.json.gz | ev2perfetto -z -o "$T/aorta.json.gz"
	run -0 validate "$T/aorta.json.gz" --gzip
	assert_line "flows collective=78 launch=570"
	assert_line "process 0 rank 0 GPU (device 0)"
	assert_line "process 15 rank 7 CPU (pid 258)"
	# Collective flows join different ranks; launch flows stay in their rank.
	run -0 jq -r '[.traceEvents[] | select(.cat == "collective")] | group_by(.id) | map(select(.[0].pid == .[1].pid)) | length' <(gzip -dc "$T/aorta.json.gz")
	assert_output 0
	run -0 jq -r '[.traceEvents[] | select(.cat == "launch")] | group_by(.id) | map(select((.[0].pid / 2 | floor) != (.[1].pid / 2 | floor))) | length' <(gzip -dc "$T/aorta.json.gz")
	assert_output 0
}

@test "flows go forward in time, also from a long slice to a short one; skewed messages are counted" {
	{
		echo "$hdr"
		# rank 0's long allreduce starts first, rank 1's short one ends before
		# rank 0's middle: a midpoint-to-midpoint arrow would go backwards.
		printf 'coll\tallreduce\t0\t4\t100\t1000\t8\t\t5\t0\t-1\t0\t0\t2\n'
		printf 'coll\tallreduce\t1\t4\t110\t20\t8\t\t5\t0\t-1\t0\t0\t2\n'
		# a receive that ended before its send started (unaligned clocks).
		printf 'recv\tallreduce\t1\t0\t200\t10\t8\t\t5\t0\t0\t0\t3\t0\n'
		printf 'send\tallreduce\t0\t0\t300\t10\t8\t\t5\t0\t1\t0\t3\t0\n'
	} >"$T/c.tsv"
	pack "$T/c.tsv" "$T/c.ev"
	run -0 ev2perfetto -o "$T/c.json" "$T/c.ev"
	assert_output --partial "1 message and 0 p2p flows: the receive ended before its send started"
	run -0 validate "$T/c.json"
	assert_line "flows collective=1 message=1"
	run -0 jq -r '.traceEvents[] | select(.ph == "s" or .ph == "f") | "\(.cat) \(.ph) \(.pid) \(.ts)"' "$T/c.json"
	assert_output - <<'EOF'
collective s 0 0
collective f 2 0.01
message s 2 0.109
message f 0 0.2
EOF
}

@test "--max-events: a file too big is refused with its estimate before writing; a pipe stops at the limit" {
	awk 'BEGIN { OFS = "\t"; print "type", "rank", "ts", "dur", "name"; for (i = 0; i < 3000; i++) print "kernel", 0, i * 10, 5, "k" }' >"$T/k.tsv"
	pack "$T/k.tsv" "$T/k.ev"
	run -1 ev2perfetto --max-events=1000 -o "$T/k.json" "$T/k.ev"
	assert_output --partial "the timeline would have about 6000 trace events"
	assert_output --partial "more than --max-events=1000"
	[ ! -e "$T/k.json" ]
	run -1 bash -c 'cat "$1" | ev2perfetto --max-events=1000 -o "$2"' _ "$T/k.ev" "$T/k.json"
	assert_output --partial "more than --max-events=1000 trace events; stopped"
	[ ! -e "$T/k.json" ]
	run -0 ev2perfetto --max-events=0 -o "$T/k.json" "$T/k.ev"
	run -0 ev2perfetto -o "$T/k.json" "$T/k.ev"
	run -2 ev2perfetto --max-events=many "$T/k.ev"
}

@test "gzip output is refused on a terminal, also through -o /dev/stdout" {
	command -v script >/dev/null || skip "script(1) not installed"
	run -1 script -qec "ev2perfetto -z $T/small.ev" /dev/null
	assert_output --partial "refusing to write gzip output to a terminal"
	run -0 script -qec "ev2perfetto -z -o /dev/stdout $T/small.ev; echo rc=\$?" /dev/null
	assert_output --partial "refusing to write gzip output to a terminal"
	assert_output --partial "rc=1"
}
