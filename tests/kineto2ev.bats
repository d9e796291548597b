#!/usr/bin/env bats
# kineto2ev: Kineto and Chrome trace JSON to ev.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	FX="$TESTS_DIR/fixtures/kineto2ev"
}

@test "a small Kineto trace: every event kind, exact ns, links" {
	kineto2ev -q -o "$T/s.ev" "$FX/small.json"
	# A cpu_op's and a runtime call's aux: its place in traceEvents + 1.
	run -0 ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,flags,nthreads,aux "$T/s.ev"
	assert_output - <<'OUT'
type	op	rank	stream	ts	dur	bytes	name	flags	nthreads	aux
range	step	1	7	1000	100000	0	ProfilerStep#1	-	0	0
counter	-	1	0	3000	0	1000	mem.allocated	-	0	0
counter	-	1	0	3000	0	2048	mem.reserved	-	0	0
memcpy	htod	1	7	5000	2000	4096	Memcpy HtoD (Pageable -> Device)	unlinked	0	0
range	cpu_op	1	7	10500	30000	0	aten::mm	-	0	1
api	runtime	1	7	12000	4000	0	cudaLaunchKernel	-	0	2
kernel	gemm	1	7	20001	8250	0	sm90_xmma_gemm_f32f32	-	128	8
kernel	comm	1	9	40000	10000	0	ncclDevKernel_AllReduce_RING_LL_Sum_float	unlinked	512	0
coll	allreduce	1	9	40000	10000	4096	ncclDevKernel_AllReduce_RING_LL_Sum_float	-	512	2
kernel	comm	1	9	60000	10000	0	ncclDevKernel_AllGather_RING_SIMPLE	unlinked	544	0
coll	allgather	1	9	60000	10000	2048	ncclDevKernel_AllGather_RING_SIMPLE	-	544	2
mark	other	1	7	95000	0	0	checkpoint "A"é	-	0	0
OUT
	# The GEMM kernel names its launching op with shapes.
	run -0 ev-view -M -H --type=kernel --name=xmma -c sig "$T/s.ev"
	assert_output 'aten::mm dims=[[64,32],[32,16]] types=["float","float"]'
	# Collectives: dtype, seq per communicator, algo/proto from the name.
	run -0 ev-view -M -H --type=coll -c op,dtype,seq,algo,proto,redop "$T/s.ev"
	assert_output "$(printf 'allreduce\tfloat32\t0\tring\tll\tsum\nallgather\tbfloat16\t1\tring\tsimple\t-')"
	run -0 grep -a '^#comm' "$T/s.ev"
	assert_output --regexp '^#comm [0-9]+ nranks=2 ranks=0,1 name=0$'
	run -0 grep -a -e '^#rank' -e '^#meta' "$T/s.ev"
	assert_output "$(printf '#rank 1 pid=100 device=0 world_size=2\n#meta nccl_version=2.21.5')"
}

@test "python functions only with --python; api calls can be left out" {
	kineto2ev -q --python --no-api -o "$T/p.ev" "$FX/small.json"
	run -0 ev-view -M -H --type=range -c op "$T/p.ev"
	assert_output "$(printf 'step\npython\ncpu_op')"
	run -0 ev-view -M -H --type=api -c name "$T/p.ev"
	assert_output ""
}

@test "rule sets classify communication kernels differently" {
	printf '[{"ph":"X","cat":"kernel","name":"rcclGenericKernel","pid":0,"tid":1,"ts":1,"dur":1,"args":{}},\n {"ph":"X","cat":"kernel","name":"NCCL_upper","pid":0,"tid":1,"ts":2,"dur":1,"args":{}}]\n' >"$T/r.json"
	kineto2ev -q --rank=0 -o "$T/a.ev" "$T/r.json"
	run -0 ev-view -M -H -c op "$T/a.ev"
	assert_output "$(printf 'comm\ncomm')"
	kineto2ev -q --rank=0 --rules=tracelens-2025 -o "$T/b.ev" "$T/r.json"
	run -0 ev-view -M -H -c op "$T/b.ev"
	assert_output "$(printf 'other\nother')"
}

@test "generic Chrome trace: bare array, B/E pairs, out-of-order events" {
	printf '[{"ph":"B","name":"outer","pid":1,"tid":2,"ts":10},{"ph":"B","name":"inner","pid":1,"tid":2,"ts":12},\n{"ph":"X","name":"early","pid":1,"tid":3,"ts":1,"dur":1},{"ph":"E","pid":1,"tid":2,"ts":15},{"ph":"E","pid":1,"tid":2,"ts":20},{"ph":"E","pid":1,"tid":2,"ts":21}]' >"$T/c.json"
	run -0 kineto2ev -v --rank=3 -o "$T/c.ev" "$T/c.json"
	assert_output --partial "1 skipped"
	run -0 ev-view -M -H -c rank,ts,dur,name "$T/c.ev"
	assert_output "$(printf '3\t1000\t1000\tearly\n3\t10000\t10000\touter\n3\t12000\t3000\tinner')"
	run -0 grep -a '^#ev' "$T/c.ev"
	assert_output '#ev 1.1 96 clock=ns origin=trace producer=kineto2ev'
}

@test "baseTimeNanoseconds after traceEvents is honoured" {
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":2.5,"dur":1,"args":{}}],"baseTimeNanoseconds":1700000000000000000}' >"$T/b.json"
	kineto2ev -q --rank=0 -o "$T/b.ev" "$T/b.json"
	run -0 ev-view -M -H -c ts "$T/b.ev"
	assert_output 1700000000000002500
}

