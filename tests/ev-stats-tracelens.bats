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
	SHEETS="gpu_timeline ops_summary ops_summary_by_category ops_unique_args kernel_summary GEMM"
}

@test "ops-summary, ops-category, kernel-ops, ops-args: TraceLens's tables of a small trace, exact" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	# Two aten::mm of 10 and 20.5 us; an add whose kernels overlap (10 us
	# each, 5 us apart: 15 us busy); a memset launched outside any op;
	# the NCCL kernel and the kernel without a call are not launchers.
	run -0 --separate-stderr ev-stats ops-summary --csv "$T/x.ev"
	assert_output "name,Categories,total_direct_kernel_time_sum,total_direct_kernel_time_ms,Count,Percentage (%),Cumulative Percentage (%)
aten::mm,['GEMM'],30.5,0.0305,2,58.65384615384615,58.65384615384615
aten::add,['elementwise'],15,0.015,1,28.846153846153843,87.5
cudaMemsetAsync,['other'],4,0.004,1,7.6923076923076925,95.1923076923077
aten::embedding,['other'],2.5,0.0025,1,4.807692307692308,100"
	run -0 --separate-stderr ev-stats ops-category --csv "$T/x.ev"
	assert_output "op category,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%)
GEMM,2,0.0305,58.65384615384615,58.65384615384615
elementwise,1,0.015,28.84615384615385,87.5
other,2,0.0065,12.5,100"
	# Kernels only, every one: the NCCL kernel under its c10d op
	# ("other", as TraceLens), the one without a call with no op; shares
	# of 91 us of kernels and of the 602.5 us span of the linked events.
	run -0 --separate-stderr ev-stats kernel-ops --csv "$T/x.ev"
	assert_line --index 1 "GEMM,aten::mm,gemm_kernel_a,7,30.5,2,15.25,10,20.5,33.51648351648351,5.062240663900415"
	assert_line --index 2 "other,c10d::allreduce_,ncclDevKernel_AllReduce_Sum_f32_RING_LL,9,30,1,30,30,30,32.967032967032964,4.979253112033195"
	assert_line --index 5 ",,orphan_kernel,7,8,1,8,8,8,8.791208791208792,1.3278008298755186"
	[ "${#lines[@]}" = 7 ]
	# Per op and arguments, printed as Python prints TraceLens's tuples; an
	# argument's text keeps its spaces ("long int").
	run -0 --separate-stderr ev-stats ops-args --csv "$T/x.ev"
	assert_line --index 1 "aten::mm,GEMM,Unknown,Unknown,Unknown,\"((2, 3), (3, 4))\",\"('float', 'float')\",\"((1, 1), (1, 1))\",\"('', '')\",2,15.25,15.25,7.424621202458749,10,20.5,30.5,58.65384615384615,58.65384615384615"
	assert_line --index 4 "aten::embedding,other,Unknown,Unknown,Unknown,\"((8, 4), (2,))\",\"('c10::BFloat16', 'long int')\",\"((4, 1), (1,))\",\"('', '[True, False]')\",1,2.5,2.5,,2.5,2.5,2.5,4.807692307692308,100"
}

@test "kineto2ev: an op's signature keeps the blanks inside its argument strings" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	run -0 --separate-stderr ev-stats ops --csv "$T/x.ev"
	assert_output --partial 'aten::embedding dims=[[8,4],[2]] types=[""c10::BFloat16"",""long int""] strides=[[4,1],[1]] concrete=["""",""[True, False]""]'
}

