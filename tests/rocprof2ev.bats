#!/usr/bin/env bats
# rocprof2ev: rocprofv3 JSON (*_results.json) to ev.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	FX="$TESTS_DIR/fixtures/rocprof2ev"
	REF="$TESTS_DIR/expected/rocprof"
}

@test "a small rocprofv3 trace: every record kind, GPU agents as ranks, time order, links" {
	run -0 --separate-stderr rocprof2ev -o "$T/s.ev" "$FX/small_results.json"
	run -0 ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,id,flags,nthreads,aux "$T/s.ev"
	assert_output - <<'OUT'
type	op	rank	stream	ts	dur	bytes	name	id	flags	nthreads	aux
api	runtime	0	4242	5000500	100	0	__hipPushCallConfiguration	1	-	0	0
api	runtime	0	4242	5001000	3000	0	hipMemcpyAsync	2	-	0	0
memcpy	htod	0	1	5002000	7000	1048576	MEMORY_COPY_HOST_TO_DEVICE	2	-	0	0
range	user	0	4242	5004000	250000	0	forward	5	-	0	0
api	runtime	0	4242	5005000	2000	0	hipLaunchKernel	3	-	0	0
api	runtime	0	4242	5008000	1500	0	hipLaunchKernel	4	-	0	0
api	runtime	0	4242	5009000	2500	0	hipExtModuleLaunchKernel	6	-	0	0
kernel	gemm	0	1	5010000	40000	0	Cijk_Ailk_Bljk_HHS_BH_MT128x128x64_MI32x32x8	3	-	256	64
api	runtime	0	4242	5012000	1000	0	hipLaunchKernel	7	-	0	0
api	runtime	0	4242	5014000	900	0	hipLaunchKernel	8	-	0	0
api	runtime	0	4242	5015000	1100	0	hipLaunchKernel	13	-	0	0
api	runtime	0	4242	5016000	800	0	hipLaunchKernel	10	-	0	0
api	runtime	0	4242	5017000	600	0	hipLaunchKernel	14	-	0	0
api	runtime	0	4242	5018000	700	0	hipLaunchKernel	11	-	0	0
api	runtime	0	4242	5019000	1200	0	hipExtModuleLaunchKernel	12	-	0	0
kernel	gemm	1	3	5020000	38000	0	Cijk_Ailk_Bljk_HHS_BH_MT128x128x64_MI32x32x8	13	-	256	64
kernel	comm	0	2	5030000	100000	0	ncclDevKernel_Generic_1	6	-	256	4
kernel	elementwise	0	1	5052000	3000	0	vectorized_elementwise_kernel	4	-	256	4
kernel	gemm	0	1	5060000	42000	0	Cijk_Ailk_Bljk_HHS_BH_MT128x128x64_MI32x32x8	7	-	256	64
kernel	elementwise	1	3	5060000	2000	0	vectorized_elementwise_kernel	14	-	256	4
kernel	elementwise	0	1	5104000	2500	0	vectorized_elementwise_kernel	8	-	256	4
kernel	memcpy	0	1	5150000	6000	0	__amd_rocclr_copyBuffer.kd	10	-	512	1
mark	user	0	4242	5150000	0	0	step 1	9	-	0	0
kernel	elementwise	0	1	5170000	3500	0	vectorized_elementwise_kernel	11	-	256	4
kernel	comm	0	2	5180000	80000	0	ncclDevKernel_Generic_1	12	-	256	4
api	runtime	0	4242	5200000	1000	0	hipMemcpyAsync	15	-	0	0
memcpy	ptop	1	1	5201000	4000	4194304	MEMORY_COPY_DEVICE_TO_DEVICE	15	-	0	0
api	runtime	0	4242	5260000	50000	0	hipStreamSynchronize	16	-	0	0
kernel	elementwise	0	1	5300000	1500	0	vectorized_elementwise_kernel	40	unlinked	256	4
api	runtime	0	4242	5320000	900	0	hipMemcpyAsync	17	-	0	0
memcpy	dtoh	0	1	5321000	3000	65536	MEMORY_COPY_DEVICE_TO_HOST	17	-	0	0
OUT
	run -0 grep -a -e '^#src' -e '^#rank' -e '^#ev' "$T/s.ev"
	assert_output - <<OUT
#ev 1.1 96 clock=ns origin=trace producer=rocprof2ev
#src 0 file=$FX/small_results.json host=node-a pid=4242 init_ns=4000000 fini_ns=6000000
#rank 0 host=node-a pid=4242 device=0 gpu=AMD_Instinct_MI300X arch=gfx942
#rank 1 host=node-a pid=4242 device=1 gpu=AMD_Instinct_MI300X arch=gfx942
OUT
	# What was not converted or not linked is said, counted.
	run -0 rocprof2ev -o "$T/s2.ev" "$FX/small_results.json"
	assert_output - <<OUT
rocprof2ev: warning: $FX/small_results.json: record arrays not converted: hsa_api
rocprof2ev: warning: $FX/small_results.json: 1 of 14 kernels and copies have no HIP call with their correlation id: flagged unlinked
OUT
}