@test "baseTimeNanoseconds: an overflowing base is an error naming the file and the value" {
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":2.5,"dur":1,"args":{}}],"baseTimeNanoseconds":9223372036854775000}' >"$T/b.json"
	run -1 kineto2ev --rank=0 -o "$T/b.ev" "$T/b.json"
	assert_output --partial "b.json: baseTimeNanoseconds 9223372036854775000 + the last event's end (3500 ns) passes"
	[ ! -e "$T/b.ev" ]
}

@test "baseTimeNanoseconds: non-numeric, negative and out-of-range values are errors" {
	for v in '1e400' '18446744073709551616' '"x"' '-5' '"12abc"' 'true' '[1]'; do
		printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":2.5,"dur":1,"args":{}}],"baseTimeNanoseconds":%s}' "$v" >"$T/b.json"
		run -1 kineto2ev --rank=0 -o "$T/b.ev" "$T/b.json"
		assert_output --partial "b.json: baseTimeNanoseconds $v is not"
		[ ! -e "$T/b.ev" ]
	done
	# a numeric string and exponent notation are read; null is no base
	for v in '"1700000000000000000"' '1.7e18'; do
		printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":2.5,"dur":1,"args":{}}],"baseTimeNanoseconds":%s}' "$v" >"$T/b.json"
		run -0 kineto2ev -q --rank=0 -o "$T/b.ev" "$T/b.json"
		run -0 ev-view -M -H -c ts "$T/b.ev"
		assert_output 1700000000000002500
	done
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":2.5,"dur":1,"args":{}}],"baseTimeNanoseconds":null}' >"$T/b.json"
	run -0 kineto2ev --rank=0 -o "$T/b.ev" "$T/b.json"
	run -0 ev-view -M -H -c ts "$T/b.ev"
	assert_output 2500
}

@test "several files: ranks from paths, one stream in time order" {
	mkdir -p "$T/rank0" "$T/rank_1"
	printf '[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":5,"dur":1},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":1,"dur":1}]' >"$T/rank0/t.json"
	printf '[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":3,"dur":1}]' >"$T/rank_1/t.json"
	gzip -k "$T/rank_1/t.json"
	kineto2ev -q -o "$T/m.ev" "$T/rank0/t.json" "$T/rank_1/t.json.gz"
	run -0 ev-view -M -H -c rank,ts,src "$T/m.ev"
	assert_output "$(printf '0\t1000\t0\n1\t3000\t1\n0\t5000\t0')"
	run -1 kineto2ev -q -o "$T/x.ev" "$T/rank0/t.json" "$T/rank0/t.json"
	assert_output --partial "are both rank 0"
}

@test "bad JSON names the byte offset; limits are enforced" {
	printf '{"traceEvents":[{"ph":"X","name":"k","ts":1,"dur":1},{"ph":"X" "name":"j","ts":2}]}' >"$T/bad.json"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/bad.json"
	assert_output --partial "bad.json: byte 53: invalid JSON in an event"
	printf '{"traceEvents":[{"ph":"X","name":"k","dur":1}]}' >"$T/nots.json"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/nots.json"
	assert_output --partial "event without a numeric ts"
	printf '{"traceEvents":[{"ph":"X","name":"k","ts":NaN,"dur":1}]}' >"$T/nan.json"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/nan.json"
	printf '{"traceEvents":[{"ph":"X","name":"%s","ts":1}]}' "$(head -c 3000 /dev/zero | tr '\0' a)" >"$T/big.json"
	run -1 kineto2ev --rank=0 --max-object=1K -o "$T/x.ev" "$T/big.json"
	assert_output --partial "larger than the limit of 1024 bytes"
	run -1 kineto2ev --rank=0 --max-tokens=16 -o "$T/x.ev" "$FX/small.json"
	assert_output --partial "more than 16 JSON tokens"
	printf 'hello' >"$T/text.json"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/text.json"
	assert_output --partial "not a JSON object or array"
	head -c 300 "$FX/small.json" | gzip -c | head -c 100 >"$T/cut.json.gz"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/cut.json.gz"
	assert_output --partial "truncated"
	[ ! -e "$T/x.ev" ]
}

@test "aorta sweep rank 0: event and kernel counts (shared data)" {
	need_shared_data
	f="$SHARED_DATA/kineto/aorta-sweep/256thread/nccl_28channels/torch_profiler/rank0/customer_trace_step10.json.gz"
	run -0 kineto2ev -v -o "$T/a.ev" "$f"
	assert_output --partial "rank 0: 357 events, 65 kernels"
	assert_output --partial "10 collectives"
	run -0 bash -c 'ev-view -M -H --type=kernel -c op "$1" | sort | uniq -c | awk "{print \$2, \$1}"' _ "$T/a.ev"
	assert_line 'comm 18'
	assert_line 'gemm 36'
	run -0 grep -a '^#comm' "$T/a.ev"
	assert_output --partial 'nranks=8 ranks=0,1,2,3,4,5,6,7'
}

