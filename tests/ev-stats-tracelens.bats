#!/usr/bin/env bats
# ev-stats report --tracelens: TraceLens's sheets, column names, order,
# units and rows, against reports TraceLens wrote (tests/expected/tracelens),
# and the tables behind them (ops-summary, ops-category, kernel-ops).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	TL="$SHARED_DATA/kineto/tracelens"
	REF="$TESTS_DIR/expected/tracelens"
	FX="$TESTS_DIR/fixtures/ev-stats/tracelens-ops.json"
	CMP="$TESTS_DIR/tracelens-layout.py"
	SHEETS="gpu_timeline ops_summary ops_summary_by_category ops_unique_args unified_perf_summary kernel_summary GEMM BinaryElementwise"
	SHORT="short_kernel_histogram short_kernels_summary"
}

@test "ops-summary, ops-category, kernel-ops, ops-args: TraceLens's tables of a small trace, exact" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	# Two aten::mm of 10 and 20.5 us; an add whose kernels overlap (10 us
	# each, 5 us apart: 15 us busy); a memset launched outside any op; an
	# index_put_ launching a kernel of 6 us itself and one of 3 us through
	# its child op nonzero, 2 us of them together (subtree: 7 us busy);
	# the NCCL kernel and the kernel without a call are not launchers.
	# The memset of aten::zero_ (3 us) and the kernel of aten::copy_ (6 us)
	# have no ac2g flow to their call: evkit's tables link them by
	# correlation id (report --tracelens does not, as TraceLens).
	run -0 --separate-stderr ev-stats ops-summary --csv "$T/x.ev"
	assert_output "name,Categories,total_direct_kernel_time_sum,total_direct_kernel_time_ms,Count,Percentage (%),Cumulative Percentage (%),total_subtree_kernel_time_sum,total_subtree_kernel_time_ms
aten::mm,['GEMM'],30.5,0.0305,2,43.57142857142857,43.57142857142857,30.5,0.0305
aten::add,['elementwise'],15,0.015,1,21.428571428571427,65,15,0.015
aten::copy_,['elementwise'],6,0.006,1,8.571428571428571,73.57142857142857,6,0.006
aten::index_put_,['other'],6,0.006,1,8.571428571428571,82.14285714285714,7,0.007
cudaMemsetAsync,['other'],4,0.004,1,5.714285714285714,87.85714285714285,4,0.004
aten::nonzero,['other'],3,0.003,1,4.285714285714286,92.14285714285714,3,0.003
aten::zero_,['elementwise'],3,0.003,1,4.285714285714286,96.42857142857143,3,0.003
aten::embedding,['other'],2.5,0.0025,1,3.571428571428571,100,2.5,0.0025"
	run -0 --separate-stderr ev-stats ops-category --csv "$T/x.ev"
	assert_output "op category,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%)
GEMM,2,0.0305,43.57142857142857,43.57142857142857
elementwise,3,0.024,34.28571428571428,77.85714285714285
other,4,0.0155,22.142857142857142,99.99999999999999"
	# Kernels only, every one: the NCCL kernel under its c10d op
	# ("other", as TraceLens), the one without a call with no op; shares
	# of 106 us of kernels and of the 906 us span of the linked events.
	run -0 --separate-stderr ev-stats kernel-ops --csv "$T/x.ev"
	assert_line --index 1 "GEMM,aten::mm,gemm_kernel_a,7,30.5,2,15.25,10,20.5,28.77358490566038,3.36644591611479"
	assert_line --index 2 "other,c10d::allreduce_,ncclDevKernel_AllReduce_Sum_f32_RING_LL,9,30,1,30,30,30,28.30188679245283,3.3112582781456954"
	assert_line --index 5 ",,orphan_kernel,7,8,1,8,8,8,7.547169811320755,0.8830022075055187"
	assert_line --index 6 "elementwise,aten::copy_,copy_kernel,8,6,1,6,6,6,5.660377358490567,0.6622516556291391"
	[ "${#lines[@]}" = 10 ]
	# Per op and arguments, printed as Python prints TraceLens's tuples; an
	# argument's text keeps its spaces ("long int"); TraceLens's
	# kernel_details of the op's own kernels; direct then subtree time.
	run -0 --separate-stderr ev-stats ops-args --csv "$T/x.ev"
	assert_line --index 1 --partial "aten::mm,GEMM,Unknown,Unknown,Unknown,\"((2, 3), (3, 4))\",\"('float', 'float')\",\"((1, 1), (1, 1))\",\"('', '')\",\"[{'name': 'gemm_kernel_a', 'stream': 7, 'count': 2, 'total_duration_us': np.float64(30.5), 'mean_duration_us': np.float64(15.25), 'median_duration_us': np.float64(15.25), 'std_dev_duration_us': np.float64(5.25), 'min_duration_us': np.float64(10.0), 'max_duration_us': np.float64(20.5)}]\",\"[{'name': 'gemm_kernel_a', 'stream': 7, 'mean_duration_us': np.float64(15.25)}]\",2,15.25,15.25,7.424621202458749,10,20.5,30.5,43.57142857142857,43.57142857142857,15.25,15.25,7.424621202458749,10,20.5,30.5"
	assert_line --index 3 --partial "aten::index_put_,other,Unknown,Unknown,Unknown,\"((8,), (2,))\",\"('float', 'long int')\",\"((1,), ())\",\"('', '')\",\"[{'name': 'index_put_kernel', 'stream': 7, 'count': 1,"
	assert_line --index 3 --partial "}]\",1,6,6,,6,6,6,8.571428571428571,73.57142857142857,7,7,,7,7,7"
	assert_line --index 8 --partial "aten::embedding,other,Unknown,Unknown,Unknown,\"((8, 4), (2,))\",\"('c10::BFloat16', 'long int')\",\"((4, 1), (1,))\",\"('', '[True, False]')\","
	assert_line --index 8 --partial ",1,2.5,2.5,,2.5,2.5,2.5,3.571428571428571,100,2.5,2.5,,2.5,2.5,2.5"
	# Without the cpu_op ranges (the launchers' parents), an op's subtree
	# is its own kernels.
	ev-view "$T/x.ev" | awk -F'\t' '$1 != "range"' | ev-view --pack -o "$T/noranges.ev"
	run -0 --separate-stderr ev-stats ops-summary --csv "$T/noranges.ev"
	assert_line --index 4 "aten::index_put_,['other'],6,0.006,1,8.571428571428571,82.14285714285714,6,0.006"
}

@test "kineto2ev: an op's signature keeps the blanks inside its argument strings" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	run -0 --separate-stderr ev-stats ops --csv "$T/x.ev"
	assert_output --partial 'aten::embedding dims=[[8,4],[2]] types=[""c10::BFloat16"",""long int""] strides=[[4,1],[1]] concrete=["""",""[True, False]""]'
}