@test "report --tracelens equals TraceLens's own report of a small trace, in its layout" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/tl" "$T/x.ev"
	# The subtree columns need the op tree, which the stream does not keep;
	# the process and thread names are known (TraceLens's "Unknown": the
	# trace has no metadata events).
	[[ "$stderr" == *"ops_summary: total_subtree_kernel_time_sum, total_subtree_kernel_time_ms left empty"* ]]
	[[ "$stderr" == *"ops_unique_args: total_subtree_kernel_time_mean,"* ]]
	[[ "$stderr" == *"GEMM: UID_first left empty"* ]]
	[[ "$stderr" != *"process_name"* ]]
	run -0 ls "$T/tl"
	assert_output "$(printf '%s.csv\n' GEMM gpu_timeline kernel_summary ops_summary ops_summary_by_category ops_unique_args)"
	# shellcheck disable=SC2086 # SHEETS is a word list
	run -0 python3 "$CMP" "$REF/fixture" "$T/tl" $SHEETS
	assert_output --partial "ops_unique_args: 4 rows (0 in another order among ties), 75 cells equal, 33 empty in evkit, 0 differ"
	assert_output --partial "GEMM: 1 rows (0 in another order among ties), 39 cells equal, 1 empty in evkit, 0 differ"
	# Each sheet's header is TraceLens's, as the contract has it (GEMM's
	# columns depend on the trace: the comparison above checks them).
	local s
	for s in ${SHEETS% GEMM}; do
		grep -q "^$s	" "$REF/contract.tsv"
		[ "$(head -1 "$T/tl/$s.csv")" = "$(grep "^$s	" "$REF/contract.tsv" | cut -f3- | python3 -c 'import csv,sys; csv.writer(sys.stdout, lineterminator="\n").writerow(sys.stdin.read().rstrip("\n").split("\t"))')" ]
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

@test "report --tracelens: a workbook of TraceLens's sheets in its order; --tracelens only for report" {
	kineto2ev -q -o "$T/x.ev" "$FX"
	ev-stats report -q --tracelens --xlsx -o "$T/r.xlsx" "$T/x.ev"
	run -2 ev-stats kernels --tracelens "$T/x.ev"
	assert_output --partial "kernels: --tracelens does not apply (it is for: report)"
	need_openpyxl
	run -0 "$PY_XLSX" -c 'import openpyxl, sys; w = openpyxl.load_workbook(sys.argv[1]); print(" ".join(w.sheetnames)); print([c.value for c in w["ops_summary"][1]][:3])' "$T/r.xlsx"
	assert_line --index 0 "gpu_timeline ops_summary_by_category ops_summary ops_unique_args GEMM kernel_summary"
	assert_line --index 1 "['name', 'total_direct_kernel_time_sum', 'total_subtree_kernel_time_sum']"
}