@test "aorta sweep: 8 ranks from distributedInfo, collectives match across ranks (shared data)" {
	need_shared_data
	kineto2ev -q -o "$T/all.ev" "$SHARED_DATA"/kineto/aorta-sweep/512thread/nccl_56channels/torch_profiler/rank*/*.json.gz
	run -0 bash -c 'ev-view -M -H -c rank "$1" | sort -un | tr "\n" " "' _ "$T/all.ev"
	assert_output '0 1 2 3 4 5 6 7 '
	run -0 bash -c 'ev-view -M -H -c ts "$1" | sort -n -c && echo sorted' _ "$T/all.ev"
	assert_output sorted
	# Every rank's allreduce 0 has the same comm and size.
	run -0 bash -c 'ev-view -M -H --type=coll -c seq,comm,bytes "$1" | awk "\$1 == 0" | sort -u | wc -l' _ "$T/all.ev"
	assert_output 1
}

@test "NCCL kernels of HTA's nccl_parser_config carry sizes and ops (shared data)" {
	need_shared_data
	kineto2ev -q -o "$T/h.ev" "$SHARED_DATA/kineto/hta/nccl_parser_config/nccl_data.json.gz"
	run -0 ev-view -M -H --type=coll -c op,bytes,dtype,seq,aux,sig "$T/h.ev"
	assert_line --index 0 "$(printf 'broadcast\t212480\tfloat32\t0\t2\trecord_param_comms')"
	assert_equal "${#lines[@]}" 21
}

@test "--clip cuts same-stream overruns at the next start, keeping order" {
	cat >"$T/o.json" <<'JSON'
{"traceEvents": [
 {"ph":"X","cat":"kernel","name":"long_a","pid":0,"tid":7,"ts":10,"dur":100,"args":{"stream":7}},
 {"ph":"X","cat":"kernel","name":"other_stream","pid":0,"tid":8,"ts":20,"dur":500,"args":{"stream":8}},
 {"ph":"X","cat":"kernel","name":"next_b","pid":0,"tid":7,"ts":50,"dur":10,"args":{"stream":7}},
 {"ph":"X","cat":"kernel","name":"fits_c","pid":0,"tid":7,"ts":70,"dur":5,"args":{"stream":7}},
 {"ph":"X","cat":"kernel","name":"last_d","pid":0,"tid":7,"ts":80,"dur":1,"args":{"stream":7}}
], "distributedInfo": {"rank": 0}}
JSON
	run -0 kineto2ev -o "$T/o.ev" "$T/o.json"
	assert_output --partial '1 kernels start before the previous kernel on their stream ends'
	run -0 kineto2ev --clip -o "$T/c.ev" "$T/o.json"
	assert_output --partial '1 kernels overran the next kernel on their stream: clipped'
	run -0 ev-view -M -H -t kernel -c name,ts,dur,flags "$T/c.ev"
	assert_output "$(printf 'long_a\t10000\t40000\tunlinked|clipped\nother_stream\t20000\t500000\tunlinked\nnext_b\t50000\t10000\tunlinked\nfits_c\t70000\t5000\tunlinked\nlast_d\t80000\t1000\tunlinked')"
}

@test "NCCL flow-extractor JSONL becomes send and recv records" {
	kineto2ev -q -o "$T/f.ev" "$FX/flow_steps_rank1.jsonl"
	run -0 ev-view -M -c type,op,rank,peer,bytes,channel,step,seq,algo,proto,flags "$T/f.ev"
	assert_output - <<'OUT'
type	op	rank	peer	bytes	channel	step	seq	algo	proto	flags
send	allreduce	1	2	524288	0	0	0	ring	simple	phase_rs
recv	allreduce	1	0	524288	0	0	0	ring	simple	phase_rs
send	allreduce	1	2	524288	1	3	0	ring	simple	phase_ag
recv	allreduce	1	0	4096	0	0	1	tree	ll	tree_up
OUT
	printf '{"opCount":0,"rank":1,"channel":0,"step":0,"op":"SEND","peer":2}\n' >"$T/flow_steps_rank1.jsonl"
	run -1 kineto2ev -o "$T/x.ev" "$T/flow_steps_rank1.jsonl"
	assert_output --partial 'line 1: a flow step needs'
	[ ! -e "$T/x.ev" ]
	printf '{"opCount":0,"rank":1,"channel":0,"nsteps":8,"nbytes":1}\n' >"$T/proxy_flow_rank1.jsonl"
	run -1 kineto2ev -o "$T/x.ev" "$T/proxy_flow_rank1.jsonl"
	assert_output --partial 'no flow steps'
}

@test "old-era collectives (PyTorch <= 2.1): kind, bytes and order per rank as in the new era" {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --run --ranks 4 --iters 3 "$T/new"
	python3 "$TESTS_DIR/gen/gen-kineto.py" --run --era 2.1 --ranks 4 --iters 3 "$T/old"
	kineto2ev -q -o "$T/new.ev" "$T"/new/torch_profiler/rank*/trace.json
	run -0 kineto2ev -o "$T/old.ev" "$T"/old/torch_profiler/rank*/trace.json
	assert_output --partial "rank0/trace.json: 6 collectives without collective arguments (PyTorch <= 2.1): inferred"
	refute_output --partial "no nccl:* annotation"
	# Same collectives, sizes and sequence numbers (the dtype of an old
	# all-gather kernel is the int8 it copies).
	ev-view -M -H --type=coll -c rank,op,bytes,seq "$T/new.ev" >"$T/new.tsv"
	run -0 ev-view -M -H --type=coll -c rank,op,bytes,seq "$T/old.ev"
	assert_output "$(cat "$T/new.tsv")"
	[ "${#lines[@]}" -eq 24 ]
	run -0 grep -a '^#comm' "$T/old.ev"
	assert_output --regexp '^#comm [0-9]+ nranks=4 name=default_pg inferred=kernel_names$'
	# Every rank's collective n has the same comm and size: they match by order.
	run -0 bash -c 'ev-view -M -H --type=coll -c seq,comm,bytes "$1" | sort -u | wc -l' _ "$T/old.ev"
	assert_output 6
	# gen-kineto's 2.1 era too.
	gen-kineto -q --era=2.1 --ranks 2 --iters 2 --mix allreduce:2,allgather:1 "$T/g"
	run -0 bash -c 'kineto2ev -q "$1"/rank*/trace.json | ev-view -M -H --type=coll -c rank,op,seq | sort | uniq | wc -l' _ "$T/g"
	assert_output 12
}