@test "report --tracelens equals TraceLens's own report of a small trace, in its layout" {
	kineto2ev --flow-links -q -o "$T/x.ev" "$FX"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl" "$T/x.ev"
	# TraceLens joins a GPU event to its call only through an ac2g flow:
	# aten::zero_'s memset (no 's' end) and aten::copy_'s kernel (its 'f'
	# end on another stream) have no op here, and kernel_summary lists
	# copy_kernel without one, as TraceLens's does.
	[[ "$stderr" == *"2 GPU events joined to their call by correlation id only (no ac2g flow) left without a call or op, as TraceLens leaves them"* ]]
	[[ "$stderr" != *"converted without kineto2ev --flow-links"* ]]
	# The subtree times, kernel_details, the process and thread names
	# (TraceLens's "Unknown": the trace has no metadata events) and
	# TraceLens's event ids (kineto2ev's aux) are in the stream.
	[[ "$stderr" != *"ops_summary:"* ]]
	[[ "$stderr" != *"ops_unique_args: ex_UID left empty"* ]]
	[[ "$stderr" != *"UID_first left empty"* ]]
	# A synthetic op's UID is TraceLens's count past the trace's last event
	# (kineto2ev's #src trace_events= and the GPU event's step_size).
	[[ "$stderr" != *"ex_UID left empty"* ]]
	[[ "$stderr" != *"process_name"* ]]
	# The kernels without a launching op (the orphan, and copy_'s, whose
	# flow ends on another stream) are in the histogram, not in the summary.
	[[ "$stderr" == *"short_kernel_histogram: 2 short kernels without a launching op left out of short_kernels_summary"* ]]
	# The NCCL kernel has no collective arguments: TraceLens writes no
	# coll_analysis, and neither does evkit.
	[[ "$stderr" == *"coll_analysis: 1 collectives without their process group's ranks, size, dtype or message size left out"* ]]
	run -1 grep -e 'aten::zero_' -e 'aten::copy_' "$T/tl/ops_summary.csv" "$T/tl/kernel_summary.csv"
	grep -q '^,,copy_kernel,8,6' "$T/tl/kernel_summary.csv"
	run -0 ls "$T/tl"
	assert_output "$(printf '%s.csv\n' BinaryElementwise GEMM UnaryElementwise gpu_timeline kernel_summary ops_summary ops_summary_by_category ops_unique_args $SHORT unified_perf_summary)"
	# shellcheck disable=SC2086 # SHEETS is a word list
	run -0 python3 "$CMP" "$REF/fixture" "$T/tl" $SHEETS $SHORT UnaryElementwise
	[ "$(grep -c '^  ' <<<"$output")" = 0 ]
	# ex_UID and UID_first too: the index in traceEvents of the group's
	# first op (or, for the memset launched outside any op, its call).
	assert_output --partial "ops_unique_args: 6 rows (0 in another order among ties), 162 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "GEMM: 1 rows (0 in another order among ties), 40 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "BinaryElementwise: 1 rows (0 in another order among ties), 38 cells equal, 0 empty in evkit, 0 differ"
	# unified_perf_summary: each GPU event once, under the op with a perf
	# model (aten::mm, aten::add: GFLOPS, TB/s, perf_params), else its
	# launching op with its subtree (aten::index_put_ with the nonzero
	# under it); the memset launched outside any op a synthetic op named
	# after its runtime call (its ex_UID 53, TraceLens's number past the
	# trace's last event); the allreduce_'s NCCL kernel in no row.
	assert_output --partial "unified_perf_summary: 5 rows (0 in another order among ties), 215 cells equal, 0 empty in evkit, 0 differ"
	# aten::copy_, its only kernel unlinked, is a row without kernel time
	# (TraceLens models every instance of its ops, launching or not).
	assert_output --partial "UnaryElementwise: 1 rows (0 in another order among ties), 36 cells equal, 0 empty in evkit, 0 differ"
	# TraceLens's short-kernel study (--short_kernel_study): the embedding's
	# 2.5 us kernel, index_put_'s own and the nonzero's under it,
	# per op and arguments, the orphan's 8 us in the last bin.
	assert_output --partial "short_kernels_summary: 3 rows (0 in another order among ties), 27 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "short_kernel_histogram: 100 rows (0 in another order among ties), 300 cells equal"
	# Each sheet's header is TraceLens's, as the contract has it (GEMM's
	# columns depend on the trace: the comparison above checks them).
	local s
	for s in ${SHEETS% GEMM BinaryElementwise} $SHORT; do
		grep -q "^$s	[^	]*	" "$REF/contract.tsv"
		[ "$(head -1 "$T/tl/$s.csv")" = "$(grep "^$s	[^	]*	" "$REF/contract.tsv" | cut -f3- | python3 -c 'import csv,sys; csv.writer(sys.stdout, lineterminator="\n").writerow(sys.stdin.read().rstrip("\n").split("\t"))')" ]
	done
	# A number TraceLens's report has that is wrong fails the comparison.
	sed 's/^aten::mm,30.5,/aten::mm,30.6,/' "$REF/fixture/ops_summary.csv" >"$T/ops_summary.csv"
	cp "$REF/fixture/gpu_timeline.csv" "$T/"
	run -1 python3 "$CMP" "$T" "$T/tl" ops_summary
	assert_output --partial "'total_direct_kernel_time_sum': TraceLens '30.6' evkit '30.5'"
	# So does a kernel's number in GEMM's kernel_details text.
	sed "s/'max_duration_us': 20.5}/'max_duration_us': 20.6}/" "$REF/fixture/GEMM.csv" >"$T/GEMM.csv"
	run -1 python3 "$CMP" "$T" "$T/tl" GEMM
	assert_output --partial "GEMM: row 0 'kernel_details__summarize_kernel_stats'"
}

@test "report --tracelens: ex_UID and UID_first from kineto2ev's event indices; a stream without them says so" {
	kineto2ev --flow-links -q -o "$T/x.ev" "$FX"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl" "$T/x.ev"
	# The first aten::mm is traceEvents[0]; the memset launched outside
	# any op has its call's index as TraceLens makes the call its op.
	run -0 python3 -c 'import csv, sys
for f, c in (("ops_unique_args", "ex_UID"), ("GEMM", "UID_first")):
    print(" ".join(r["name"] + "=" + r[c] for r in csv.DictReader(open(sys.argv[1] + "/" + f + ".csv", encoding="utf-8"))))' "$T/tl"
	assert_output "aten::mm=0 aten::add=6 aten::index_put_=34 cudaMemsetAsync=11 aten::nonzero=37 aten::embedding=29
aten::mm=0"
	# A stream of an older kineto2ev (aux 0 on ranges and calls): the
	# columns empty, said once per sheet.
	ev-view "$T/x.ev" | awk -F'\t' -v OFS='\t' '($1 == "range" && $2 == "cpu_op") || $1 == "api" { $16 = 0 } 1' |
		ev-view --pack -o "$T/old.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/old" "$T/old.ev"
	[[ "$stderr" == *"ops_unique_args: ex_UID left empty: not in evkit's stream"* ]]
	[[ "$stderr" == *"GEMM: UID_first left empty: not in evkit's stream"* ]]
	run -1 python3 "$CMP" "$REF/fixture" "$T/old" ops_unique_args GEMM
	assert_output --partial "ops_unique_args: 6 rows (0 in another order among ties), 156 cells equal, 6 empty in evkit, 0 differ"
	assert_output --partial "GEMM: 1 rows (0 in another order among ties), 39 cells equal, 1 empty in evkit, 0 differ"
	# One instance of aten::mm without its index: that row's cells empty
	# (its first might be that one), said; the others kept.
	ev-view "$T/x.ev" | awk -F'\t' -v OFS='\t' '$1 == "range" && $8 == "aten::mm" && ++n == 2 { $16 = 0 } 1' |
		ev-view --pack -o "$T/part.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/part" "$T/part.ev"
	[[ "$stderr" == *"ops_unique_args: 1 row(s) with an op instance whose op's UID (TraceLens's event index) is not known"*"ex_UID left empty"* ]]
	[[ "$stderr" == *"GEMM: 1 row(s) with an op instance whose op's UID (TraceLens's event index) is not known"*"UID_first left empty"* ]]
	run -1 python3 "$CMP" "$REF/fixture" "$T/part" ops_unique_args GEMM
	assert_output --partial "ops_unique_args: 6 rows (0 in another order among ties), 161 cells equal, 1 empty in evkit, 0 differ"
	assert_output --partial "GEMM: 1 rows (0 in another order among ties), 39 cells equal, 1 empty in evkit, 0 differ"
	assert_output --partial "ops_unique_args: row 0 'ex_UID': TraceLens '0' evkit empty"
}

