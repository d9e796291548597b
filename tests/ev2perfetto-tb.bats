#!/usr/bin/env bats
# ev2perfetto --tb: one Kineto trace per rank in the layout TensorBoard's
# profiler plugin loads (issue #41, acelyzer --tb).  Every output is checked
# by tests/tb-layout.py, the plugin's loading rules read from its source.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$TESTS_DIR/fixtures/ev2perfetto"
	pack "$F/small.tsv" "$T/small.ev"
}

layout() {
	/usr/bin/python3 "$TESTS_DIR/tb-layout.py" "$@"
}

@test "--tb: one <host>_<rank>.pt.trace.json per rank, in the plugin's layout" {
	run -0 ev2perfetto --tb -o "$T/tb" "$T/small.ev"
	run -0 ls "$T/tb"
	[ "$output" = $'nodeA_0.pt.trace.json\nnodeB_1.pt.trace.json' ]
	run -0 layout "$T/tb" --ranks 2
}

@test "--tb: Kineto's keys, categories, pid = device, ops and runtime with correlation" {
	ev2perfetto --tb -o "$T/tb" "$T/small.ev"
	run -0 /usr/bin/python3 - "$T/tb/nodeB_1.pt.trace.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d['schemaVersion'], d['distributedInfo'], d['deviceProperties'], d['displayTimeUnit'])
cats = sorted({e['cat'] for e in d['traceEvents'] if e['ph'] == 'X'})
print(cats)
k = [e for e in d['traceEvents'] if e.get('cat') == 'kernel'][0]
print(k['pid'], k['tid'], k['args']['device'], k['args']['stream'], k['args']['correlation'])
rt = [e for e in d['traceEvents'] if e.get('cat') == 'cuda_runtime'][0]
print(rt['pid'], rt['args']['correlation'])
PY
	[ "${lines[0]}" = "1 {'rank': 1, 'world_size': 2} [{'id': 0}, {'id': 1, 'name': '1'}] ms" ]
	[[ "${lines[1]}" == *"'cuda_runtime'"*"'kernel'"* ]]
	[ "${lines[2]}" = "1 7 1 7 21" ]
	[ "${lines[3]}" = "200 21" ]
}

@test "--tb output reopens in kineto2ev: same kernels, ranks from distributedInfo, times restored" {
	ev2perfetto --tb -o "$T/tb" "$T/small.ev"
	kineto2ev "$T"/tb/*.pt.trace.json >"$T/back.ev" 2>"$T/err"
	ev-view --type=kernel "$T/small.ev" | grep -v '^#' | cut -f3,5,6,8 | sort >"$T/a"
	ev-view --type=kernel "$T/back.ev" | grep -v '^#' | cut -f3,5,6,8 | sort >"$T/b"
	[ -s "$T/a" ]
	diff -u "$T/a" "$T/b"
}

@test "--tb on the AIU TP4 trace: four workers, each with the collective the distributed view needs" {
	need_shared_data
	flex2ev -q "$SHARED_DATA/acelyzer/allreduce_tp4.json" >"$T/tp4.ev"
	run -0 ev2perfetto --tb -o "$T/tb" "$T/tp4.ev"
	run -0 layout "$T/tb" --ranks 4 --comm
	run -0 /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
k = [e for e in d["traceEvents"] if e.get("cat") == "kernel"][0]
print(d["deviceProperties"][-1], k["pid"], k["args"]["device"], "TS1" in k["args"])
print(sorted(e["name"] for e in d["traceEvents"] if e["name"].startswith("nccl:")))' "$T/tb/worker_3.pt.trace.json"
	[ "${lines[0]}" = "{'id': 3, 'name': 'aiu3'} 3 3 True" ]
	[ "${lines[1]}" = "['nccl:all_reduce']" ]
}

@test "tb-layout.py fails a trace the plugin would not load (X without cat, device without its entry)" {
	mkdir "$T/bad"
	printf '%s\n' '{"schemaVersion":1,"traceEvents":[' \
		'{"ph":"X","pid":2,"tid":7,"name":"k","ts":1,"dur":2,"args":{"device":2}},' \
		'{"ph":"X","pid":2,"tid":7,"name":"k","cat":"kernel","ts":1,"dur":2,"args":{"device":2}}],' \
		'"deviceProperties":[{"id":0}],"distributedInfo":{"rank":0,"world_size":1},"displayTimeUnit":"ms"}' \
		>"$T/bad/h_0.pt.trace.json"
	run -1 layout "$T/bad"
	[[ "$output" == *"X event without a string cat"* ]]
	[[ "$output" == *"device 2 has no deviceProperties entry"* ]]
}

@test "--tb: -o DIR is required, gzip refused, usage errors exit 2" {
	run -2 ev2perfetto --tb "$T/small.ev"
	[[ "$output" == *"-o DIR"* ]]
	run -2 ev2perfetto --tb -z -o "$T/tb" "$T/small.ev"
	[[ "$output" == *"gzip them afterwards"* ]]
	run -2 ev2perfetto --tb --critical-path=rank -o "$T/tb" "$T/small.ev"
	[[ "$output" == *"not in --tb's traces"* ]]
	[ ! -e "$T/tb" ]
}

@test "--tb: a device that is no number 0..63 is warned about, the rank used" {
	printf '%s\n' '#ev 1.0 96 clock=ns origin=trace producer=hand' '#rank 5 device=gpuX' \
		$'type\top\trank\tstream\tts\tdur\tname' $'kernel\tgemm\t5\t7\t1000\t10\tk' >"$T/d.tsv"
	pack "$T/d.tsv" "$T/d.ev"
	run -0 ev2perfetto --tb -o "$T/tb" "$T/d.ev"
	[[ "$output" == *"1 rank(s) without a device number 0..63"* ]]
	run -0 layout "$T/tb"
	grep -q '"pid":5,"tid":7,"name":"k","cat":"kernel"' "$T/tb/worker_5.pt.trace.json"
}