@test "collective element types in every PyTorch spelling: long int is int64, 8 bytes an element" {
	# An old-era all_to_all: its size is the nccl:* annotation's first input,
	# elements of the C++ type "long int" (GCC's name of int64_t).
	cat >"$T/a2a.json" <<'JSON'
{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 100, "tid": 100, "ts": 1000, "dur": 10,
   "args": {"Input Dims": [[24]], "Input type": ["long int"]}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 100, "tid": 100, "ts": 1001, "dur": 8,
   "args": {"External id": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": 1003, "dur": 4,
   "args": {"External id": 7, "correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
   "pid": 0, "tid": 9, "ts": 1020, "dur": 30, "args": {"External id": 7, "device": 0, "stream": 9, "correlation": 7}}
 ]}
JSON
	kineto2ev -q -o "$T/a.ev" "$T/a2a.json"
	run -0 ev-view -M -H --type=coll -c op,dtype,bytes "$T/a.ev"
	assert_output "$(printf 'alltoall\tint64\t192')"
	# The same with a complex and a short element.
	sed 's/"long int"/"c10::complex<float>"/' "$T/a2a.json" >"$T/c.json"
	run -0 bash -c 'kineto2ev -q "$1" | ev-view -M -H --type=coll -c dtype,bytes' _ "$T/c.json"
	assert_output "$(printf 'complex64\t192')"
	sed 's/"long int"/"short int"/' "$T/a2a.json" >"$T/s.json"
	run -0 bash -c 'kineto2ev -q "$1" | ev-view -M -H --type=coll -c dtype,bytes' _ "$T/s.json"
	assert_output "$(printf 'int16\t48')"
}

@test "a real rank's collectives of unsigned char, signed char and long all have a dtype (shared data)" {
	need_shared_data
	kineto2ev -q -o "$T/r.ev" "$SHARED_DATA/kineto/hta/trace_filter/sampled_rank-0.json.gz"
	run -0 bash -c 'ev-view -M -H --type=coll -c op,dtype,bytes "$1" | sort -u' _ "$T/r.ev"
	# 419430400 unsigned chars, 16777216 signed chars, 384 longs.
	assert_line "$(printf 'alltoall\tuint8\t419430400')"
	assert_line "$(printf 'allgather\tint8\t16777216')"
	assert_line "$(printf 'alltoall\tint64\t3072')"
	refute_output --regexp $'\t-\t'
}

@test "GPU events link through the call stack; -v reports how each was linked" {
	run -0 kineto2ev -v --rank=0 -o "$T/s.ev" "$FX/small.json"
	assert_output --regexp 'GPU events [0-9]+: [0-9]+ linked through the call stack, [0-9]+ by External id, [0-9]+ to a call outside any op, [0-9]+ to no op'
	printf '%s\n' '[{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":7}},' \
		'{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50,"args":{"External id":8}},' \
		'{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":3,"External id":7}},' \
		'{"ph":"X","cat":"kernel","name":"sm90_gemm","pid":0,"tid":7,"ts":30,"dur":5,"args":{"correlation":3,"External id":7}}]' >"$T/l.json"
	run -0 kineto2ev -v --rank=0 -o "$T/l.ev" "$T/l.json"
	assert_output --partial "GPU events 1: 1 linked through the call stack, 0 by External id"
	run -0 ev-view -M -H --type=kernel -c sig,step "$T/l.ev"
	assert_output "$(printf 'aten::mm\t8')"
}

@test "hostile JSON: depth 10,000 and 2 MB of nesting fail fast with a depth error" {
	python3 -c 'import sys; sys.stdout.write("{\"traceEvents\":[" + "[" * 10000 + "]" * 10000 + "]}")' >"$T/d.json"
	run -1 timeout 10 kineto2ev --rank=0 -o "$T/x.ev" "$T/d.json"
	assert_output --partial "nested deeper than 256 levels"
	python3 -c 'import sys; sys.stdout.write("[" * 1048576 + "]" * 1048576)' >"$T/d2.json"
	run -1 timeout 10 kineto2ev --rank=0 -o "$T/x.ev" "$T/d2.json"
	assert_output --partial "nested deeper than 256 levels"
	[ ! -e "$T/x.ev" ]
}

@test "silent clamps are counted warnings; absurd values are errors" {
	printf '%s\n' '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":-1},' \
		'{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":5,"dur":1,"args":{"stream":1099511627776}},' \
		'{"ph":"B","name":"open","pid":1,"tid":2,"ts":6}]' >"$T/c.json"
	run -0 kineto2ev --rank=0 -o "$T/c.ev" "$T/c.json"
	assert_line --partial "c.json: 1 events with a negative duration: made 0"
	assert_line --partial "c.json: 1 events with a stream, pid or tid outside 0..2^32-1: made 0"
	assert_line --partial "c.json: 1 B events without their E: dropped"
	printf '%s\n' '[{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":1,"ts":5,"dur":1,' \
		'"args":{"Collective name":"allreduce","Group size":-3}}]' >"$T/g.json"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/g.json"
	assert_output --partial "Group size -3 is out of range"
	printf '{"distributedInfo":{"rank":99999999999},"traceEvents":[{"ph":"i","ts":1}]}' >"$T/r.json"
	run -1 kineto2ev -o "$T/x.ev" "$T/r.json"
	assert_output --partial "rank 99999999999 is out of range"
	mkdir -p "$T/rank3"
	cp "$FX/small.json" "$T/rank3/worker0.json"
	sed -i 's/"distributedInfo"/"distributedInfoX"/' "$T/rank3/worker0.json"
	run -0 kineto2ev -o "$T/w.ev" "$T/rank3/worker0.json"
	assert_output --partial "the path names several ranks: using 3"
	[ ! -e "$T/x.ev" ]
}