@test "report --tracelens equals TraceLens's reports of real traces (shared data)" {
	need_shared_data
	local t d
	for t in h100/Qwen_Qwen1.5-0.5B-Chat__1016005 mi300/Qwen_Qwen1.5-0.5B-Chat__1016005 \
		mi300/gaunernst_bert-small-uncased__1016001 torch_compile_triton/trace; do
		d="$T/$(basename "$t")"
		kineto2ev -q -o "$T/x.ev" "$TL/$t.json.gz"
		ev-stats report -q --tracelens --csv -o "$d" "$T/x.ev"
		# shellcheck disable=SC2086 # SHEETS is a word list
		run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" $SHEETS
		# Every op's process and thread names are there (and equal
		# TraceLens's, above).
		run -0 python3 -c 'import csv,sys; sys.exit(not all(r[c] not in ("", "Unknown") for f, c in ((sys.argv[1], "thread_name"), (sys.argv[2], "thread_name_first"), (sys.argv[2], "process_label_first")) for r in csv.DictReader(open(f, encoding="utf-8"))))' "$d/ops_unique_args.csv" "$d/GEMM.csv"
		# The perf-model sheets of ops whose kernels their child ops
		# launch (aten::_flash_attention_forward under SDPA's op).
		run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" SDPA_fwd
		assert_output --partial "SDPA_fwd: 1 rows (0 in another order among ties), 42 cells equal, 1 empty in evkit, 0 differ"
		# Normalization: BERT's layer norms (aten::layer_norm and the
		# aten::native_layer_norm under it, each a row).
		if [ -f "$TL/${t}_perf_report_csvs/Normalization.csv" ]; then
			run -0 python3 "$CMP" "$TL/${t}_perf_report_csvs" "$d" Normalization
			assert_output --partial "Normalization: 2 rows (0 in another order among ties), 78 cells equal, 2 empty in evkit, 0 differ"
		else
			[ ! -f "$d/Normalization.csv" ]
		fi
	done
	# resnet: TraceLens links a GPU event to its call only through an ac2g
	# flow, and this ROCm trace has none for its 81 memsets; evkit links
	# them by correlation, so its timeline and the convolutions' op time
	# hold them.  Kernels (kernel_summary) and GEMMs are the same.
	kineto2ev -q -o "$T/x.ev" "$TL/mi300/resnet_act_checkpoint.json.gz"
	ev-stats report -q --tracelens --csv -o "$T/resnet" "$T/x.ev"
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" kernel_summary GEMM
	assert_output --partial "118 rows"
	assert_output --partial "GEMM: 3 rows (0 in another order among ties), 120 cells equal, 3 empty in evkit, 0 differ"
	# Batch norms, forward (on two threads: recomputed in the backward)
	# and backward (output_mask); TraceLens's resnet CSVs of them came
	# from the same run (tests/expected/tracelens/README.md).
	run -0 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" Normalization
	assert_output --partial "Normalization: 15 rows (0 in another order among ties), 600 cells equal, 15 empty in evkit, 0 differ"
	# Convolutions: every parameter, GFLOPS and data moved equal; the
	# kernel times of the 3 forward and 5 backward groups whose instances
	# launch a memset differ (the memsets TraceLens cannot link, above).
	run -1 python3 "$CMP" "$REF/resnet_act_checkpoint" "$T/resnet" CONV_fwd CONV_bwd
	assert_output --partial "CONV_fwd: 11 rows (0 in another order among ties), 430 cells equal, 11 empty in evkit, 54 differ"
	assert_output --partial "CONV_bwd: 11 rows (0 in another order among ties), 394 cells equal, 11 empty in evkit, 90 differ"
	run -0 python3 - "$REF/resnet_act_checkpoint" "$T/resnet" <<-'EOF'
		import csv, sys
		for s in ("CONV_fwd", "CONV_bwd"):
		    a = list(csv.DictReader(open(f"{sys.argv[1]}/{s}.csv", encoding="utf-8")))
		    b = list(csv.DictReader(open(f"{sys.argv[2]}/{s}.csv", encoding="utf-8")))
		    key = lambda r: tuple(r[c] for c in r if c.startswith("param: ") or c in ("name", "GFLOPS_first", "Data Moved (MB)_first", "name_count"))
		    assert sorted(map(key, a)) == sorted(map(key, b)), s
		    for r in b:
		        if r["Kernel Time (µs)_sum"] not in {x["Kernel Time (µs)_sum"] for x in a}:
		            assert "Memset" in r["trunc_kernel_details"], r["name"]
	EOF
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
	{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 9, "ts": 50, "dur": 10, "args": {"External id": 2, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Input Strides": [[3, 1], [4, 1]], "Concrete Inputs": ["", ""]}},
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
	{"ph": "M", "name": "thread_name", "pid": 7, "tid": 9, "args": {"name": "thread 9 (pt_autograd_0)"}}
	]}
	EOF
	kineto2ev -q -o "$T/m.ev" "$T/m.json"
	run -0 grep -a '^#process\|^#thread' "$T/m.ev"
	assert_output "#process 0 7 name python3
#process 0 7 labels CPU
#thread 0 9 7 thread 9 (pt_autograd_0)
#thread 0 8 7 thread 8 (python3)"
	# ops_unique_args groups by the names: one row per thread.
	run -0 --separate-stderr ev-stats ops-args --csv "$T/m.ev"
	assert_line --index 0 --partial "name,op category,process_name,process_label,thread_name,Input Dims,"
	assert_line --index 1 --partial "aten::mm,GEMM,python3,CPU,thread 8 (python3),"
	assert_line --index 2 --partial "aten::mm,GEMM,python3,CPU,thread 9 (pt_autograd_0),"
	# The perf sheet's first is the first op in the file (thread 9's),
	# not the earliest.
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/r" "$T/m.ev"
	[[ "$stderr" != *"process_name"* ]]
	run -0 python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1], encoding="utf-8"))); print(len(r), r[0]["process_name_first"], r[0]["process_label_first"], r[0]["thread_name_first"])' "$T/r/GEMM.csv"
	assert_output "1 python3 CPU thread 9 (pt_autograd_0)"
	# A stream without #thread lines (another producer) leaves the names
	# empty and says so.
	grep -av '^#thread\|^#process' "$T/m.ev" >"$T/n.ev"
	run -0 --separate-stderr ev-stats report --tracelens --csv -o "$T/n" "$T/n.ev"
	[[ "$stderr" == *"GEMM: process_name_first, process_label_first, thread_name_first, UID_first left empty"* ]]
}