@test "report --tracelens: unified_perf_summary's walk of the op tree equals TraceLens's (small trace)" {
	kineto2ev --flow-links -q -o "$T/x.ev" "$TESTS_DIR/fixtures/ev-stats/tracelens-unified.json"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl" "$T/x.ev"
	# aten::mm under aten::linear is the modelled op: a row with GFLOPS;
	# the linears' own kernels are synthetic ops (two instances, one row);
	# the allreduce_'s copy kernel too, its NCCL kernel in no row; the
	# layer_norm takes its native_layer_norm's kernel.
	# The synthetic ops' ex_UID too, TraceLens's numbers past the trace's
	# last event (35 events): the linears' row the first of its two.
	run -0 python3 "$CMP" "$REF/unified" "$T/tl" unified_perf_summary
	[ "$(grep -c '^  ' <<<"$output")" = 0 ]
	assert_output --partial "unified_perf_summary: 4 rows (0 in another order among ties), 172 cells equal, 0 empty in evkit, 0 differ"
	run -0 python3 -c 'import csv, sys; [print(r["name"], r["op category"], r["operation_count"], sep=",") for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))]' "$T/tl/unified_perf_summary.csv"
	assert_line --index 1 "aten::linear->linear_bias_kernel (Synthetic Op),other,2"
	assert_line --index 3 "c10d::allreduce_->copy_into_buffer_kernel (Synthetic Op),other,1"
	run -1 grep -c nccl "$T/tl/unified_perf_summary.csv"
}

@test "report --tracelens: synthetic ops' ex_UID as TraceLens numbers them; without the numbers, said" {
	# Launched outside any op: a hipGraphLaunch's two kernels, a kernel and
	# a memset of their own calls; under ops no row takes: the linears'
	# own kernels.  The trace lists its GPU events out of time order.
	kineto2ev --flow-links -q -o "$T/x.ev" "$TESTS_DIR/fixtures/ev-stats/tracelens-synuid.json"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl" "$T/x.ev"
	[[ "$stderr" != *"ex_UID left empty"* ]]
	run -0 python3 "$CMP" "$REF/synuid" "$T/tl" unified_perf_summary
	assert_output "unified_perf_summary: 6 rows (0 in another order among ties), 258 cells equal, 0 empty in evkit, 0 differ"
	# From the trace's 31 events on: first the events of calls outside any
	# op, each call's together (the graph's two, though the other call's
	# kernel lies between them in the file), the calls in the order of
	# their first event in the file; then those under an op, in file order
	# (the linears' row is its later instance's, listed first).  Equal
	# kernel times (graph_kernel_a, orphan_kernel_x) in ex_UID's order.
	run -0 python3 -c 'import csv, sys
print(" ".join(r["name"].split("->")[-1] + "=" + r["ex_UID"] for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))))' \
		"$T/tl/unified_perf_summary.csv"
	assert_output "aten::mm=1 linear_bias_kernel (Synthetic Op)=35 graph_kernel_b (Synthetic Op)=32 graph_kernel_a (Synthetic Op)=31 orphan_kernel_x (Synthetic Op)=33 Memset (Device) (Synthetic Op)=34"
	# One GPU event without its index (another producer, an older
	# kineto2ev): every synthetic op's number depends on it, so the five
	# are left empty, said; the op's kept.
	ev-view "$T/x.ev" | awk -F'\t' -v OFS='\t' '$1 == "memset" { $26 = 0 } 1' | ev-view --pack -o "$T/old.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/old" "$T/old.ev"
	[[ "$stderr" == *"unified_perf_summary: ex_UID left empty on 5 synthetic op row(s)"*"the stream has not that order or the trace's event count"* ]]
	uids() {
		python3 -c 'import csv, sys
print(" ".join(r["name"].split("->")[-1].split(" ")[0] + "=" + r["ex_UID"] for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))))' "$1"
	}
	run -0 uids "$T/old/unified_perf_summary.csv"
	# (equal kernel times then in evkit's order of collection)
	assert_output "aten::mm=1 linear_bias_kernel= graph_kernel_b= orphan_kernel_x= graph_kernel_a= Memset="
	# Without the trace's event count (#src trace_events=): the same.
	ev-view "$T/x.ev" | sed '/^#src /s/ trace_events=[0-9]*//' | ev-view --pack -o "$T/nocount.ev"
	run -1 grep -a trace_events "$T/nocount.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/nocount" "$T/nocount.ev"
	[[ "$stderr" == *"unified_perf_summary: ex_UID left empty on 5 synthetic op row(s)"*"the stream has not that order or the trace's event count"* ]]
	cmp "$T/old/unified_perf_summary.csv" "$T/nocount/unified_perf_summary.csv"
}

@test "report --tracelens: an op's GPU events past the first 32 leave the synthetic ops' ex_UID empty, said" {
	# aten::linear over a modelled aten::mm launches 34 kernels itself:
	# synthetic ops, of which evkit keeps an instance's first 32 events
	# (the mm's kernel among them): TraceLens numbers all 34.
	python3 - "$T/t.json" <<-'PY'
		import json, sys
		def op(name, ext, ts, dur):
		    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
		            "args": {"External id": ext, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"],
		                     "Input Strides": [[3, 1], [1, 1]], "Concrete Inputs": ["", ""]}}
		ev = [op("aten::linear", 1, 100, 1000), op("aten::mm", 2, 110, 15)]
		gpu = []
		for i in range(35):
		    c, t = 100 + i, 120 + 20 * i
		    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t,
		               "dur": 3, "args": {"External id": 2 if i == 0 else 1, "correlation": c}})
		    ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 1, "tid": 1, "ts": t, "bp": "e"})
		    gpu.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel" if i == 0 else "bias_kernel", "pid": 0,
		                "tid": 7, "ts": 2000 + 10 * i, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": c}})
		    gpu.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 0, "tid": 7, "ts": 2000 + 10 * i,
		                "bp": "e"})
		json.dump({"traceEvents": ev + gpu}, open(sys.argv[1], "w"))
	PY
	kineto2ev --flow-links -q -o "$T/t.ev" "$T/t.json"
	run -0 --separate-stderr ev-stats unified --csv "$T/t.ev"
	[[ "$stderr" == *"3 GPU event(s) past the first 32 of their op, which TraceLens makes synthetic ops of: left out"* ]]
	[[ "$stderr" == *"ex_UID left empty on 1 synthetic op row(s)"*"GPU events past the first of their op that evkit keeps were left out"* ]]
	python3 -c 'import csv, sys
