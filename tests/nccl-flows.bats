#!/usr/bin/env bats
# pipelines/nccl-flows: the NCCL_GP flow extractor's files from a trace, with
# real message sizes and stages.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$TESTS_DIR/fixtures/nccl-flows"
	CHECK="$F/check.py"
}

# mkrun DIR RANK...: a run with one small Kineto trace per rank.
mkrun() {
	local dir="$1" r
	shift
	for r in "$@"; do
		mkdir -p "$dir/torch_profiler/rank$r"
		sed "s/\"rank\": 1,/\"rank\": $r,/" "$TESTS_DIR/fixtures/kineto2ev/small.json" >"$dir/torch_profiler/rank$r/trace.json"
	done
}

# One 2-rank Kineto run, converted once (-j 1) for the file: the tests read
# KRUN and KA and write only copies (see "inputs untouched").
setup_file() {
	export KRUN="$BATS_FILE_TMPDIR/run" KA="$BATS_FILE_TMPDIR/a"
	mkrun "$KRUN" 0 1
	(cd "$KRUN" && find . -type f -exec sha256sum {} + | sort) >"$BATS_FILE_TMPDIR/run.sha"
	nccl-flows -q -j 1 -o "$KA" "$KRUN" >"$BATS_FILE_TMPDIR/a.log" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/a.log" >&2
		echo "setup_file: nccl-flows -j 1 on the Kineto run failed" >&2
		return 1
	}
}

@test "--help prints usage and the exit status table" {
	run -0 --separate-stderr nccl-flows --help
	assert_line --index 0 "Usage: nccl-flows [options] -o OUT_DIR INPUT..."
	assert_output --partial "Exit status:"
	[ -z "$stderr" ]
}

@test "usage errors exit 2 with a hint" {
	run -2 nccl-flows "$T"
	assert_output --partial "an output directory is required"
	assert_output --partial "Try 'nccl-flows --help'."
	run -2 nccl-flows -o "$T/o"
	assert_output --partial "no input given"
	run -2 nccl-flows -o "$T/o" -j x "$T"
	assert_output --partial "--jobs: not a positive number"
	run -2 nccl-flows --no-such-option
	mkdir -p "$T/m"
	: >"$T/m/a.json"
	: >"$T/m/b.ev"
	run -2 nccl-flows -o "$T/o" "$T/m/a.json" "$T/m/b.ev"
	assert_output --partial "inputs mix"
	[ ! -e "$T/o" ]
}

@test "missing inputs, directories without traces and traces without NCCL exit 1" {
	run -1 nccl-flows -o "$T/o" "$T/nosuch.sqlite"
	assert_output "nccl-flows: $T/nosuch.sqlite: No such file or directory"
	mkdir -p "$T/empty"
	run -1 nccl-flows -o "$T/o" "$T/empty"
	assert_output --partial "no Nsight Systems export or PyTorch profiler trace found"
	printf 'type\top\trank\tts\tdur\tname\nkernel\tgemm\t0\t10\t5\tk\n' | ev-view --pack -o "$T/k.ev"
	run -1 nccl-flows -q -o "$T/o" "$T/k.ev"
	assert_output "nccl-flows: the trace has no NCCL operations to expand"
	[ -z "$(ls -A "$T/o" 2>/dev/null)" ]
}

@test "nsys export: every send has its receive, ring bytes are 2(n-1)/n B, files agree" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 4 --iters 1 "$T/nsys"
	run -0 nccl-flows -q -o "$T/out" "$T/nsys"
	assert_output ""
	run -0 ls "$T/out"
	assert_output - <<'EOF'