@test "kernel names: truncated by default (as TraceLens), formatted or mangled on request; --no-api" {
	run -0 rocprof2ev -q --names=formatted -o "$T/f.ev" "$FX/small_results.json"
	run -0 ev-view -M -H --type=kernel --name=FillFunctor -c name,op "$T/f.ev"
	assert_line --index 0 "$(printf 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, at::native::FillFunctor<float>)\telementwise')"
	run -0 rocprof2ev -q --names=mangled --no-api -o "$T/m.ev" "$FX/small_results.json"
	run -0 ev-view -M -H --type=kernel --name=Generic -c name "$T/m.ev"
	assert_output "$(printf '_Z23ncclDevKernel_Generic_124ncclDevKernelArgsStorageILm4096EE\n_Z23ncclDevKernel_Generic_124ncclDevKernelArgsStorageILm4096EE')"
	run -0 ev-view -M -H --type=api "$T/m.ev"
	assert_output ""
	# Without the calls in the output, kernels are still checked against them.
	run -0 ev-view -M -H --type=kernel -c flags "$T/m.ev"
	assert_equal "$(grep -c unlinked <<<"$output")" 1
	run -2 rocprof2ev --names=short "$FX/small_results.json"
	assert_output --partial "--names: expected truncated, formatted or mangled, got 'short'"
	run -2 rocprof2ev
	assert_output --partial "no input file"
}

@test "ev-stats kernels and timeline equal TraceLens's rocprof report of the small trace" {
	rocprof2ev -q -o "$T/s.ev" "$FX/small_results.json"
	compare_tracelens "$T/s.ev" small
}

@test "ev-stats kernels and timeline equal TraceLens's rocprof report of TraceLens's rocprofv3 sample (shared data)" {
	need_shared_data
	local f="$SHARED_DATA/rocprof/908_results.json.gz"
	[ -e "$f" ] || skip "$f not in the shared data (TraceLens tests/rocprof/908_results.json.gz, see $REF/README.md)"
	run -0 rocprof2ev -o "$T/908.ev" "$f"
	assert_output --partial "no HIP API calls traced"
	compare_tracelens "$T/908.ev" 908
}

# compare_tracelens EV NAME: evkit's tables of EV against TraceLens's
# references NAME_*.tsv (tests/rocprof-tracelens.py says what is compared).
compare_tracelens() {
	local t=(ev-stats timeline -q --by=src --include-unlinked --no-hta)
	ev-view -q --ev --type=kernel "$1" | ev-stats kernels -q >"$T/k.tsv"
	ev-view -q --ev --type=kernel "$1" | "${t[@]}" >"$T/tk.tsv"
	ev-view -q --ev --type=memcpy "$1" | "${t[@]}" >"$T/tc.tsv"
	"${t[@]}" "$1" >"$T/ta.tsv"
	run -0 python3 "$TESTS_DIR/rocprof-tracelens.py" "$REF/$2_kernel_summary.tsv" "$REF/$2_gpu_timeline.tsv" \
		"$T/k.tsv" "$T/tk.tsv" "$T/tc.tsv" "$T/ta.tsv"
	refute_output --partial DIFFERS
	assert_output --partial "busy_time  TraceLens"
}

@test "not rocprofv3, damaged or several processes: one line naming the file, exit 1, no output" {
	run -1 rocprof2ev -o "$T/x.ev" "$TESTS_DIR/fixtures/kineto2ev/small.json"
	assert_output "rocprof2ev: $TESTS_DIR/fixtures/kineto2ev/small.json: not rocprofv3 JSON (no rocprofiler-sdk-tool member): rocprof2ev reads rocprofv3's --output-format json (*_results.json)"
	[ ! -e "$T/x.ev" ]
	head -c 3000 "$FX/small_results.json" >"$T/cut.json"
	run -1 rocprof2ev -o "$T/x.ev" "$T/cut.json"
	assert_output --regexp "^rocprof2ev: $T/cut.json: byte [0-9]+: truncated JSON"
	[ ! -e "$T/x.ev" ]
	sed 's/"start_timestamp": /"start_timestamp": x/' "$FX/small_results.json" >"$T/bad.json"
	run -1 rocprof2ev -o "$T/x.ev" "$T/bad.json"
	assert_output --regexp "^rocprof2ev: $T/bad.json: byte [0-9]+: invalid JSON in a record$"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); t = d["rocprofiler-sdk-tool"]; t.append(t[0]); json.dump(d, sys.stdout)' \
		"$FX/small_results.json" >"$T/two.json"
	run -1 rocprof2ev -o "$T/x.ev" "$T/two.json"
	assert_output --regexp "several processes in one rocprofiler-sdk-tool array: convert one process per file$"
	[ ! -e "$T/x.ev" ]
}