print(" ".join(r["name"] + "=" + r["ex_UID"] + "x" + r["operation_count"] for r in csv.DictReader(sys.stdin)))' <<<"$output" >"$T/rows"
	[ "$(cat "$T/rows")" = "aten::linear->bias_kernel (Synthetic Op)=x31 aten::mm=1x1" ]
}

@test "unified: Triton kernels' numbers from their op's args, and said where the args are not" {
	# torch.compile's launcher ops: the first with its args (TraceLens's
	# V2), the other two without (TraceLens's V1 reads Inductor's cache
	# directory, evkit does not): counted and said once.
	cat >"$T/t.json" <<-'EOF'
	{"traceEvents": [
	{"ph": "X", "cat": "cpu_op", "name": "triton_poi_fused_add_mul_0", "pid": 7, "tid": 8, "ts": 10, "dur": 10, "args": {"External id": 1, "Input Dims": [[1024], [1024], []], "Input type": ["c10::Float", "c10::Float", "Scalar"], "Input Strides": [[1], [1], []], "Concrete Inputs": ["", "", "1024"]}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 11, "dur": 2, "args": {"correlation": 10, "External id": 1}},
	{"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_mul_0", "pid": 0, "tid": 7, "ts": 15, "dur": 4, "args": {"stream": 7, "correlation": 10, "External id": 1}},
	{"ph": "X", "cat": "cpu_op", "name": "triton_red_fused_sum_1", "pid": 7, "tid": 8, "ts": 30, "dur": 10, "args": {"External id": 2}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 31, "dur": 2, "args": {"correlation": 20, "External id": 2}},
	{"ph": "X", "cat": "kernel", "name": "triton_red_fused_sum_1", "pid": 0, "tid": 7, "ts": 35, "dur": 4, "args": {"stream": 7, "correlation": 20, "External id": 2}},
	{"ph": "X", "cat": "cpu_op", "name": "triton_red_fused_sum_1", "pid": 7, "tid": 8, "ts": 50, "dur": 10, "args": {"External id": 3}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 51, "dur": 2, "args": {"correlation": 30, "External id": 3}},
	{"ph": "X", "cat": "kernel", "name": "triton_red_fused_sum_1", "pid": 0, "tid": 7, "ts": 55, "dur": 4, "args": {"stream": 7, "correlation": 30, "External id": 3}}
	]}
	EOF
	kineto2ev -q -o "$T/t.ev" "$T/t.json"
	run -0 --separate-stderr ev-stats unified "$T/t.ev"
	# add (1 FLOP) and mul (1) over 1024 elements; two tensors of 1024
	# floats and the pointwise write again: 12288 bytes.
	run -0 python3 -c 'import csv, sys; [print(r["name"], r["GFLOPS"], r["Data Moved (MB)"], r["Compute Spec"], r["perf_params"], sep="|") for r in csv.DictReader(sys.stdin, delimiter="\t")]' <<<"$output"
	assert_line "triton_poi_fused_add_mul_0|2.048e-06|0.01171875|vector_float|{'fused_ops': 'aten.add, aten.mul', 'xnumel': 1024, 'rnumel': 1}"
	assert_line "triton_red_fused_sum_1||||"
	[ "$(grep -c "2 op instance(s) without the args their perf model reads (first: triton_red_fused_sum_1): GFLOPS, data moved, TB/s, TFLOPS/s and perf_params left empty; TraceLens's Triton model reads Concrete Inputs, Input Dims and Input type from the trace" <<<"$stderr")" = 1 ]
}

@test "report --tracelens on a stream converted without --flow-links keeps correlation links and says so once" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl" "$T/x.ev"
	[ "$(grep -c 'GPU events were joined to their call by correlation id (the stream was converted without kineto2ev --flow-links); TraceLens joins them only through ac2g flows: convert with kineto2ev --flow-links for TraceLens.s numbers' <<<"$stderr")" = 1 ]
	[[ "$stderr" != *"left without a call or op"* ]]
	# So copy_'s kernel keeps its op, where TraceLens has none.
	grep -q '^elementwise,aten::copy_,copy_kernel,8,6' "$T/tl/kernel_summary.csv"
	run -1 python3 "$CMP" "$REF/fixture" "$T/tl" kernel_summary
	# One source checked and one not, merged: still said.
	kineto2ev --flow-links -q -o "$T/f.ev" "$FX"
	ev-merge -q -o "$T/m.ev" "$T/f.ev" "$T/x.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl2" "$T/m.ev"
	[[ "$stderr" == *"converted without kineto2ev --flow-links"* ]]
	# Every source checked: not said.
	ev-merge -q -o "$T/m2.ev" "$T/f.ev" "$T/f.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl3" "$T/m2.ev"
	[[ "$stderr" != *"converted without"* ]]
}

@test "perf --table gemm: TraceLens's GEMM parameters, FLOPs, bytes and kernel details of a small trace" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	# Two aten::mm of [2,3]x[3,4] floats: 2*2*4*3 FLOPs, (6+12+8)*4 bytes;
	# 10 and 20.5 us of one kernel, numpy's population std 5.25.
	run -0 --separate-stderr ev-stats perf --table gemm --tracelens-float --csv "$T/x.ev"
	assert_line --index 0 --partial "name,param: M,param: N,param: K,param: bias,param: stride_A,param: stride_B,param: dtype_A_B,param: B,Compute Spec,"
	assert_line --index 1 --partial "aten::mm,2,4,3,False,\"(1, 1)\",\"(1, 1)\",\"('float', 'float')\",1,matrix_fp32,\"[{'name': 'gemm_kernel_a', 'stream': 7, 'count': 2, 'total_duration_us': np.float64(30.5), 'mean_duration_us': np.float64(15.25), 'median_duration_us': np.float64(15.25), 'std_dev_duration_us': np.float64(5.25), 'min_duration_us': np.float64(10.0), 'max_duration_us': np.float64(20.5)}]\""
	assert_line --index 1 --partial ",4.8e-08,9.918212890625e-05,0.46153846153846156,"
	[ "${#lines[@]}" = 2 ]
	# A Tensile kernel name gives the transpose parameter (A as Alik:
	# transposed), a column of its own after TraceLens's B.
	sed 's/"gemm_kernel_a"/"Cijk_Alik_Bljk_HHS_BH_MT64x64x32"/' "$FX" >"$T/t.json"
	kineto2ev -q -o "$T/t.ev" "$T/t.json"
	run -0 --separate-stderr ev-stats perf --csv "$T/t.ev"
	assert_line --index 0 --partial "param: dtype_A_B,param: B,param: transpose,Compute Spec"
	assert_line --index 1 --partial "('float', 'float')\",1,\"(True, False)\",matrix_fp32"
}