flow_rank0.json
flow_rank1.json
flow_rank2.json
flow_rank3.json
flow_steps_rank0.jsonl
flow_steps_rank1.jsonl
flow_steps_rank2.jsonl
flow_steps_rank3.jsonl
proxy_flow_rank0.jsonl
proxy_flow_rank1.jsonl
proxy_flow_rank2.jsonl
proxy_flow_rank3.jsonl
EOF
	run -0 python3 "$CHECK" "$T/out"
	assert_line --index 0 "ranks 4 messages 1036 unmatched 0"
	# Ring AllReduce of 4 MiB (Simple): 2(n-1)/n * B = 6 MiB from each rank.
	for r in 0 1 2 3; do assert_line "op 0 allreduce rank $r sends 6291456"; done
	# AllGather of 1 MiB in total: (n-1)/n * 1 MiB; ReduceScatter 256 KiB: 3/4 of it.
	assert_line "op 2 allgather rank 3 sends 786432"
	assert_line "op 3 reducescatter rank 1 sends 196608"
	# Broadcast (LL, 512 KiB, root 0, 2 channels): wire bytes are twice the data;
	# the root sends on both channels, the last rank of each ring on none.
	assert_line "op 4 broadcast rank 0 sends 1048576"
	assert_line "op 4 broadcast rank 1 sends 524288"
	# The first message of rank 0: the fields of the extractor and more.
	run -0 head -n 1 "$T/out/flow_steps_rank0.jsonl"
	assert_output '{"opCount":0,"comm":"7842389","rank":0,"channel":0,"step":0,"op":"SEND","peer":1,"bytes":65536,"pattern":"RING_TWICE","protocol":"SIMPLE","stage":"reduce-scatter","evkitStage":"reduce-scatter","algorithm":"RING","collective":"allreduce","algStep":0}'
	run -0 head -n 1 "$T/out/proxy_flow_rank0.jsonl"
	assert_output '{"opCount":0,"comm":"7842389","rank":0,"channel":0,"nsteps":96,"nbytes":262144,"chunkSize":524288,"sliceSteps":2,"chunkSteps":4,"dtype":7,"redOp":0,"pattern":"RING_TWICE","protocol":"SIMPLE","ringPrev":3,"ringNext":1,"collective":"allreduce","algorithm":"RING","nsends":48,"nrecvs":48,"sendBytes":3145728,"recvBytes":3145728,"algoSource":"trace"}'
	# Channel 1 follows its own ring (0 3 2 1).
	run -0 jq -c 'select(.opCount == 0 and .channel == 1 and .collective == "allreduce") | [.ringPrev, .ringNext]' "$T/out/proxy_flow_rank0.jsonl"
	assert_output "[1,3]"
	# Patterns and stages of every collective kind: the extractor's stage
	# (ring outside RING_TWICE) and evkit's finer one.
	run -0 bash -c 'jq -r "[.collective, .pattern, .stage, .evkitStage] | @tsv" "$1"/flow_steps_rank*.jsonl | sort -u' _ "$T/out"
	assert_output - <<'EOF'
allgather	RING	ring	allgather
allreduce	RING_TWICE	allgather	allgather
allreduce	RING_TWICE	reduce-scatter	reduce-scatter
allreduce	TREE_UP_DOWN	ring	tree-down
allreduce	TREE_UP_DOWN	ring	tree-up
broadcast	PIPELINE_FROM	ring	broadcast
reduce	PIPELINE_TO	ring	reduce
reducescatter	RING	ring	reduce-scatter
sendrecv	SEND_RECV	ring	p2p
EOF
	# The grouped send/recv follows the parts the trace recorded: per rank
	# and direction 2 parts of 128 KiB on channels 0 and 1, one message each.
	run -0 bash -c 'jq -r "select(.collective == \"sendrecv\" and .op == \"SEND\") | [.channel, .bytes] | @tsv" "$1"/flow_steps_rank0.jsonl | sort | uniq -c | sed "s/^ *//"' _ "$T/out"
	assert_output - <<'EOF'
1 0	131072
1 1	131072
EOF
}