@test "rocprof JSON is named as a dialect and sent to rocprof2ev, not a size error" {
	python3 -c 'import json, sys; json.dump({"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}, "kernel_dispatch": [{"x": "y" * 100}] * 200000}]}, sys.stdout)' >"$T/rp.json"
	run -1 kineto2ev --rank=0 -o "$T/x.ev" "$T/rp.json"
	assert_output --partial "rocprof JSON (rocprofv3, rocprofiler-sdk-tool) is not a Kineto trace: convert it with rocprof2ev"
	refute_output --partial "larger than the limit"
}

@test "per-op kernel time matches TraceLens's ops_summary on real traces (shared data)" {
	need_shared_data
	# References: TraceLens 171dd74 generate_perf_report_pytorch, ops_summary
	# (name, total_direct_kernel_time_sum), in fixtures/kineto2ev/tracelens-ops.
	ref="$FX/tracelens-ops"
	for pair in alexnet:hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace \
		df_index_resolver:hta/df_index_resolver/df_index_resolver \
		negative_queue_rank0:hta/negative_queue_length_values_check/rank0 \
		mi300_resnet_act_checkpoint:tracelens/mi300/resnet_act_checkpoint \
		aorta_256t_28ch_rank0:aorta-sweep/256thread/nccl_28channels/torch_profiler/rank0/customer_trace_step10; do
		kineto2ev -q --rank=0 -o "$T/${pair%%:*}.ev" "$SHARED_DATA/kineto/${pair#*:}.json.gz"
		run -0 python3 "$TESTS_DIR/op-attribution.py" "$(command -v ev-view)" "$T/${pair%%:*}.ev" "$ref/${pair%%:*}.csv"
		echo "${pair%%:*}: $output% of TraceLens's per-op kernel time on the same op"
		awk -v p="$output" 'BEGIN { exit !(p >= 95) }'
	done
}

@test "an IBM AIU (Flex) trace is named as such and sent to flex2ev" {
	need_shared_data
	run -1 kineto2ev -o "$BATS_TEST_TMPDIR/x.ev" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	assert_output --partial "IBM AIU (Flex) trace"
	assert_output --partial "flex2ev"
	[ ! -e "$BATS_TEST_TMPDIR/x.ev" ]
	# Through a pipe too: the one read is sniffed as it is converted.
	run -1 bash -c 'kineto2ev -o "$1" <(cat "$2")' _ "$BATS_TEST_TMPDIR/x.ev" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	assert_output --partial "IBM AIU (Flex) trace"
	[ ! -e "$BATS_TEST_TMPDIR/x.ev" ]
}

@test "a trace read through a pipe (<(...), /dev/stdin) is read once, whole" {
	F="$TESTS_DIR/fixtures/ev-stats/tracelens-ops.json"
	# The same records as from the file; only the #src line names the pipe.
	kineto2ev -q "$F" | ev-view -H | grep -v '^#src' >"$BATS_TEST_TMPDIR/file.txt"
	run -0 bash -c 'kineto2ev -q <(cat "$1") | ev-view -H | grep -v "^#src" | cmp - "$2"' _ "$F" "$BATS_TEST_TMPDIR/file.txt"
	run -0 bash -c 'cat "$1" | kineto2ev -q /dev/stdin | ev-view -H | grep -v "^#src" | cmp - "$2"' _ "$F" "$BATS_TEST_TMPDIR/file.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/file.txt")" -gt 10 ]
}

@test "real PyTorch <= 2.1 ranks: collectives in NCCL's generic SendRecv kernel are collectives (shared data)" {
	need_shared_data
	# HTA's trace_filter ranks (world 128, NCCL 2.12-2.18 era): their
	# all_reduce/all_to_all/_all_gather_base run in ncclKernel_SendRecv_...;
	# the nccl:* annotation around each launch gives the kind and size.
	f="$SHARED_DATA/kineto/hta/trace_filter/sampled_rank-0.json.gz"
	run -0 kineto2ev -o "$T/r0.ev" "$f"
	assert_output --partial "10 collectives without collective arguments"
	run -0 bash -c 'ev-view -M -H -t coll,p2p -c type,op,bytes,seq "$1"' _ "$T/r0.ev"
	assert_line --index 0 $'coll\talltoall\t3072\t0'
	assert_line --index 2 $'coll\tallreduce\t78473228\t2'
	assert_line --index 4 $'coll\tallgather\t16777216\t4'
	[ "${#lines[@]}" -eq 10 ]
	refute_output --partial p2p
}

@test "a PyTorch execution trace is named as such, not 'no trace events' (shared data)" {
	need_shared_data
	run -1 kineto2ev -o "$T/x.ev" "$SHARED_DATA/kineto/hta/execution_trace/benchmark_simple_add_et.json.gz"
	assert_output --partial "a PyTorch execution trace (ExecutionTraceObserver"
	[ ! -e "$T/x.ev" ]
	# The profiler trace recorded beside it converts.
	run -0 kineto2ev -q -o "$T/k.ev" "$SHARED_DATA/kineto/hta/execution_trace/benchmark_simple_add_trace.json.gz"
}