@test "perf --table binary, unary, reduce: TraceLens's elementwise and reduce models of a small trace" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	# The add of two [4] floats: 4 FLOPs, (4 + 4 + 4) * 4 bytes (no output
	# argument: the output's size is the larger input's); its two kernels
	# overlap, 15 us busy.
	run -0 --separate-stderr ev-stats perf --table binary --tracelens-float --csv "$T/x.ev"
	assert_line --index 0 --partial "name,param: shape_in1,param: shape_in2,param: dtype_in1_in2_out,param: stride_input1,param: stride_input2,param: stride_output,Compute Spec,"
	assert_line --index 1 --partial "aten::add,\"(4,)\",\"(4,)\",\"('float', 'float', None)\",\"(1,)\",\"(1,)\",None,vector_fp32,"
	assert_line --index 1 --partial ",4e-09,4.57763671875e-05,0.08333333333333333,"
	[ "${#lines[@]}" = 2 ]
	# An add launching nothing, listed (and run) before it with other
	# Concrete Inputs, is an instance without kernel time, as TraceLens
	# models every instance: 2 instances, 15 us in all, min 0, std of 15
	# and 0; kernel_details is the other's, the first arguments its own
	# (TraceLens's report of this trace has the same).
	local none='import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
i = next(k for k, e in enumerate(ev) if e.get("name") == "aten::add")
e = dict(ev[i], ts=260, dur=10)
e["args"] = dict(ev[i]["args"], **{"External id": 11, "Concrete Inputs": ["", "", "2"]})
ev.insert(i, e)
json.dump(t, open(sys.argv[2], "w"))'
	python3 -c "$none" "$FX" "$T/e.json"
	kineto2ev -q -o "$T/e.ev" "$T/e.json"
	run -0 --separate-stderr ev-stats perf --table binary --tracelens-float --csv "$T/e.ev"
	[ "${#lines[@]}" = 2 ]
	assert_line --index 1 --partial "\"[{'name': 'void at::native::vectorized_elementwise_kernel<4, add2>', 'stream': 8, 'count': 1,"
	assert_line --index 1 --partial ",\"['', '', '2']\","
	[[ "${lines[1]}" == *,7.5,7.5,10.606601717798213,0,15,15,2,6 ]]
	[[ "$stderr" == *"1 op instance(s) with another number of GPU events (none included) than their group's first with some: not in kernel_details"* ]]
	# As a unary op, Input Dims[1] (a tensor) is the output: its type and
	# strides; 4 FLOPs, (4 + 4) * 4 bytes.
	sed 's/"aten::add"/"aten::neg"/' "$FX" >"$T/u.json"
	kineto2ev -q -o "$T/u.ev" "$T/u.json"
	run -0 --separate-stderr ev-stats perf --table unary --tracelens-float --csv "$T/u.ev"
	assert_line --index 0 --partial "name,param: op_shape,param: dtype_in_out,param: stride_input,param: stride_output,Compute Spec,"
	assert_line --index 1 --partial "aten::neg,\"(4,)\",\"('float', 'float')\",\"(1,)\",\"(1,)\",vector_fp32,"
	assert_line --index 1 --partial ",4e-09,3.0517578125e-05,0.125,"
	# A pad and an upsampling: the output's shape from Concrete Inputs[1]
	# (pairs innermost first; the spatial size after N, C), FLOPs one per
	# output element, bytes 4 in + 7 (4 * 9) out floats (TraceLens's own
	# classes give the same).
	local edit='import json, sys
t = json.load(open(sys.argv[1]))
for e in t["traceEvents"]:
    if e.get("name") == "aten::add":
        e["name"], e["args"]["Concrete Inputs"] = sys.argv[3], ["", sys.argv[4], ""]
json.dump(t, open(sys.argv[2], "w"))'
	python3 -c "$edit" "$FX" "$T/p.json" aten::replication_pad1d "[1, 2]"
	kineto2ev -q -o "$T/p.ev" "$T/p.json"
	run -0 --separate-stderr ev-stats perf --table unary --tracelens-float --csv "$T/p.ev"
	assert_line --index 1 --partial "aten::replication_pad1d,\"(4,)\",\"(7,)\",\"[1, 2]\",\"(7,)\",\"('float', 'float')\",\"(1,)\",None,vector_fp32,"
	assert_line --index 1 --partial ",7e-09,4.1961669921875e-05,0.1590909090909091,"
	python3 -c "$edit" "$FX" "$T/p.json" aten::upsample_nearest1d "[9]"
	kineto2ev -q -o "$T/p.ev" "$T/p.json"
	run -0 --separate-stderr ev-stats perf --table unary --tracelens-float --csv "$T/p.ev"
	assert_line --index 1 --partial "aten::upsample_nearest1d,\"(4,)\",\"(4, 9)\",\"(4, 9)\",\"('float', 'float')\",\"(1,)\",None,vector_fp32,"
	assert_line --index 1 --partial ",3.6e-08,0.000152587890625,0.225,"
	# As a sum: Concrete Inputs are strings, so TraceLens reads no dim and
	# reduces to one element: (4 + 1) * 4 bytes.
	sed 's/"aten::add"/"aten::sum"/' "$FX" >"$T/r.json"
	kineto2ev -q -o "$T/r.ev" "$T/r.json"
	run -0 --separate-stderr ev-stats perf --table reduce --tracelens-float --csv "$T/r.ev"
	assert_line --index 0 --partial "name,param: num_input_elems,param: num_output_elems,param: dtype_in_out,param: reduce_type,Compute Spec,"
	assert_line --index 1 --partial "aten::sum,4,1,\"('float', None)\",sum,vector_fp32,"
	assert_line --index 1 --partial ",4e-09,1.9073486328125e-05,0.2,"
	# Its backward needs the forward-backward links of kineto2ev
	# --flow-links: said missing.
	run -0 --separate-stderr ev-stats perf --table reduce_bwd --csv "$T/r.ev"
	[[ "$stderr" == *"1 op(s) of the Reduce_bwd sheet in sources without forward-backward links"* ]]
	[ "$(grep -c aten:: <<<"$output")" = 0 ]
	# Shapes that do not broadcast: TraceLens's model fails, the op is left out.
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); [e["args"].__setitem__("Input Dims", [[4],[3],[]]) for e in t["traceEvents"] if e.get("name")=="aten::add"]; json.dump(t, open(sys.argv[2], "w"))' "$FX" "$T/b.json"
	kineto2ev -q -o "$T/b.ev" "$T/b.json"
	run -0 --separate-stderr ev-stats perf --table binary --csv "$T/b.ev"
	[ "${#lines[@]}" = 1 ]
	[[ "$stderr" == *"1 BinaryElementwise op instance(s) whose arguments the model cannot read (first: aten::add)"* ]]
}