@test "stages alternate with several loops; tails and 0-byte slices are real sizes" {
	pack "$F/loops.tsv" "$T/loops.ev"
	run -0 nccl-flows -q -o "$T/out" "$T/loops.ev"
	run -0 python3 "$CHECK" "$T/out"
	assert_line --index 0 "ranks 4 messages 432 unmatched 0"
	# 20 MiB ring AllReduce, 1 channel, 2 MiB chunks: 3 loops, each a
	# reduce-scatter then an allgather (the extractor splits at nsteps/2).
	run -0 bash -c 'jq -r "select(.opCount == 0 and .op == \"SEND\") | .stage" "$1" | uniq -c | awk "{ print \$1, \$2 }"' _ "$T/out/flow_steps_rank0.jsonl"
	assert_output - <<'EOF'
6 reduce-scatter
6 allgather
6 reduce-scatter
6 allgather
6 reduce-scatter
6 allgather
EOF
	# nsteps = 2(n-1) * loops * chunkSteps; one message per slice (sliceSteps 2).
	run -0 jq -c 'select(.opCount == 0) | [.nsteps, .nsends, .sendBytes, .nbytes]' "$T/out/proxy_flow_rank0.jsonl"
	assert_output "[72,36,31457280,1048576]"
	# LL: 64 KiB AllReduce, wire bytes 2 x 3/4 x 64 KiB; avg reduces as sum.
	run -0 jq -c 'select(.opCount == 1) | [.protocol, .sendBytes, .redOp, .chunkSize]' "$T/out/proxy_flow_rank0.jsonl"
	assert_output '["LL",196608,0,32768]'
	# 1000 bytes: the messages carry what is there (a 232-byte tail, 0-byte
	# second slices), not the 1 MiB capacity; all ranks together send 2(n-1)B.
	run -0 bash -c 'jq -r "select(.opCount == 2 and .op == \"SEND\") | .bytes" "$1"/flow_steps_rank*.jsonl | sort -n | uniq -c | awk "{ print \$1, \$2 }"' _ "$T/out"
	assert_output - <<'EOF'
24 0
6 232
18 256
EOF
	run -0 bash -c 'jq -s "map(select(.opCount == 2) | .sendBytes) | add" "$1"/proxy_flow_rank*.jsonl' _ "$T/out"
	assert_output 6000
}

@test "Kineto run: parallel conversion gives the same files; inputs untouched; reruns idempotent" {
	# setup_file ran nccl-flows -q -j 1 on KRUN into KA.
	run -0 nccl-flows -q -j 2 -k -o "$T/b" "$KRUN/torch_profiler/rank1/trace.json" "$KRUN/torch_profiler/rank0/trace.json"
	(cd "$KRUN" && find . -type f -exec sha256sum {} + | sort) >"$T/after"
	cmp "$BATS_FILE_TMPDIR/run.sha" "$T/after"
	for f in "$KA"/*; do cmp "$f" "$T/b/${f##*/}"; done
	run -0 python3 "$CHECK" "$KA"
	assert_line --index 0 "ranks 2 messages 16 unmatched 0"
	# LL AllReduce of 4 KiB (NCCL < 2.22 chunking: one rank's chunk holds
	# all 1024 elements): 2 x 4 KiB of wire bytes from each rank.
	assert_line "op 0 allreduce rank 0 sends 8192"
	assert_line "op 1 allgather rank 1 sends 1024"
	# -k keeps the merged trace and the expansion: 8 sends, 8 receives.
	run -0 bash -c 'ev-view -M -H -c type -t send,recv "$1" | sort | uniq -c | awk "{ print \$2, \$1 }"' _ "$T/b/ev/flows.ev"
	assert_output - <<'EOF'
recv 8
send 8
EOF
	run -0 ev-view -M -H -c rank -t kernel "$T/b/ev/trace.ev"
	[ "${#lines[@]}" -gt 0 ]
	# A rerun into the same directory gives the same bytes, and a run with
	# fewer ranks leaves no stale rank files behind.
	cp -r "$KA" "$T/a"
	run -0 nccl-flows -q -o "$T/a" "$KRUN"
	diff -r "$KA" "$T/a"
	mkrun "$T/one" 0
	run -0 nccl-flows -q -o "$T/a" "$T/one"
	run -0 ls "$T/a"
	assert_output - <<'EOF'
flow_rank0.json
flow_steps_rank0.jsonl
proxy_flow_rank0.jsonl
EOF
}

@test "a bad input fails, and the previous flow files stay as they were" {
	# The previous flow files: a copy of setup_file's.
	cp -r "$KA" "$T/out"
	kineto2ev -q -o "$T/t.ev" "$KRUN/torch_profiler/rank0/trace.json"
	head -c 1500 "$T/t.ev" >"$T/cut.ev"
	run -1 nccl-flows -q -o "$T/out" "$T/cut.ev"
	assert_output --partial "cut.ev"
	diff -r "$KA" "$T/out"
}