@test "a processed view (ev2perfetto's output) is named as such, not converted into a poorer stream" {
	kineto2ev -q -o "$T/s.ev" "$FX/small.json"
	# A cpu_op's and a runtime call's aux: its place in traceEvents + 1.
	ev2perfetto -q -o "$T/view.json" "$T/s.ev"
	run -1 kineto2ev -o "$T/x.ev" "$T/view.json"
	assert_output --partial "this is ev2perfetto's output (a Perfetto view of an ev stream)"
	[ ! -e "$T/x.ev" ]
	# The same events without the producer's otherData still convert.
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d.pop("otherData"); json.dump(d, open(sys.argv[2], "w"))' \
		"$T/view.json" "$T/bare.json"
	run -0 kineto2ev -q -o "$T/y.ev" "$T/bare.json"
}

@test "Acelyzer's processed output is named as such" {
	printf '%s\n' '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":1,"dur":2}],' \
		'"otherData":{"Application":"Acelyzer: Trace Post-Processing Tool"}}' >"$T/acelyzer.json"
	run -1 kineto2ev -o "$T/x.ev" "$T/acelyzer.json"
	assert_output --partial "this is Acelyzer's processed output, not a profiler trace"
	[ ! -e "$T/x.ev" ]
}

@test "memcpy and memset keep the profiler's measured duration from their bandwidth (aux)" {
	# Kineto writes bytes / ns in full precision but the duration in whole
	# microseconds: 147456 B at 11.405940594059405 GB/s took 12928 ns, not
	# the 12 us written.  A bandwidth that bytes / ns does not give back
	# exactly (rounded in the text), none, or no bytes: aux 0, unknown.
	cat >"$T/m.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 100, "dur": 12,
  "args": {"stream": 7, "correlation": 5, "bytes": 147456, "memory bandwidth (GB/s)": 11.405940594059405}},
 {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 200, "dur": 1,
  "args": {"stream": 7, "correlation": 6, "bytes": 1408, "memory bandwidth (GB/s)": 0.7333333333333333}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": 300, "dur": 3,
  "args": {"stream": 7, "correlation": 7, "bytes": 1000, "memory bandwidth (GB/s)": 0.3333}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7, "ts": 400, "dur": 2,
  "args": {"stream": 7, "correlation": 8, "bytes": 64}},
 {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 500, "dur": 1,
  "args": {"stream": 7, "correlation": 9, "bytes": 0, "memory bandwidth (GB/s)": 0}}
]}
JSON
	kineto2ev -q -o "$T/m.ev" "$T/m.json"
	run -0 ev-view -M -H -c type,dur,bytes,aux "$T/m.ev"
	assert_output - <<'OUT'
memcpy	12000	147456	12928
memset	1000	1408	1920
memcpy	3000	1000	0
memcpy	2000	64	0
memset	1000	0	0
OUT
}