@test "perf --table reduce_bwd: a forward reduce op's backward, every cell TraceLens's (fwdbwd fixture)" {
	# aten::mean and aten::sum on one thread; on the autograd thread their
	# evaluate_function ops, a fwdbwd flow from each forward op to its
	# autograd node: MeanBackward0's aten::div (6 us) and the aten::add_
	# after the node, inside evaluate_function (4 us), count for
	# aten::mean, SumBackward0's aten::expand (3 us) for aten::sum.
	F="$TESTS_DIR/fixtures/ev-stats/tracelens-fwdbwd.json"
	kineto2ev --flow-links -q -o "$T/x.ev" "$F"
	run -0 --separate-stderr ev-stats perf --table reduce_bwd --tracelens-float --csv "$T/x.ev"
	assert_line --index 1 --partial "aten::mean,16,1,\"('float', None)\",mean,vector_fp32,\"[{'name': 'accum_kernel'"
	assert_line --index 1 --partial ",10,10,,10,10,10,1"
	assert_line --index 2 --partial "aten::sum,16,1,"
	[ "${#lines[@]}" = 3 ]
	ev-stats report -q --tracelens --csv -o "$T/r" "$T/x.ev"
	run -0 python3 "$CMP" "$REF/fwdbwd" "$T/r" Reduce_fwd Reduce_bwd
	assert_output --partial "Reduce_bwd: 2 rows (0 in another order among ties), 72 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "Reduce_fwd: 2 rows (0 in another order among ties), 72 cells equal, 0 empty in evkit, 0 differ"
	# The workbook's sheets in TraceLens's order: Reduce_bwd after Reduce_fwd.
	ev-stats report -q --tracelens --xlsx -o "$T/r.xlsx" "$T/x.ev"
	need_openpyxl
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; print(" ".join(openpyxl.load_workbook(sys.argv[1]).sheetnames))' "$T/r.xlsx"
	assert_output --partial "Reduce_fwd Reduce_bwd kernel_summary"
}

@test "perf: ops waiting for a GPU event are held in bounded memory, past it closed and said" {
	# 270,000 aten::neg ranges 100 ns apart, none launching; then a
	# kernel of the first.  Each op waits for its events a minute, at
	# most 262,144 of them: past that the oldest half closes without
	# kernel time, so the first op, its kernel coming later, counts twice
	# (270,001 instances), and that is said.
	kineto2ev -q -o "$T/x.ev" "$FX"
	local sig='aten::neg dims=[[4]] types=["float"] strides=[[1]] concrete=[""]'
	{
		ev-view "$T/x.ev" | grep -a -e '^type' -e '^#ev' -e '^#src' -e '^#rank'
		awk -v sig="$sig" 'BEGIN { OFS = "\t"
			for (i = 1; i <= 270000; i++)
				print "range", "cpu_op", 0, 1, i * 100, 50, 0, "aten::neg", sig, 0, 0, -1, i, 0, 0, 0, "-", "-", "-", "-", "-", 0, 0, 0, 0, 0
			print "kernel", "elementwise", 0, 7, 27005000, 2000, 0, "neg_kernel", sig, 0, 0, -1, 900001, 0, 1, 0, "-", "-", "-", "-", "-", 0, 0, 0, 0, 0 }'
	} | ev-view --pack -o "$T/w.ev"
	run -0 --separate-stderr ev-stats perf --table unary --csv "$T/w.ev"
	[[ "${lines[1]}" == *,2,2,270001 ]]
	[[ "$stderr" == *"131072 UnaryElementwise op(s) closed without kernel time, past 262144 waiting for their GPU events: one whose events came later counts as two instances"* ]]
	# Under the bound: every op once, nothing said.
	ev-view "$T/w.ev" | awk -F'\t' '$1 != "range" || $13 <= 1000' | ev-view --pack -o "$T/s.ev"
	run -0 --separate-stderr ev-stats perf --table unary --csv "$T/s.ev"
	[[ "${lines[1]}" == *,2,2,1000 ]]
	[[ "$stderr" != *"waiting for their GPU events"* ]]
}

@test "report --tracelens: a workbook of TraceLens's sheets in its order; --tracelens only for report" {
	kineto2ev --flow-links -q -o "$T/x.ev" "$FX"
	ev-stats report -q --tracelens --xlsx -o "$T/r.xlsx" "$T/x.ev"
	run -2 ev-stats kernels --tracelens "$T/x.ev"
	assert_output --partial "kernels: --tracelens does not apply (it is for: report)"
	need_openpyxl
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; w = openpyxl.load_workbook(sys.argv[1]); print(" ".join(w.sheetnames)); print([c.value for c in w["ops_summary"][1]][:3])' "$T/r.xlsx"
	assert_line --index 0 "gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM BinaryElementwise UnaryElementwise kernel_summary short_kernel_histogram short_kernels_summary"
	assert_line --index 1 "['name', 'total_direct_kernel_time_sum', 'total_subtree_kernel_time_sum']"
}