@test "shared data: an 8-rank aorta configuration" {
	need_shared_data
	run -0 nccl-flows -q -j 2 -o "$T/out" "$SHARED_DATA/kineto/aorta-sweep/256thread/nccl_28channels"
	run -0 python3 "$CHECK" "$T/out"
	# The trace stops in the middle of two collectives (coll-expand warns
	# with -q off): their messages are the unmatched ones.  The 8 ranks
	# share one node (each process saw 8 MI350X GPUs: the mi350x preset,
	# whose RCCL tables choose ring SIMPLE: two slices a step, so twice the
	# messages of the LL128 the MI300X approximation chose).
	assert_line --index 0 "ranks 8 messages 161280 unmatched 3584"
	run -0 bash -c 'jq -r ".pattern" "$1"/flow_steps_rank*.jsonl | sort | uniq -c | awk "{ print \$2, \$1 }"' _ "$T/out"
	assert_output --regexp '^(RING_TWICE|TREE_UP_DOWN) [0-9]+'
}

@test "guessed algorithms and protocols are stated on stderr and marked in the proxy lines" {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#rank 0 gpu=AMD_Instinct_MI300X\n#comm 7 nranks=2 ranks=0,1\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tdtype\n'
		for r in 0 1; do printf 'coll\tallreduce\t%d\t1\t1000\t500\t1048576\t7\t0\tfloat32\n' $r; done
		printf '#end 2\n'
	} >"$T/g.tsv"
	pack "$T/g.tsv" "$T/g.ev"
	run -0 --separate-stderr nccl-flows -o "$T/out" "$T/g.ev"
	[[ "$stderr" == *"NCCL's tuning model chooses them (preset mi300x, device)"* ]]
	[[ "$stderr" == *"coll-expand: warning: chose allreduce of 1048576 bytes on 2 ranks"*"[2 operations]"* ]]
	run -0 bash -c 'jq -r .algoSource "$1"/proxy_flow_rank*.jsonl | sort -u' _ "$T/out"
	assert_output model
	# A stream converted here is named by the inputs, not its temporary path.
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour stock --nodes 1 --gpus 2 --iters 1 "$T/nsys" >/dev/null
	run -0 --separate-stderr nccl-flows -o "$T/out2" "$T/nsys"/*.sqlite
	[[ "$stderr" == *"coll-expand: warning: $T/nsys/nsys_nid000000.sqlite (converted): the trace does not say"* ]]
	[[ "$stderr" != *nccl-flows.*/all.ev* ]]
}

@test "symlinked exports, gzipped ones included, and symlinked folders are read like the files" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 2 --gpus 2 --iters 1 "$T/real" >/dev/null
	nccl-flows -q -o "$T/ref" "$T/real"
	mkdir "$T/gz" "$T/links" "$T/outer"
	for f in "$T"/real/*.sqlite; do
		gzip -c "$f" >"$T/gz/${f##*/}.gz"
		ln -s "$T/gz/${f##*/}.gz" "$T/links/"
	done
	ln -s "$T/real" "$T/dirlink"
	ln -s "$T/links" "$T/outer/run"
	for d in links dirlink outer; do
		run -0 nccl-flows -q -o "$T/out-$d" "$T/$d"
		diff -r "$T/ref" "$T/out-$d"
	done
}

@test "an export that is missing (a symlink to nothing) is named, not left out" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 2 --gpus 2 --iters 1 "$T/real" >/dev/null
	mkdir "$T/in"
	cp "$T/real/nsys_nid000000.sqlite" "$T/in/"
	ln -s "$T/real/gone.sqlite" "$T/in/nsys_nid000001.sqlite"
	run -1 nccl-flows -q -e --lenient -o "$T/out" "$T/in"
	assert_output "nccl-flows: $T/in/nsys_nid000001.sqlite: No such file or directory"
	[ ! -e "$T/out" ]
}

# The one line a stock export written without NCCL's payload values gets.
no_payloads() {
	printf "nccl-flows: %s: exported without NCCL's payload values (no communicator, size or peer for any NCCL call): re-export the report with 'nsys export --type sqlite --include-blobs=true REPORT.nsys-rep', or give --nccl-log=FILE with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output" "$1"
}

@test "shared data: an export without NCCL payload values stops at nsys2ev with the fix, no output" {
	need_shared_data
	x="$SHARED_DATA/nsys/nsysai_mfu_2gpu_before.sqlite"
	run -1 nccl-flows -q -o "$T/out" "$x"
	assert_output "$(no_payloads "$x")"
	# without -q: the progress line, then the same one reason
	run -1 nccl-flows -o "$T/out" "$x"
	assert_output - <<OUT
nccl-flows: converting 1 Nsight Systems export(s)
$(no_payloads "$x")
OUT
	[ ! -e "$T/out" ]
}