@test "deviceProperties: the rank's GPU and how many the process saw, on its #rank line" {
	need_shared_data
	F=$(ls "$SHARED_DATA"/kineto/aorta-sweep/512thread/nccl_28channels/torch_profiler/rank1/*.json*)
	run -0 bash -c 'kineto2ev -q "$1" | ev-view -H | grep "^#rank"' _ "$F"
	assert_output "#rank 1 pid=258 device=1 world_size=8 gpu=AMD_Instinct_MI350X local_gpus=8"
}

@test "deviceProperties: entries without a name are no GPUs (local_gpus counts named ones)" {
	printf '{"deviceProperties":[{"id":0},{"id":1},{"id":2,"name":"AIU"}],"distributedInfo":{"rank":2,"world_size":4},"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":2,"tid":7,"ts":1,"dur":2,"args":{"device":2,"stream":7}}]}' >"$BATS_TEST_TMPDIR/tb.json"
	run -0 bash -c 'kineto2ev -q "$1" | ev-view -H | grep "^#rank"' _ "$BATS_TEST_TMPDIR/tb.json"
	assert_output --regexp 'gpu=AIU local_gpus=1$'
}

@test "cuda_sync events keep their call's correlation and the CUDA event they wait on" {
	printf '{"traceEvents":[%s,%s,%s]}' \
		'{"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":-1,"ts":10,"dur":3,"args":{"correlation":1536,"wait_on_stream":7,"wait_on_cuda_event_record_corr_id":1533,"stream":-1}}' \
		'{"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":24,"ts":12,"dur":2,"args":{"correlation":1389,"wait_on_stream":20,"wait_on_cuda_event_record_corr_id":1385,"stream":24}}' \
		'{"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":0,"tid":-1,"ts":20,"dur":6,"args":{"correlation":1549,"stream":-1}}' >"$T/s.json"
	kineto2ev -q -o "$T/s.ev" "$T/s.json"
	# id = correlation, peer = wait_on_stream, aux = the cudaEventRecord's correlation.
	run -0 ev-view --no-meta -c name,stream,id,peer,aux "$T/s.ev"
	assert_output - <<'OUT'
name	stream	id	peer	aux
Event Sync	0	1536	7	1533
Stream Wait Event	24	1389	20	1385
Context Sync	0	1549	-1	0
OUT
}

@test "--flow-links: GPU events joined to their call by correlation id only, with no ac2g flow pair, are flagged noflow" {
	F="$TESTS_DIR/fixtures/ev-stats/tracelens-ops.json"
	run -0 kineto2ev --flow-links -v -o "$T/f.ev" "$F"
	assert_output --partial "2 joined to their call by correlation id only (no ac2g flow: flagged noflow)"
	# aten::zero_'s memset has no 's' end; aten::copy_'s kernel has its 'f'
	# end on another stream; each 'f' is written after its GPU event.  The
	# kernel without a call is unlinked, not noflow.
	run -0 ev-view -M -H -t kernel,memset -c name,id,flags "$T/f.ev"
	assert_line --index 4 $'Memset (Device)\t15\t-'
	assert_line --index 6 $'orphan_kernel\t99\tunlinked'
	assert_line --index 10 $'Memset (Device)\t20\tnoflow'
	assert_line --index 11 $'copy_kernel\t21\tnoflow'
	[ "$(grep -c noflow <<<"$output")" = 2 ]
	# The check is said on the source's #src line.
	run -0 grep -a '^#src' "$T/f.ev"
	assert_output --regexp '^#src 0 file=[^ ]*tracelens-ops.json rank=0 trace_events=53 flow_links=ac2g,fwdbwd$'
	# The 's' end alone, or the 'f' end alone, is not enough.
	python3 - "$F" "$T/g.json" <<-'PY'
		import json, sys
		d = json.load(open(sys.argv[1]))
		d["traceEvents"] = [e for e in d["traceEvents"] if not (e.get("cat") == "ac2g" and
		                    ((e["id"] == 11 and e["ph"] == "f") or (e["id"] == 12 and e["ph"] == "s")))]
		json.dump(d, open(sys.argv[2], "w"))
	PY
	kineto2ev --flow-links -q -o "$T/g.ev" "$T/g.json"
	run -0 ev-view -M -H -t kernel -c id,flags "$T/g.ev"
	assert_line --index 0 $'11\tnoflow'
	assert_line --index 1 $'12\tnoflow'
	assert_line --index 2 $'13\t-'
}

@test "without --flow-links flows are not read: no noflow flag, no flow_links key, no count" {
	F="$TESTS_DIR/fixtures/ev-stats/tracelens-ops.json"
	run -0 kineto2ev -v -o "$T/f.ev" "$F"
	assert_output --partial "to no op"
	refute_output --partial "noflow"
	run -0 ev-view -M -H -t kernel,memset -c name,flags "$T/f.ev"
	refute_output --partial noflow
	assert_line --index 11 $'copy_kernel\t-'
	run -1 grep -a 'flow_links' "$T/f.ev"
	# The same stream as with --flow-links, but the flags and the #src key.
	kineto2ev --flow-links -q -o "$T/l.ev" "$F"
	cmp <(ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,sig,id,step "$T/f.ev") \
		<(ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,sig,id,step "$T/l.ev")
}

@test "--flow-links: a backward op carries its forward op's External id (fwdbwd flows), in a bounded window" {
	F="$TESTS_DIR/fixtures/ev-stats/tracelens-fwdbwd.json"
	run -0 kineto2ev --flow-links -v -o "$T/f.ev" "$F"
	assert_output --partial "2 backward ops linked to their forward op (fwdbwd)"
	# The 'f' end sits on the autograd node (SumBackward0, MeanBackward0):
	# its range's step is the forward op's External id; no other range has one.
	run -0 ev-view -M -H -t range -c name,id,step "$T/f.ev"
	assert_line $'SumBackward0\t21\t2'
	assert_line $'MeanBackward0\t11\t1'
	[ "$(awk -F'\t' '$3 != 0' <<<"$output" | wc -l)" = 2 ]
	# Without the option the flows are not read.
	kineto2ev -q -o "$T/n.ev" "$F"
	run -0 ev-view -M -H -t range -c step "$T/n.ev"
	[ "$(grep -vc '^0$' <<<"$output")" = 0 ]
	# 1030 forward ops, then their backward ops: the 's' ends are held in a
	# window of --link-window flows, so the first 6 fell out, said.
	python3 - "$T/w.json" <<-'PY'
		import json, sys
		ev = []
		for i in range(1, 1031):
		    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::sum", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5,
		               "args": {"External id": i}})
		    ev.append({"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": i, "pid": 1, "tid": 1, "ts": 10 * i})
		for i in range(1, 1031):
		    ts = 100000 + 10 * i
		    ev.append({"ph": "X", "cat": "cpu_op", "name": "SumBackward0", "pid": 1, "tid": 2, "ts": ts, "dur": 5,
		               "args": {"External id": 5000 + i}})
		    ev.append({"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": i, "pid": 1, "tid": 2, "ts": ts, "bp": "e"})
		json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
	PY
	run -0 kineto2ev --flow-links --link-window 1024 -v -o "$T/w.ev" "$T/w.json"
	assert_output --partial "6 fwdbwd flows whose forward op was not among the last 1024 flows' (--link-window) or had no 's' end"
	assert_output --partial "1024 backward ops linked to their forward op (fwdbwd)"
	run -0 ev-view -M -H -t range -n SumBackward0 -c id,step "$T/w.ev"
	assert_line --index 6 $'5007\t7'
	assert_line --index 0 $'5001\t0'
}

@test "an op's, a call's and a GPU event's place in traceEvents + 1 (TraceLens's UID): gzip, spilled sort, flows" {
	# Every element of traceEvents counts, whatever it is: metadata,
	# flow ends, instants, a value that is no event.  The trace lists
	# each op after the ops inside it and its calls, and then its GPU
	# events, as Kineto does, so the output order is not the file's; a
	# small sort buffer spills it to sorted runs.
	python3 - "$T/u.json" <<-'PY'
	import json, random, sys
	random.seed(7)
	ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}}, 42]
	gpu = []
	for i in range(3000):
	    t, c = 100 * i, 10000 + i
	    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1 + i % 3,
	               "ts": t + 2, "dur": 1, "args": {"correlation": c, "External id": i + 1}})
	    ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 1, "tid": 1 + i % 3, "ts": t + 2})
	    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % (i % 7), "pid": 1, "tid": 1 + i % 3,
	               "ts": t, "dur": 5, "args": {"External id": i + 1}})
	    if random.random() < 0.1:
	        ev.append({"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": t, "s": "t"})
	    cat = "kernel" if i % 50 else "gpu_memset" if i % 100 else "gpu_memcpy"
	    gpu.append({"ph": "X", "cat": cat, "name": "k", "pid": 0, "tid": 7, "ts": t + 50, "dur": 10,
	                "args": {"stream": 7, "correlation": c, "External id": i + 1, "bytes": 64}})
	    gpu.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 0, "tid": 7, "ts": t + 50, "bp": "e"})
	json.dump({"traceEvents": ev + gpu}, open(sys.argv[1], "w"))
	PY
	# What TraceLens numbers them (its UID: the index in traceEvents); a
	# GPU event's is in step_size, the trace's count on #src.
	python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
for i, e in enumerate(ev):
    if isinstance(e, dict) and e.get("cat") in ("cpu_op", "cuda_runtime", "kernel", "gpu_memset", "gpu_memcpy"):
        print(e["name"], e["tid"], e["ts"] * 1000, i)
print("trace_events=%d" % len(ev))' "$T/u.json" | sort >"$T/want"
	[ "$(wc -l <"$T/want")" = 9001 ]
	gzip -k "$T/u.json"
	kineto2ev -q --flow-links -S 1M -o "$T/u.ev" "$T/u.json.gz"
	uids() {
		ev-view -M -H -t range,api -c name,stream,ts,aux "$1"
		ev-view -M -H -t kernel,memset,memcpy -c name,stream,ts,step_size "$1"
	}
	{ uids "$T/u.ev" | awk -F'\t' '{ print $1, $2, $3, $4 - 1 }'; grep -ao 'trace_events=[0-9]*' "$T/u.ev"; } |
		sort >"$T/got"
	run -0 diff "$T/want" "$T/got"
	# Without --flow-links the flow ends are not read, but still counted.
	kineto2ev -q -o "$T/v.ev" "$T/u.json"
	{ uids "$T/v.ev" | awk -F'\t' '{ print $1, $2, $3, $4 - 1 }'; grep -ao 'trace_events=[0-9]*' "$T/v.ev"; } |
		sort >"$T/got2"
	run -0 diff "$T/want" "$T/got2"
}

# Two runs of kineto2ev on F (threads 1, then 2, more options after F's
# name): the same stream, and the same messages but the second thread's
# place, which the two-thread run must name (-v).
same_in_halves() {
	local f="$1" rc1 rc2
	shift
	run kineto2ev -v --threads=1 "$@" -o "$T/one.ev" "$f"
	rc1=$status
	printf '%s\n' "$output" >"$T/one.err"
	run kineto2ev -v --threads=2 "$@" -o "$T/two.ev" "$f"
	rc2=$status
	printf '%s\n' "$output" | sed 's/; bytes [0-9]* to [0-9]* read on a second thread$//' >"$T/two.err"
	[ "$rc1" = "$rc2" ]
	diff "$T/one.err" "$T/two.err"
	[ "$rc1" != 0 ] || cmp "$T/one.ev" "$T/two.ev"
	HALF=$(printf '%s\n' "$output" | sed -n 's/.*; bytes \([0-9]*\) to \([0-9]*\) read on a second thread$/\1 \2/p')
}

@test "--threads=2: a big file's second half on its own thread gives the same stream and messages as one" {
	python3 "$TESTS_DIR/gen/gen-kineto-seams.py" "$T/s.json"
	local size
	size=$(stat -c %s "$T/s.json")
	# Ranges, names, threads, groups, flows and UIDs across the middle.
	same_in_halves "$T/s.json" --flow-links
	[ -n "$HALF" ]
	read -r from to <<<"$HALF"
	[ "$from" -gt $((size / 100 * 46)) ] && [ "$from" -lt $((size / 100 * 46 + 4096)) ]
	[ "$to" -gt $((size - 300)) ] # to traceEvents' ']': the rest after it read by the first
	run -0 grep -a -c '^#comm' "$T/two.ev"
	assert_output 3
	run -0 grep -a '^#thread' "$T/two.ev"
	assert_line --index 0 '#thread 0 101 100 main-late'
	# The second half past its memory (half of -S 1M; the sort spills):
	# the first half goes on where it stopped, inside ranges the second
	# half opened.
	same_in_halves "$T/s.json" --flow-links -S 1M
	read -r from to <<<"$HALF"
	[ "$to" -lt $((size * 3 / 4)) ]
	# Without flows.
	same_in_halves "$T/s.json"
	[ -n "$HALF" ]
}

@test "--threads=2: a middle that only looks like events, and a bad event in the second half, as one thread has them" {
	# The middle falls in a 1 MiB name full of '}, {"ph": "X", ...':
	# the second half's guess is never confirmed, and is dropped.
	python3 "$TESTS_DIR/gen/gen-kineto-seams.py" --trap "$T/t.json"
	same_in_halves "$T/t.json" --flow-links
	[ -z "$HALF" ]
	python3 "$TESTS_DIR/gen/gen-kineto-seams.py" --bad 5600 "$T/b.json"
	same_in_halves "$T/b.json"
	assert_output --regexp "^kineto2ev: $T/b.json: byte [0-9]+: event without a numeric ts$"
	# Small, or gzip: one thread.
	python3 "$TESTS_DIR/gen/gen-kineto-seams.py" --iters 300 "$T/small.json"
	same_in_halves "$T/small.json"
	[ -z "$HALF" ]
	python3 "$TESTS_DIR/gen/gen-kineto-seams.py" "$T/s.json"
	gzip -c "$T/s.json" >"$T/s.json.gz"
	same_in_halves "$T/s.json.gz"
	[ -z "$HALF" ]
	run -2 kineto2ev --threads=3 "$T/small.json"
	assert_output --partial "--threads: expected 1 or 2, got '3'"
}