@test "report --tracelens equals TraceLens's reports of real traces (shared data)" {
	need_shared_data
	local t d want
	for t in h100/Qwen_Qwen1.5-0.5B-Chat__1016005 mi300/Qwen_Qwen1.5-0.5B-Chat__1016005 \
		mi300/gaunernst_bert-small-uncased__1016001 torch_compile_triton/trace; do
		d="$T/$(basename "$t")"
		kineto2ev --flow-links -q -o "$T/x.ev" "$TL/$t.json.gz"
		ev-stats report -q --tracelens --csv -o "$d" "$T/x.ev"
		# shellcheck disable=SC2086 # SHEETS is a word list
		run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" ${SHEETS% BinaryElementwise}
		# Every cell of ops_summary and ops_unique_args (subtree times,
		# kernel_details, process and thread names, TraceLens's event id
		# ex_UID), and GEMM's UID_first.
		[[ "$output" =~ ops_summary:\ [0-9]+\ rows\ [^,]*,\ [0-9]+\ cells\ equal,\ 0\ empty ]]
		[[ "$output" =~ ops_unique_args:\ [0-9]+\ rows\ [^,]*,\ [0-9]+\ cells\ equal,\ 0\ empty ]]
		[[ "$output" =~ GEMM:\ [0-9]+\ rows\ [^,]*,\ [0-9]+\ cells\ equal,\ 0\ empty ]]
		# unified_perf_summary: every cell, on torch.compile the numbers
		# and perf_params of its 4 Triton ops (perf_triton.c) included.
		[[ "$output" =~ unified_perf_summary:\ [0-9]+\ rows\ \(0\ [^,]*,\ [0-9]+\ cells\ equal,\ 0\ empty ]]
		[ "$t" != torch_compile_triton/trace ] ||
			assert_output --partial "unified_perf_summary: 8 rows (0 in another order among ties), 344 cells equal, 0 empty in evkit, 0 differ"
		# Every op's process and thread names are there (and equal
		# TraceLens's, above).
		run -0 python3 -c 'import csv,sys; sys.exit(not all(r[c] not in ("", "Unknown") for f, c in ((sys.argv[1], "thread_name"), (sys.argv[2], "thread_name_first"), (sys.argv[2], "process_label_first")) for r in csv.DictReader(open(f, encoding="utf-8"))))' "$d/ops_unique_args.csv" "$d/GEMM.csv"
		# The short-kernel study, every cell (torch.compile's: no kernel
		# under 10 us, both empty).
		# shellcheck disable=SC2086 # SHORT is a word list
		run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" $SHORT
		# The perf-model sheets of ops whose kernels their child ops
		# launch (aten::_flash_attention_forward under SDPA's op).
		run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" SDPA_fwd
		assert_output --partial "SDPA_fwd: 1 rows (0 in another order among ties), 43 cells equal, 0 empty in evkit, 0 differ"
		# Normalization: BERT's layer norms (aten::layer_norm and the
		# aten::native_layer_norm under it, each a row).
		if [ -f "$TL/${t}_perf_report_csvs/Normalization.csv" ]; then
			run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" Normalization
			assert_output --partial "Normalization: 2 rows (0 in another order among ties), 80 cells equal, 0 empty in evkit, 0 differ"
		else
			[ ! -f "$d/Normalization.csv" ]
		fi
		# The elementwise and reduce sheets: evkit writes one exactly when
		# TraceLens does.
		for s in UnaryElementwise BinaryElementwise Reduce_fwd Reduce_bwd; do
			[ -f "$TL/${t}_perf_report_csvs/$s.csv" ] || { [ ! -f "$d/$s.csv" ] && continue; }
			run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" "$s"
		done
	done
	# resnet: TraceLens joins a GPU event to its call only through an
	# ac2g flow, and this ROCm trace has no 's' end for its 81 memsets;
	# kineto2ev --flow-links flags them noflow and the report leaves them
	# without an op as TraceLens does, so every sheet TraceLens wrote is
	# equal, the subtree times and ops_unique_args (split by thread, as
	# TraceLens does) included.
	kineto2ev --flow-links -q -o "$T/x.ev" "$TL/mi300/resnet_act_checkpoint.json.gz"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/resnet" "$T/x.ev"
	[[ "$stderr" == *"81 GPU events joined to their call by correlation id only (no ac2g flow) left without a call or op"* ]]
	[[ "$stderr" != *"ex_UID left empty"* ]]
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" gpu_timeline ops_summary ops_summary_by_category kernel_summary GEMM ops_unique_args
	assert_output --partial "gpu_timeline: 8 rows (0 in another order among ties), 24 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "ops_summary: 21 rows (0 in another order among ties), 189 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "ops_summary_by_category: 9 rows (0 in another order among ties), 45 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "118 rows"
	assert_output --partial "GEMM: 3 rows (0 in another order among ties), 123 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "ops_unique_args: 126 rows (0 in another order among ties), 3402 cells equal, 0 empty in evkit, 0 differ"
	# The short-kernel study (made with --short_kernel_study): the NCCL
	# broadcasts' short kernels under record_param_comms, ties in TraceLens's
	# order of first appearance.
	# shellcheck disable=SC2086 # SHORT is a word list
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" $SHORT
	assert_output --partial "short_kernels_summary: 144 rows (0 in another order among ties), 1296 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "short_kernel_histogram: 100 rows (0 in another order among ties), 300 cells equal, 0 empty in evkit, 0 differ"
	# coll_analysis: the rank's 12 NCCL kernels with their collective's
	# arguments, per group and kind; its 5 without are left out, as
	# TraceLens's groupby leaves them out; sizes in MB of 2^20 bytes.
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" coll_analysis
	assert_output --partial "coll_analysis: 4 rows (0 in another order among ties), 76 cells equal, 0 empty in evkit, 0 differ"
	# Batch norms, forward (on two threads: recomputed in the backward)
	# and backward (output_mask); TraceLens's resnet CSVs of them came
	# from the same run (tests/expected/tracelens/README.md).
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" Normalization
	assert_output --partial "Normalization: 15 rows (0 in another order among ties), 615 cells equal, 0 empty in evkit, 0 differ"
	# Convolutions: parameters, GFLOPS, data moved and kernel times, those
	# of the groups whose instances launch one of the memsets included.
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" CONV_fwd CONV_bwd
	assert_output --partial "CONV_fwd: 11 rows (0 in another order among ties), 495 cells equal, 0 empty in evkit, 0 differ"
	assert_output --partial "CONV_bwd: 11 rows (0 in another order among ties), 495 cells equal, 0 empty in evkit, 0 differ"
	# unified_perf_summary: every cell, the synthetic ops of kernels whose
	# op has a modelled op under it (aten::mse_loss's) in TraceLens's busy
	# time of one kernel on the trace's time stamps, and their ex_UID
	# TraceLens's number past the trace's 56451 events.  The backward ops
	# TraceLens models through their forward op all have a modelled op
	# under them here, which takes their kernels.
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" unified_perf_summary
	[ "$(grep -c '^  ' <<<"$output")" = 0 ]
	assert_output --partial "unified_perf_summary: 125 rows (0 in another order among ties), 5375 cells equal, 0 empty in evkit, 0 differ"
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" Reduce_fwd
	assert_output --partial "Reduce_fwd: 3 rows (0 in another order among ties), 108 cells equal, 0 empty in evkit, 0 differ"
	# The backward of the forward aten::mean that its fwdbwd flow links to
	# MeanBackward0: the kernels of its evaluate_function op's subtree.
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" Reduce_bwd
	assert_output --partial "Reduce_bwd: 1 rows (0 in another order among ties), 36 cells equal, 0 empty in evkit, 0 differ"
	# Every binary row, aten::div by a Scalar too, whose kernel its child
	# aten::div launches (the op credited its subtree).
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" BinaryElementwise
	assert_output --partial "BinaryElementwise: 29 rows (0 in another order among ties), 1102 cells equal, 0 empty in evkit, 0 differ"
	# Every unary row: the uint8 copy_ that launched nothing (a CPU copy)
	# is a row with no kernel time, as TraceLens models every instance of
	# its ops; the bf16 copy_ groups on two threads take their first
	# instance's arguments (non_blocking False) from the first in the trace
	# file (the least UID), not from the earliest in time (True).
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" UnaryElementwise
	assert_output --partial "UnaryElementwise: 24 rows (0 in another order among ties), 864 cells equal, 0 empty in evkit, 0 differ"
}

@test "report --tracelens --xlsx: the workbook, read with openpyxl, equals TraceLens's every sheet on the five real traces (shared data)" {
	need_shared_data
	need_openpyxl
	local t ref sheets
	# TraceLens's CSVs: shared data's for four traces, ResNet's made here
	# (tests/expected/tracelens/README.md); every sheet TraceLens wrote.
	for t in h100/Qwen_Qwen1.5-0.5B-Chat__1016005 mi300/Qwen_Qwen1.5-0.5B-Chat__1016005 \
		mi300/gaunernst_bert-small-uncased__1016001 torch_compile_triton/trace mi300/resnet_act_checkpoint; do
		ref="$TL/${t}_perf_report_csvs"
		[ "$t" != mi300/resnet_act_checkpoint ] || ref="$REF/resnet_act_checkpoint"
		sheets=$(cd "$ref" && ls -- *.csv | sed 's/\.csv$//')
		# The trace itself (converted in ev-stats' process); on one, the
		# same bytes as through kineto2ev.
		SOURCE_DATE_EPOCH=1700000000 ev-stats report -q --tracelens --xlsx -o "$T/w.xlsx" "$TL/$t.json.gz"
		if [ "$t" = h100/Qwen_Qwen1.5-0.5B-Chat__1016005 ]; then
			kineto2ev --flow-links -q "$TL/$t.json.gz" |
				SOURCE_DATE_EPOCH=1700000000 ev-stats report -q --tracelens --xlsx -o "$T/p.xlsx" -
			cmp "$T/p.xlsx" "$T/w.xlsx"
		fi
		# shellcheck disable=SC2086 # sheets is a word list
		run -0 "$PY_XLSX" "$CMP" "$ref" "$T/w.xlsx" $sheets
		# Every sheet, every cell: none empty, none different.
		[ "$(grep -c ' 0 empty in evkit, 0 differ$' <<<"$output")" = "$(wc -w <<<"$sheets")" ]
		# And no sheet TraceLens did not write (its perf sheets only
		# when they have rows).
		run -0 "$PY_XLSX" -c 'import openpyxl, sys; print(*sorted(openpyxl.load_workbook(sys.argv[1], read_only=True).sheetnames))' "$T/w.xlsx"
		[ "$output" = "$(tr ' ' '\n' <<<"$sheets" | LC_ALL=C sort | paste -sd' ')" ]
	done
}

@test "report --tracelens: GEMM's kernel_details, min and max make aorta's top-5 variance table (shared data)" {
	need_shared_data
	# aorta's analyze_gemm_reports.py over TraceLens's GEMM sheets of the
	# aorta sweep (tests/expected/aorta), done on evkit's (aorta-top5.py).
	local th ch r f
	for th in 256 512; do
		for ch in 28 56; do
			for r in 0 1 2 3 4 5 6 7; do
				f=$(printf '%s\n' "$SHARED_DATA/kineto/aorta-sweep/${th}thread/nccl_${ch}channels/torch_profiler/rank$r/"*.json*)
				kineto2ev -q -o "$T/x.ev" "$f"
				ev-stats report -q --tracelens --csv -o "$T/$th-$ch-$r" "$T/x.ev"
			done
		done
	done
	run -0 python3 "$TESTS_DIR/aorta-top5.py" "$T" "$TESTS_DIR/expected/aorta/top5_gemm_kernels_time_variance.csv"
	assert_output "160 rows equal"
}

@test "the sheet/column contract is the headers of TraceLens's CSVs (shared data)" {
	need_shared_data
	run -0 "$REF/make-contract.sh" "$SHARED_DATA"
	[ "$output" = "$(cat "$REF/contract.tsv")" ]
}

@test "kineto2ev keeps process and thread names; ev-stats names each op's (TraceLens's columns)" {
	# Two threads of one process, named by metadata events (the second
	# thread named twice: the last wins, as in TraceLens's dict); its ops
	# are listed first in the file, so a group's first is its.  A process
	# name under a tid other than 0 is not where TraceLens looks.
	cat >"$T/m.json" <<-'EOF'
	{"traceEvents": [
	{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 9, "ts": 50, "dur": 10, "args": {"External id": 2, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Input Strides": [[3, 1], [4, 1]], "Concrete Inputs": ["", "9"]}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 9, "ts": 51, "dur": 2, "args": {"correlation": 20, "External id": 2}},
	{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 10, "dur": 10, "args": {"External id": 1, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Input Strides": [[3, 1], [4, 1]], "Concrete Inputs": ["", ""]}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 11, "dur": 2, "args": {"correlation": 10, "External id": 1}},
	{"ph": "X", "cat": "kernel", "name": "gemm_kernel_a", "pid": 0, "tid": 7, "ts": 15, "dur": 4, "args": {"stream": 7, "correlation": 10, "External id": 1}},
	{"ph": "X", "cat": "kernel", "name": "gemm_kernel_a", "pid": 0, "tid": 7, "ts": 55, "dur": 4, "args": {"stream": 7, "correlation": 20, "External id": 2}},
	{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python3"}},
	{"ph": "M", "name": "process_labels", "pid": 7, "tid": 0, "args": {"labels": "CPU"}},
	{"ph": "M", "name": "process_name", "pid": 0, "tid": 3, "args": {"name": "not here"}},
	{"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": "thread 8 (python3)"}},
	{"ph": "M", "name": "thread_name", "pid": 7, "tid": 9, "args": {"name": "thread 9 (python3)"}},
	{"ph": "M", "name": "thread_name", "pid": 7, "tid": 9, "args": {"name": "thread 9 (pt_autograd_0)"}},
	{"ph": "X", "cat": "cpu_op", "name": "aten::outer", "pid": 7, "tid": 8, "ts": 70, "dur": 20, "args": {"External id": 3}},
	{"ph": "X", "cat": "cpu_op", "name": "aten::inner", "pid": 7, "tid": 8, "ts": 71, "dur": 5, "args": {"External id": 4}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 72, "dur": 1, "args": {"correlation": 30, "External id": 4}},
	{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 80, "dur": 1, "args": {"correlation": 31, "External id": 3}},
	{"ph": "X", "cat": "kernel", "name": "inner_kernel", "pid": 0, "tid": 7, "ts": 74, "dur": 1, "args": {"stream": 7, "correlation": 30, "External id": 4}},
	{"ph": "X", "cat": "kernel", "name": "outer_kernel", "pid": 0, "tid": 7, "ts": 82, "dur": 1, "args": {"stream": 7, "correlation": 31, "External id": 3}}
	]}
	EOF
	kineto2ev -q -o "$T/m.ev" "$T/m.json"
	run -0 grep -a '^#process\|^#thread' "$T/m.ev"
	assert_output "#process 0 7 name python3
#process 0 7 labels CPU
#thread 0 9 7 thread 9 (pt_autograd_0)
#thread 0 8 7 thread 8 (python3)"
	# ops_unique_args groups by the names: one row per thread; their
	# times tie, and ex_UID decides as in TraceLens (thread 9's op is
	# first in the file, though later in time).
	run -0 --separate-stderr ev-stats ops-args --csv "$T/m.ev"
	assert_line --index 0 --partial "name,op category,process_name,process_label,thread_name,Input Dims,"
	assert_line --index 1 --partial "aten::mm,GEMM,python3,CPU,thread 9 (pt_autograd_0),"
	assert_line --index 1 --partial ",0"
	assert_line --index 2 --partial "aten::mm,GEMM,python3,CPU,thread 8 (python3),"
	assert_line --index 2 --partial ",2"
	# An op whose child op's kernel comes before its own (its instance
	# begun by the subtree time) is named by its own thread too (before
	# aten::inner, whose time ties: its UID is the lesser).
	assert_line --index 3 --partial "aten::outer,other,python3,CPU,thread 8 (python3),"
	[[ "$stderr" != *"without their cpu_op range"* ]]
	run -0 --separate-stderr ev-stats ops-summary --csv "$T/m.ev"
	assert_line --index 3 "aten::outer,['other'],1,0.001,1,10,100,2,0.002"
	# The perf sheet's first is the first op in the file (thread 9's),
	# not the earliest: its names and its arguments (TraceLens's
	# Concrete Inputs_first of this trace is ['', '9']).
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/r" "$T/m.ev"
	[[ "$stderr" != *"process_name"* ]]
	run -0 python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1], encoding="utf-8"))); print(len(r), r[0]["process_name_first"], r[0]["process_label_first"], r[0]["thread_name_first"], r[0]["Concrete Inputs_first"])' "$T/r/GEMM.csv"
	assert_output "1 python3 CPU thread 9 (pt_autograd_0) ['', '9']"
	# A stream without #thread lines (another producer) leaves the names
	# empty and says so.
	grep -av '^#thread\|^#process' "$T/m.ev" >"$T/n.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/n" "$T/n.ev"
	[[ "$stderr" == *"ops_unique_args: process_name, process_label, thread_name left empty"* ]]
	[[ "$stderr" == *"GEMM: process_name_first, process_label_first, thread_name_first left empty"* ]]
}