@test "sparse records: missing sizes, agents, symbols and streams are unknown or counted, never guessed" {
	cat >"$T/sparse_results.json" <<'JSON'
{"rocprofiler-sdk-tool": [{"agents": [{"id": {"handle": 7}, "type": 2, "logical_node_type_id": 3, "name": "gfx950"}],
 "buffer_records": {"kernel_dispatch": [
  {"correlation_id": {"internal": 1}, "start_timestamp": 100, "end_timestamp": 90,
   "dispatch_info": {"agent_id": {"handle": 7}, "queue_id": {"handle": 5}, "kernel_id": 9}},
  {"correlation_id": 4, "start_timestamp": 200, "end_timestamp": 300, "dispatch_info": {"agent_id": {"handle": 8},
   "workgroup_size": {"x": 64}, "grid_size": {"x": 1000}}}]}}]}
JSON
	run -0 rocprof2ev -o "$T/sp.ev" "$T/sparse_results.json"
	assert_line --partial "2 kernels whose kernel_id has no kernel symbol: named kernel_id_N"
	assert_line --partial "1 GPU events on an agent missing from \"agents\": put on rank 0"
	assert_line --partial "1 records that end before they start: dur 0"
	run -0 ev-view -M -H -c rank,stream,ts,dur,name,id,nthreads,aux "$T/sp.ev"
	assert_output "$(printf '3\t5\t100\t0\tkernel_id_9\t1\t0\t0\n0\t0\t200\t100\tkernel_id_unknown\t0\t64\t16')"
	# An empty process list is rocprofv3 with nothing in it, said so.
	echo '{"rocprofiler-sdk-tool": []}' >"$T/none_results.json"
	run -0 rocprof2ev -o "$T/none.ev" "$T/none_results.json"
	assert_output --partial "no kernel dispatches, memory copies, HIP calls or markers"
}

@test "several inputs: one source each; two processes on one GPU are refused" {
	python3 - "$FX/small_results.json" "$T" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["rocprofiler-sdk-tool"][0]
# Another process of the node, on GPUs 2 and 3 only.
t["metadata"]["pid"] = 4343
for a in t["agents"]:
    if a["type"] == 2:
        a["logical_node_type_id"] += 2
json.dump(d, open(sys.argv[2] + "/p2_results.json", "w"))
PY
	run -0 rocprof2ev -q -o "$T/two.ev" "$FX/small_results.json" "$T/p2_results.json"
	run -0 ev-view -M -H -c src,rank --type=kernel "$T/two.ev"
	assert_equal "$(sort -u <<<"$output" | tr '\n' ' ')" "0	0 0	1 1	2 1	3 "
	run -0 grep -a -c '^#rank' "$T/two.ev"
	assert_output 4
	run -1 rocprof2ev -q -o "$T/x.ev" "$FX/small_results.json" "$FX/small_results.json"
	assert_output "rocprof2ev: $FX/small_results.json and $FX/small_results.json both use GPU 0 (rank 0): convert them separately"
	[ ! -e "$T/x.ev" ]
}

@test "markers: a message missing or past --max-markers is counted, the ROCTx call names it" {
	run -0 rocprof2ev --max-markers=1 -o "$T/m.ev" "$FX/small_results.json"
	assert_output --partial "1 ROCTx messages beyond --max-markers: not kept"
	assert_output --partial "1 markers without a message: named by their ROCTx call"
	run -0 ev-view -M -H -c type,name --type=range,mark "$T/m.ev"
	assert_output "$(printf 'range\tforward\nmark\troctxMarkA')"
}

@test "bounded memory: sorted runs on disk give the same stream; gzip input" {
	python3 - "$FX/small_results.json" "$T/big_results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["rocprofiler-sdk-tool"][0]
k = t["buffer_records"]["kernel_dispatch"]
base = k[0]
out = []
for i in range(60000):
    e = json.loads(json.dumps(base))
    e["correlation_id"]["internal"] = 1000 + i
    # out of order in the file, as rocprofv3 writes dispatches
    e["start_timestamp"] = 10_000_000 + (i ^ 7) * 1000
    e["end_timestamp"] = e["start_timestamp"] + 500
    out.append(e)
t["buffer_records"]["kernel_dispatch"] = out
t["buffer_records"]["hip_api"] = []
json.dump(d, open(sys.argv[2], "w"))
PY
	rocprof2ev -q -o "$T/a.ev" "$T/big_results.json"
	gzip -c "$T/big_results.json" >"$T/big_results.json.gz"
	rocprof2ev -q -S 1M -o "$T/b.ev" "$T/big_results.json.gz"
	run -0 diff <(grep -av '^#src' "$T/a.ev") <(grep -av '^#src' "$T/b.ev")
	run -0 ev-view -M -H --type=kernel -c ts "$T/a.ev"
	assert_equal "${#lines[@]}" 60000
	run -0 sort -n -c <<<"$output"
}