@test "an export without NCCL payload values: the advice given works" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour stock --no-blobs --nccl-log "$T/nccl.log" --nodes 1 --gpus 2 --iters 1 "$T/nsys" >/dev/null
	run -1 nccl-flows -q -o "$T/out" "$T/nsys"
	assert_output "$(no_payloads "$T/nsys/nsys_nid000000.sqlite")"
	run -0 nccl-flows -q --nccl-log="$T/nccl.log" -o "$T/out" "$T/nsys"
	run -0 python3 "$CHECK" "$T/out"
	assert_line --index 0 --regexp '^ranks 2 messages [1-9][0-9]* unmatched 0$'
	# nsys2ev's warnings are passed on without -q
	run -0 --separate-stderr nccl-flows --nccl-log="$T/nccl.log" -o "$T/out" "$T/nsys"
	[[ "$stderr" == *"nsys2ev: warning: $T/nsys/nsys_nid000000.sqlite: NCCL operations without annotated info: "* ]]
}

# same_words DIR: per message whose pattern or collective is not that of
# its proxy line (same opCount, comm, channel, p2p or not), one line; then
# "messages N".
same_words() {
	python3 - "$1" <<'PY'
import glob, json, sys
n = 0
for p in sorted(glob.glob(sys.argv[1] + "/proxy_flow_rank*.jsonl")):
    key = lambda o: (o["opCount"], o["comm"], o["channel"], o["algorithm"] == "P2P")
    words = {key(o): (o["pattern"], o["collective"]) for o in map(json.loads, open(p))}
    for o in map(json.loads, open(p.replace("proxy_flow_", "flow_steps_"))):
        n += 1
        if (o["pattern"], o["collective"]) != words[key(o)]:
            print("rank %d %s %s, proxy line %s" % (o["rank"], o["pattern"], o["collective"], words[key(o)]))
print("messages %d" % n)
PY
}

@test "a message names its operation as the proxy line does: SEND_RECV for a grouped send/recv" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 4 --iters 1 "$T/nsys"
	nccl-flows -q -o "$T/out" "$T/nsys"
	run -0 same_words "$T/out"
	assert_output "messages 1036"
	run -0 bash -c 'jq -r "select(.algorithm == \"P2P\") | [.op, .pattern, .collective] | @tsv" "$1"/flow_steps_rank0.jsonl | sort | uniq -c | sed "s/^ *//"' _ "$T/out"
	assert_output - <<'OUT'
2 RECV	SEND_RECV	sendrecv
2 SEND	SEND_RECV	sendrecv
OUT
	# a send without a recv in its group stays SEND, send
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 7 nranks=2 ranks=0,1\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tpeer\tdtype\n'
		printf 'p2p\tsend\t0\t1\t1000\t500\t262144\t7\t0\t1\tint8\np2p\trecv\t1\t1\t1000\t500\t262144\t7\t0\t0\tint8\n#end 2\n'
	} >"$T/p.tsv"
	pack "$T/p.tsv" "$T/p.ev"
	nccl-flows -q -o "$T/p" "$T/p.ev"
	run -0 same_words "$T/p"
	assert_output "messages 4"
	run -0 jq -r '[.op, .pattern, .collective] | @tsv' "$T/p/flow_steps_rank0.jsonl" "$T/p/flow_steps_rank1.jsonl"
	assert_output - <<'OUT'
SEND	SEND	send
SEND	SEND	send
RECV	RECV	recv
RECV	RECV	recv
OUT
}

@test "input and output directories named with *, [, ?, a leading - and a newline" {
	N=$'-gl*ob[1]?\nrun'
	cd "$T"
	cp -r "$KRUN" "./$N"
	run -0 nccl-flows -q -j 1 -o "$N.flows" -- "$N"
	diff -r "$KA" "./$N.flows"
	# a folder of Nsight Systems exports named so
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 2 --iters 1 plain >/dev/null
	nccl-flows -q -o ref plain
	cp -r plain "./$N.nsys"
	run -0 nccl-flows -q -o "$N.nflows" -- "$N.nsys"
	diff -r ref "./$N.nflows"
}
