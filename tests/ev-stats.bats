#!/usr/bin/env bats
# ev-stats: interval algebra of the timeline, statistics, collectives,
# variance, comparisons, and TraceLens/HTA reference numbers.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$TESTS_DIR/fixtures/ev-stats"
}

# row TYPE: the time_ms and percent of a timeline row of rank 0.
row() { awk -F'\t' -v t="$1" '$2 == 0 && $3 == t { print $4 "\t" $5 }' "$T/out.tsv"; }

@test "timeline: nested, overlapping, zero-length and gap intervals" {
	pack "$F/timeline.tsv" "$T/t.ev"
	ev-stats timeline -o "$T/out.tsv" "$T/t.ev"
	# comp [0,100)+[300,310) (nested [60,70) adds nothing); comm [50,150);
	# memcpy [140,200); the unlinked kernel [200,250) is left out.
	assert_equal "$(row computation_time)" "$(printf '0.11\t35.483870967741936')"
	assert_equal "$(row exposed_comm_time | cut -f1)" 0.05
	assert_equal "$(row exposed_memcpy_time | cut -f1)" 0.05
	assert_equal "$(row busy_time | cut -f1)" 0.21
	assert_equal "$(row idle_time | cut -f1)" 0.1
	assert_equal "$(row total_time)" "$(printf '0.31\t100')"
	assert_equal "$(row total_comm_time | cut -f1)" 0.1
	assert_equal "$(row total_memcpy_time | cut -f1)" 0.06
	# HTA counts every GPU event: busy [0,250)+[300,310), compute 160.
	assert_equal "$(row hta_idle_time | cut -f1)" 0.05
	assert_equal "$(row hta_compute_time | cut -f1)" 0.16
	assert_equal "$(row hta_non_compute_time | cut -f1)" 0.1
	# Rank 1 is its own group.
	run -0 awk -F'\t' '$2 == 1 && $3 == "total_time" { print $4 }' "$T/out.tsv"
	assert_output 0.001
}

@test "timeline: a rank without communication has an empty overlap percent, said once" {
	# HTA's comp_comm_overlap_pctg is NaN where there is no communication:
	# 0 % would read as "nothing overlapped".  Rank 0 communicates, rank 1
	# does not.
	pack "$F/timeline.tsv" "$T/t.ev"
	run -0 --separate-stderr ev-stats timeline -o "$T/out.tsv" "$T/t.ev"
	assert_equal "$stderr" "ev-stats: warning: 1 rank(s) have no communication: hta_comm_comp_overlap_time's percent left empty (HTA gives NaN)"
	assert_equal "$(row hta_comm_comp_overlap_time)" "$(printf '0.05\t50')"
	run -0 awk -F'\t' '$2 == 1 && $3 == "hta_comm_comp_overlap_time" { print $4 "|" $5 "|" }' "$T/out.tsv"
	assert_output "0||"
	run -0 bash -c 'ev-stats timeline -q --json "$1" | jq -c ".[] | select(.rank == 1 and .type == \"hta_comm_comp_overlap_time\") | [.time_ms, .percent]"' _ "$T/t.ev"
	assert_output "[0,null]"
	run -0 bash -c 'ev-stats timeline -q --csv "$1" | grep "^0,1,hta_comm_comp"' _ "$T/t.ev"
	assert_output "0,1,hta_comm_comp_overlap_time,0,"
	run -0 --separate-stderr ev-stats timeline -q "$T/t.ev"
	assert_equal "$stderr" ""
}

@test "timeline: --include-unlinked keeps GPU events without a launch" {
	pack "$F/timeline.tsv" "$T/t.ev"
	ev-stats timeline --include-unlinked --no-hta -o "$T/out.tsv" "$T/t.ev"
	assert_equal "$(row computation_time | cut -f1)" 0.16
	assert_equal "$(row busy_time | cut -f1)" 0.26
	assert_equal "$(row idle_time | cut -f1)" 0.05
	run grep -c hta_ "$T/out.tsv"
	assert_output 0
}

@test "timeline: rule sets classify communication differently" {
	printf 'type\tts\tdur\tname\nkernel\t0\t1000\tNCCLish_upper\nkernel\t2000\t1000\trcclKernel\n' >"$T/r.tsv"
	pack "$T/r.tsv" "$T/r.ev"
	ev-stats timeline --no-hta -o "$T/out.tsv" "$T/r.ev"
	assert_equal "$(row total_comm_time | cut -f1)" 0.002
	ev-stats timeline --no-hta --rules=tracelens-2025 -o "$T/out.tsv" "$T/r.ev"
	assert_equal "$(row total_comm_time | cut -f1)" 0
	ev-stats timeline --no-hta --rules=hta -o "$T/out.tsv" "$T/r.ev"
	assert_equal "$(row total_comm_time | cut -f1)" 0
}

@test "timeline: events out of order within a rank are an error" {
	printf 'type\trank\tts\tdur\tname\nkernel\t0\t500\t1\ta\nkernel\t1\t100\t1\tb\nkernel\t0\t400\t1\tc\n' >"$T/o.tsv"
	pack "$T/o.tsv" "$T/o.ev"
	run -1 ev-stats timeline "$T/o.ev"
	assert_output "ev-stats: $T/o.ev: record 3: out of order (ts 400 after 500); sort with ev-merge --sort"
}

@test "kernels: count, sum, mean, median, std, p90, p99 per name" {
	{ printf 'type\tts\tdur\tname\n'; for i in 1 2 3 4 5; do printf 'kernel\t%d\t%d000\tk\n' "$((i * 10000))" "$i"; done
	  printf 'kernel\t90000\t10000\tother\n'; } >"$T/k.tsv"
	pack "$T/k.tsv" "$T/k.ev"
	ev-stats kernels -o "$T/out.tsv" "$T/k.ev"
	run -0 cat "$T/out.tsv"
	assert_line --index 0 "$(printf 'name\tclass\tcount\tsum_us\tmean_us\tmedian_us\tmin_us\tmax_us\tstd_us\tp90_us\tp99_us\tpercent')"
	assert_line --index 1 "$(printf 'k\tother\t5\t15\t3\t3\t1\t5\t1.5811388300841898\t4.6\t4.96\t60')"
	# One instance has no sample std (pandas: NaN): empty, not 0.
	assert_line --index 2 "$(printf 'other\tother\t1\t10\t10\t10\t10\t10\t\t10\t10\t40')"
	run -0 --separate-stderr ev-stats kernels "$T/k.ev"
	assert_equal "$stderr" "ev-stats: warning: 1 row(s) of a single instance: std left empty (a sample std needs two)"
}

@test "kernels: past --exact-limit quantiles come from the sketch within 0.5%" {
	{ printf 'type\tts\tdur\tname\n'; for i in $(seq 1 1000); do printf 'kernel\t%d\t%d\tk\n' "$i" "$((i * 1000))"; done; } >"$T/q.tsv"
	pack "$T/q.tsv" "$T/q.ev"
	ev-stats kernels --exact-limit=10 -o "$T/out.tsv" "$T/q.ev" 2>"$T/err"
	grep -q sketch "$T/err"
	run -0 awk -F'\t' 'NR == 2 { m = $6; p = $10; ok = (m > 500.5 * 0.995 && m < 500.5 * 1.005 && p > 900.1 * 0.995 && p < 900.1 * 1.005); print ok, $3, $4, $7, $8 }' "$T/out.tsv"
	assert_output '1 1000 500500 1 1000'
}

@test "categories: time per kernel class with shares" {
	printf 'type\tts\tdur\tname\nkernel\t0\t3000\tCijk_Ailk_Bljk_x\nkernel\t5000\t1000\tncclDevKernel_AllGather\nmemcpy\t7000\t1000\tMemcpy DtoD\n' >"$T/c.tsv"
	pack "$T/c.tsv" "$T/c.ev"
	run -0 ev-stats categories --csv "$T/c.ev"
	assert_line --index 0 'class,count,sum_us,mean_us,percent'
	assert_line --index 1 'gemm,1,3,3,60'
	assert_line --index 2 'comm,1,1,1,20'
	assert_line --index 3 'memcpy,1,1,1,20'
}

@test "coll: latency, skews, waits and bandwidths of a matched collective" {
	# 1 GiB allreduce on 2 ranks: rank 1 arrives 1 us early, both end together.
	printf 'type\top\trank\tts\tdur\tbytes\tcomm\tseq\taux\tdtype\n' >"$T/c.tsv"
	printf 'coll\tallreduce\t1\t0\t1000001000\t1073741824\t170\t0\t2\tbfloat16\n' >>"$T/c.tsv"
	printf 'coll\tallreduce\t0\t1000\t1000000000\t1073741824\t170\t0\t2\tbfloat16\n' >>"$T/c.tsv"
	printf 'coll\tallreduce\t0\t2000000000\t500000000\t1073741824\t170\t1\t2\tbfloat16\n' >>"$T/c.tsv"
	pack "$T/c.tsv" "$T/c.ev"
	run -0 ev-stats coll --table=each -q "$T/c.ev"
	assert_line --index 1 "$(printf '0\t00000000000000aa\t0\tallreduce\tbfloat16\t1073741824\t2\t2\t0\t1000000\t1\t0\t0.5\t1\t0\t1\t1')"
	# The half-seen collective is reported, with a warning.
	run -0 ev-stats coll --table=each "$T/c.ev"
	assert_output --partial '1 collectives were not seen on every rank'
	# One source, no run keys: the config column says all sources are one run.
	run -0 ev-stats coll --table=stragglers -q "$T/c.ev"
	assert_line --index 0 "$(printf 'config\trank\tcollectives\ttimes_last\ttimes_first\ttimes_last_tied\ttimes_first_tied\tpct_last\ttotal_wait_us\tmean_wait_us\ttotal_coll_dur_us')"
	assert_line --index 1 "$(printf '*\t0\t2\t2\t1\t0\t0\t100\t0\t0\t1500000')"
	assert_line --index 2 "$(printf '*\t1\t1\t0\t1\t0\t0\t0\t1\t1\t1000001')"
}

@test "variance: range, CV and where the extremes ran, across sources" {
	printf 'type\top\trank\tts\tdur\tname\tsig\n' >"$T/a.tsv"
	printf 'kernel\tgemm\t0\t0\t1000\tCijk_x\taten::mm dims=[[8,8],[8,8]]\nkernel\tgemm\t1\t5000\t3000\tCijk_x\taten::mm dims=[[8,8],[8,8]]\n' >>"$T/a.tsv"
	printf 'type\top\trank\tts\tdur\tname\tsig\n' >"$T/b.tsv"
	printf 'kernel\tgemm\t0\t0\t2000\tCijk_x\taten::mm dims=[[8,8],[8,8]]\nkernel\tother\t0\t9000\t7000\tfill\t\n' >>"$T/b.tsv"
	pack "$T/a.tsv" "$T/a.ev"
	pack "$T/b.tsv" "$T/b.ev"
	ev-merge -q -o "$T/m.ev" A="$T/a.ev" B="$T/b.ev"
	run -0 ev-stats variance --by '' "$T/m.ev"
	assert_line --index 1 "$(printf 'aten::mm dims=[[8,8],[8,8]]\tCijk_x\tA\t0\tA\t1\t0\t5000\t3\t1\t3\t2\t2\t1\t0.5\t2\t2.98')"
	# Per source (the default), the top-1 rows.
	run -0 ev-stats variance --top=1 "$T/m.ev"
	assert_line --index 1 --partial "$(printf 'A\taten::mm')"
	assert_line --index 2 --partial "$(printf 'B\taten::mm')"
}

@test "ops: GEMM FLOPs and data moved from the op signature (TraceLens formulas)" {
	printf 'type\top\tts\tdur\tname\tsig\tstep\n' >"$T/o.tsv"
	sig='aten::mm dims=[[1024,90112],[90112,4608]] types=["c10::BFloat16","c10::BFloat16"]'
	printf 'kernel\tgemm\t0\t1000000\tCijk_a\t%s\t7\nkernel\tgemm\t1000000\t1000000\tCijk_b\t%s\t7\n' "$sig" "$sig" >>"$T/o.tsv"
	printf 'kernel\tgemm\t5000000\t1000000\tCijk_a\t%s\t8\n' "$sig" >>"$T/o.tsv"
	pack "$T/o.tsv" "$T/o.ev"
	run -0 ev-stats ops "$T/o.ev"
	# Two instances: 2000 us (two kernels of op 7) and 1000 us (op 8).
	assert_line --index 1 --regexp "^aten::mm.*	Cijk_a	gemm	GEMM	2	3000	1500	1500	707.1067811865476	1000	2000	850.403524608	977	"
}

@test "ops: the std of a single instance is empty (TraceLens: NaN), said once" {
	printf 'type\top\tts\tdur\tname\tsig\tstep\n' >"$T/o.tsv"
	printf 'kernel\tgemm\t0\t1000\tCijk_a\taten::mm\t1\nkernel\tgemm\t5000\t3000\tCijk_a\taten::mm\t2\n' >>"$T/o.tsv"
	printf 'kernel\telementwise\t9000\t1000\tvectorized_elementwise_kernel\taten::add\t3\n' >>"$T/o.tsv"
	pack "$T/o.tsv" "$T/o.ev"
	run -0 --separate-stderr ev-stats ops "$T/o.ev"
	assert_equal "$stderr" "ev-stats: warning: 1 row(s) of a single instance: std left empty (a sample std needs two)"
	run -0 bash -c 'ev-stats ops -q "$1" | cut -f1,5,9' _ "$T/o.ev"
	assert_output "$(printf 'sig\tcount\tkernel_time_std_us\naten::mm\t2\t1.4142135623730951\naten::add\t1\t')"
	run -0 bash -c 'ev-stats ops -q --json "$1" | jq -c "[.[] | .kernel_time_std_us]"' _ "$T/o.ev"
	assert_output "[1.4142135623730951,null]"
	run -0 bash -c 'ev-stats ops -q --md "$1" | grep "aten::add"' _ "$T/o.ev"
	assert_output --regexp '^\| aten::add \| vectorized_elementwise_kernel \| elementwise \| [a-z]+ \| 1 \| 1 \| 1 \| 1 \|  \| 1 \| 1 \|'
}

@test "classes and op categories: cuDNN convolutions, masked_fill, TraceLens's InferenceAttention" {
	printf 'type\tts\tdur\tname\tsig\tstep\n' >"$T/k.tsv"
	printf 'kernel\t0\t4000\tvolta_scudnn_128x64_relu_interior_nn_v1\taten::cudnn_convolution\t1\n' >>"$T/k.tsv"
	printf 'kernel\t5000\t2000\tvoid cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>(int)\taten::cudnn_convolution\t2\n' >>"$T/k.tsv"
	printf 'kernel\t8000\t1000\tvoid at::native::vectorized_elementwise_kernel<4, at::native::masked_fill_kernel(at::TensorIterator&)::{lambda(float, bool)#1}, std::array<char*, 3ul> >(int)\taten::masked_fill_\t3\n' >>"$T/k.tsv"
	printf 'kernel\t10000\t3000\tkernel_unified_attention_2d\tvllm::unified_attention_with_output\t4\n' >>"$T/k.tsv"
	pack "$T/k.tsv" "$T/k.ev"
	run -0 ev-stats categories --csv "$T/k.ev"
	assert_line 'conv,2,6,3,60'
	assert_line 'elementwise,1,1,1,10'
	refute_line --partial 'memset,'
	run -0 bash -c 'ev-stats ops "$1" | cut -f1,3,4' _ "$T/k.ev"
	assert_line "$(printf 'aten::cudnn_convolution\tconv\tCONV_fwd')"
	assert_line "$(printf 'aten::masked_fill_\telementwise\telementwise')"
	assert_line "$(printf 'vllm::unified_attention_with_output\tattention\tInferenceAttention')"
}

@test "compare: one sign convention, thresholds and only-in rows" {
	printf 'type\tts\tdur\tname\nkernel\t0\t100000\tgemm_a\nkernel\t200000\t100000\tgemm_b\n' >"$T/base.tsv"
	printf 'type\tts\tdur\tname\nkernel\t0\t80000\tgemm_a\nkernel\t200000\t100500\tgemm_c\n' >"$T/test.tsv"
	pack "$T/base.tsv" "$T/b.ev"
	pack "$T/test.tsv" "$T/t.ev"
	ev-merge -q -o "$T/m.ev" base="$T/b.ev" new="$T/t.ev"
	run -0 ev-stats compare -q --what=kernels "$T/m.ev"
	assert_line --index 0 "$(printf 'baseline\ttest\tname\tclass\tmetric\tbase\tvalue\tdiff\tpct\tstatus\tbase_count\ttest_count')"
	assert_line --index 1 "$(printf 'base\tnew\tgemm_a\tgemm\tsum_us\t100\t80\t-20\t-20\tBetter\t1\t1')"
	# Keys on one side only keep their numbers, metric by metric.
	assert_output --partial "$(printf 'base\tnew\tgemm_b\tgemm\tsum_us\t100\t\t\t\tonly-baseline\t1\t')"
	assert_output --partial "$(printf 'base\tnew\tgemm_c\tgemm\tsum_us\t\t100.5\t\t\tonly-test\t\t1')"
	assert_output --partial "$(printf 'base\tnew\tgemm_c\tgemm\tp99_us\t\t100.5\t\t\tonly-test\t\t1')"
	run -0 ev-stats compare --what=timeline "$T/m.ev"
	assert_output --partial "$(printf 'base\tnew\t0\t0\ttotal_time\ttime_ms\t0.3\t0.3005\t')"
	assert_output --partial "Similar"
	run -0 ev-stats compare --what=timeline --threshold=0.1 "$T/m.ev"
	assert_output --regexp "total_time	time_ms	[^	]*	[^	]*	[^	]*	[^	]*	Worse"
}

@test "output formats: CSV, JSON and Markdown carry the same table" {
	pack "$F/timeline.tsv" "$T/t.ev"
	run -0 bash -c 'ev-stats timeline -q --json "$1" | jq -r ".[0].type, .[0].time_ms, length"' _ "$T/t.ev"
	assert_output "$(printf 'computation_time\n0.11\n26')"
	run -0 ev-stats timeline --md --no-hta "$T/t.ev"
	assert_line --index 0 '| src | rank | type | time_ms | percent |'
	assert_line --index 1 '|---|---|---|---|---|'
}

@test "usage errors exit 2" {
	run -2 ev-stats
	run -2 ev-stats frobnicate
	run -2 ev-stats timeline --rules=nope
	run -2 ev-stats variance --class=nope
	run -2 ev-stats compare --what=variance
}

@test "TraceLens gpu_timeline references reproduce exactly (shared data)" {
	need_shared_data
	local d="$SHARED_DATA/kineto/tracelens" f
	for f in mi300/Qwen_Qwen1.5-0.5B-Chat__1016005 h100/Qwen_Qwen1.5-0.5B-Chat__1016005 \
		mi300/gaunernst_bert-small-uncased__1016001 mi210/gpu_only_trace/gpu_only_trace torch_compile_triton/trace; do
		kineto2ev -q -o "$T/x.ev" "$d/$f.json.gz"
		ev-stats timeline --no-hta --tracelens-float --csv -o "$T/ours.csv" "$T/x.ev"
		# Same rows, same order, within 1e-6 ms and 1e-6 percent.
		run -0 python3 -c '
import csv, sys
ours = list(csv.DictReader(open(sys.argv[1])))
ref = list(csv.DictReader(open(sys.argv[2])))
assert [r["type"] for r in ours] == [r["type"] for r in ref], "rows differ"
for o, r in zip(ours, ref):
    assert abs(float(o["time_ms"]) - float(r["time ms"])) <= 1e-6, (o, r)
    assert abs(float(o["percent"]) - float(r["percent"])) <= 1e-6, (o, r)
print("ok")' "$T/ours.csv" "$d/${f}_perf_report_csvs/gpu_timeline.csv"
		assert_output ok
	done
}

@test "HTA temporal breakdown and comm/comp overlap equal HTA's on five shared traces" {
	need_shared_data
	# HTA keeps only GPU events whose launch is in the trace and started
	# before the last ProfilerStep, and rounds in µs doubles: ev-stats does
	# the same in one pass; the reference is what HTA printed.
	local name idle comp non kt ovl f
	while IFS=$'\t' read -r name idle comp non kt ovl; do
		case "$name" in '#'* | '') continue ;; esac
		f=$(ls "$SHARED_DATA/kineto/hta/$name/"*.json* | head -n 1)
		kineto2ev -q -o "$T/$name.ev" "$f"
		ev-stats timeline -q -o "$T/$name.tsv" "$T/$name.ev"
		run -0 awk -F'\t' '$3 ~ /^hta_/ { v[$3] = sprintf("%.0f", $4 * 1000); p[$3] = $5 == "" ? "-" : sprintf("%.2f", $5) }
			END { print v["hta_idle_time"], v["hta_compute_time"], v["hta_non_compute_time"], v["hta_kernel_time"], p["hta_comm_comp_overlap_time"] }' "$T/$name.tsv"
		# HTA prints no overlap (NaN) when a rank has no communication, and
		# so does ev-stats (an empty cell, "-" here).
		if [ -n "$ovl" ]; then ovl=$(printf '%.2f' "$ovl"); else ovl=-; fi
		assert_output "$idle $comp $non $kt $ovl"
	done <"$TESTS_DIR/expected/hta/breakdown.tsv"
}

@test "HTA rows of a trace with one ProfilerStep keep every GPU event, as HTA does, and say so once" {
	# HTA filters by ProfilerStep only when there are two or more ("only one
	# ProfilerStep found. All trace events will be preserved"); dropping the
	# last step, the only one, left every HTA row 0.  gen-kineto writes one
	# ProfilerStep around two iterations: per rank GEMMs 100+r+50+10 and
	# 110+r+90+10 us, comm [220,250) inside GEMM B each iteration, 1410 us.
	python3 "$TESTS_DIR/gen/gen-kineto.py" --run --ranks 2 --iters 2 "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T"/g/torch_profiler/rank*/trace.json
	run -0 --separate-stderr ev-stats timeline -o "$T/out.tsv" "$T/g.ev"
	assert_equal "$stderr" "ev-stats: warning: 2 rank(s) have one ProfilerStep: HTA's rows keep every GPU event, as HTA does with fewer than two steps"
	run -0 awk -F'\t' '$3 ~ /^hta_/ { print $2, $3, $4, $5 }' "$T/out.tsv"
	assert_output - <<'OUT'
0 hta_idle_time 1.04 73.75886524822695
0 hta_compute_time 0.37 26.24113475177305
0 hta_non_compute_time 0 0
0 hta_kernel_time 1.41 100
0 hta_comm_comp_overlap_time 0.06 100
1 hta_idle_time 1.038 73.61702127659575
1 hta_compute_time 0.372 26.382978723404257
1 hta_non_compute_time 0 0
1 hta_kernel_time 1.41 100
1 hta_comm_comp_overlap_time 0.06 100
OUT
}

@test "HTA rows of a real one-step trace span every GPU event (shared data)" {
	need_shared_data
	local f="$SHARED_DATA/kineto/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
	kineto2ev -q -o "$T/q.ev" "$f"
	run -0 --separate-stderr ev-stats timeline -o "$T/q.tsv" "$T/q.ev"
	assert_equal "${stderr_lines[0]}" "ev-stats: warning: 1 rank(s) have one ProfilerStep: HTA's rows keep every GPU event, as HTA does with fewer than two steps"
	# HTA's kernel time: every GPU event of the JSON, each rounded inward to
	# whole us as HTA's parser does, first start to last end.
	run -0 python3 - "$f" <<'PY'
import gzip, json, math, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
g = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
print(max(math.floor(e["ts"] + e["dur"]) for e in g) - min(math.ceil(e["ts"]) for e in g))
PY
	local want="$output"
	run -0 awk -F'\t' '$3 == "hta_kernel_time" { printf "%.0f\n", $4 * 1000 }' "$T/q.tsv"
	assert_output "$want"
	run -0 awk -F'\t' '$3 == "hta_compute_time" { print ($4 > 0) }' "$T/q.tsv"
	assert_output 1
}

@test "HTA numbers of each rank are the same alone and with the ranks' records interleaved in one stream" {
	need_shared_data
	# CPU records of two ranks alternate in the merged stream: each must
	# reach its own rank's launches (and its own clock base).
	local r
	for r in 0 1; do
		kineto2ev -q -o "$T/r$r.ev" "$SHARED_DATA/kineto/hta/trace_filter/sampled_rank-$r.json.gz"
		ev-stats timeline -q -o "$T/alone$r.tsv" "$T/r$r.ev"
	done
	ev-merge -q -o "$T/both.ev" "$T/r0.ev" "$T/r1.ev"
	ev-stats timeline -q -o "$T/both.tsv" "$T/both.ev"
	for r in 0 1; do
		run -0 awk -F'\t' '$3 ~ /^hta_/ { print $3, $4, $5 }' "$T/alone$r.tsv"
		[ "${#lines[@]}" -ge 4 ]
		local want="$output"
		run -0 awk -F'\t' -v r="$r" '$2 == r && $3 ~ /^hta_/ { print $3, $4, $5 }' "$T/both.tsv"
		assert_output "$want"
	done
}

@test "ops: GEMM instances, GFLOPS and data moved match TraceLens's GEMM sheet on every sample trace (shared data)" {
	need_shared_data
	local tl="$SHARED_DATA/kineto/tracelens" pair t r n
	# trace : report (TraceLens's recompute report is of the same trace)
	for pair in mi300/Qwen_Qwen1.5-0.5B-Chat__1016005:mi300/Qwen_Qwen1.5-0.5B-Chat__1016005:5 \
		h100/Qwen_Qwen1.5-0.5B-Chat__1016005:h100/Qwen_Qwen1.5-0.5B-Chat__1016005:5 \
		mi300/gaunernst_bert-small-uncased__1016001:mi300/gaunernst_bert-small-uncased__1016001:4 \
		mi300/resnet_act_checkpoint:mi300/resnet_act_checkpoint_recompute:3 \
		torch_compile_triton/trace:torch_compile_triton/trace:3; do
		IFS=: read -r t r n <<<"$pair"
		kineto2ev -q -o "$T/x.ev" "$tl/$t.json.gz"
		ev-stats ops --class=all --csv -o "$T/ops.csv" "$T/x.ev"
		run -0 python3 -c '
import csv, sys
ours = [r for r in csv.DictReader(open(sys.argv[1])) if r["gflops"]]
ref = list(csv.DictReader(open(sys.argv[2], encoding="utf-8")))
assert len(ours) == len(ref), (len(ours), len(ref))
for r in ref:
    m = [o for o in ours if int(o["count"]) == int(r["name_count"]) and o["sig"].startswith(r["name"] + " ")
         and abs(float(o["gflops"]) - float(r["GFLOPS_first"])) < 1e-9 * max(1, float(r["GFLOPS_first"]))
         and abs(float(o["data_moved_mb"]) - float(r["Data Moved (MB)_first"])) < 1e-9 * max(1, float(r["Data Moved (MB)_first"]))
         and abs(float(o["kernel_time_sum_us"]) - float(r["Kernel Time (µs)_sum"])) < 0.01]
    assert len(m) >= 1, r["name"]
print("ok", len(ref))' "$T/ops.csv" "$tl/${r}_perf_report_csvs/GEMM.csv"
		assert_output "ok $n"
	done
}

@test "compare: the baseline is the first source even when a test source starts earlier" {
	printf 'type\tts\tdur\tname\nkernel\t100\t100000\tgemm_a\n' >"$T/b.tsv"
	printf 'type\tts\tdur\tname\nkernel\t0\t80000\tgemm_a\n' >"$T/t.tsv"
	pack "$T/b.tsv" "$T/b.ev"
	pack "$T/t.tsv" "$T/t.ev"
	ev-merge -q -o "$T/m.ev" base="$T/b.ev" test="$T/t.ev"
	run -0 ev-stats compare -q --what=kernels "$T/m.ev"
	assert_line --index 1 "$(printf 'base\ttest\tgemm_a\tgemm\tsum_us\t100\t80\t-20\t-20\tBetter\t1\t1')"
	# Grouping by a #src key that no source has pools them (and frees cleanly).
	run -0 ev-stats kernels --by threads -q "$T/m.ev"
	assert_line --index 1 --partial "$(printf '\tgemm_a\tgemm\t2\t180\t')"
}

@test "variance: time stamps of the extremes are exact epoch nanoseconds" {
	printf 'type\top\tts\tdur\tname\nkernel\tgemm\t1765218444950396213\t1000\tCijk_x\nkernel\tgemm\t1765218444950399999\t3000\tCijk_x\n' >"$T/e.tsv"
	pack "$T/e.tsv" "$T/e.ev"
	run -0 bash -c 'ev-stats variance --by "" "$1" | cut -f7,8' _ "$T/e.ev"
	assert_output "$(printf 'min_ts\tmax_ts\n1765218444950396213\t1765218444950399999')"
}

# rankfile OUT RANK NCOLL: one rank's file of NCOLL allreduces on comm 5 of 2 ranks.
rankfile() {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 5 nranks=2 ranks=0,1\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tdtype\n'
		for ((i = 0; i < $3; i++)); do
			printf 'coll\tallreduce\t%d\t1\t%d\t%d\t1048576\t5\t%d\tfloat32\n' "$2" $((i * 100000 + $2 * 1000)) $((50000 - $2 * 1000)) "$i"
		done
	} >"$1.tsv"
	pack "$1.tsv" "$1"
}

@test "coll stragglers: one first and one last rank per collective (the lowest of the tied), ties counted apart" {
	# 8 allreduces on 4 ranks; start offsets in us per rank, ties on purpose.
	local offs=("0 0 5 10" "0 0 0 0" "3 1 1 2" "0 1 2 3" "4 4 0 4" "2 0 2 1" "1 1 1 0" "0 2 0 2") i r o
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 9 nranks=4 ranks=0,1,2,3\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tdtype\n'
		for i in "${!offs[@]}"; do
			r=0
			for o in ${offs[$i]}; do
				printf 'coll\tallreduce\t%d\t1\t%d\t50000\t1048576\t9\t%d\tfloat32\n' "$r" $((i * 100000 + o * 1000)) "$i"
				r=$((r + 1))
			done
		done
	} >"$T/s.tsv"
	pack "$T/s.tsv" "$T/s.ev"
	run -0 bash -c 'ev-stats coll --table=stragglers -q "$1" | cut -f2-8' _ "$T/s.ev"
	assert_output - <<'OUT'
rank	collectives	times_last	times_first	times_last_tied	times_first_tied	pct_last
0	8	5	4	4	3	62.5
1	8	1	2	4	3	12.5
2	8	0	1	3	3	0
3	8	2	1	3	1	25
OUT
	# Each collective has one first and one last rank: the columns sum to 8.
	run -0 bash -c 'ev-stats coll --table=stragglers -q "$1" | awk -F"\t" "NR > 1 { l += \$4; f += \$5 } END { print l, f }"' _ "$T/s.ev"
	assert_output "8 8"
	# The per-collective table picks by the same rule.
	run -0 bash -c 'ev-stats coll --table=each -q "$1" | cut -f3,14,15' _ "$T/s.ev"
	assert_output "$(printf 'seq\tfirst_rank\tlast_rank\n0\t0\t3\n1\t0\t0\n2\t1\t0\n3\t0\t3\n4\t2\t0\n5\t1\t0\n6\t3\t0\n7\t0\t1')"
}

@test "coll: by default the ranks of one run match, whatever file each rank came from" {
	rankfile "$T/r0.ev" 0 3
	rankfile "$T/r1.ev" 1 3
	ev-merge -q -o "$T/m.ev" "$T/r0.ev" "$T/r1.ev"
	run -0 --separate-stderr ev-stats coll "$T/m.ev"
	assert_equal "$stderr" ""
	# 3 complete collectives; rank 1 starts 1 us late and ends with rank 0.
	assert_line --index 1 --partial "$(printf '*\tallreduce\tfloat32\t1048576\t2\t3\t49\t49\t49\t49\t1\t1\t0\t0\t')"
	# Per source (each rank's file alone) nothing completes: said on stderr.
	run -0 --separate-stderr ev-stats coll --by=src "$T/m.ev"
	assert_equal "$stderr" "ev-stats: warning: 6 collectives were not seen on every rank of their communicator"
	# Labelled inputs are different runs (a baseline and a test).
	ev-merge -q -o "$T/l.ev" a="$T/r0.ev" a2="$T/r1.ev"
	run -0 --separate-stderr ev-stats coll --table=stragglers "$T/l.ev"
	assert_line --index 1 --partial "$(printf 'a\t0\t3\t')"
	assert_line --index 2 --partial "$(printf 'a2\t1\t3\t')"
}

@test "coll: open collectives are bounded; the oldest are released and counted" {
	rankfile "$T/r0.ev" 0 50
	run -0 --separate-stderr ev-stats coll --max-open=4 --table=each "$T/r0.ev"
	assert_equal "${#lines[@]}" 51
	assert_line --index 1 --partial "$(printf '0\t0000000000000005\t0\tallreduce\tfloat32\t1048576\t2\t1\t')"
	assert_equal "${stderr_lines[0]}" "ev-stats: warning: 50 collectives were not seen on every rank of their communicator"
	assert_equal "${stderr_lines[1]}" "ev-stats: warning: 46 of them released early, oldest first, past --max-open=4 open collectives or 4194304 arrivals held"
	run -2 ev-stats coll --max-open=0 "$T/r0.ev"
}

@test "coll: a communicator of 10^6 ranks in a small file costs what arrived (sparse)" {
	{
		printf '#ev 1.0 96 clock=ns origin=trace\n#comm 9 nranks=1000000\n'
		printf 'type\top\trank\tstream\tts\tdur\tbytes\tcomm\tseq\tdtype\n'
		for ((i = 0; i < 300; i++)); do printf 'coll\tallgather\t%d\t1\t%d\t1000\t4096\t9\t%d\tfloat32\n' $((i % 3)) "$i" $((i / 3)); done
	} >"$T/big.tsv"
	pack "$T/big.tsv" "$T/big.ev"
	# Nothing is sized by nranks: 100 collectives x 10^6 ranks x 32 bytes
	# would be 3.2 GB; what arrived is 300 arrivals.
	run -0 --separate-stderr /usr/bin/time -f 'maxrss %M' -o "$T/rss" ev-stats coll "$T/big.ev"
	assert_line --index 1 "$(printf '*\tallgather\tfloat32\t4096\t1000000\t100\t1\t1\t1\t1\t0.002\t0.002\t0.002\t0.002\t3.814697265625\t3.814697265625\t3.8146934509277344\t3.8146934509277344\t0.1')"
	assert_equal "${stderr_lines[0]}" "ev-stats: warning: 100 collectives were not seen on every rank of their communicator"
	run -0 awk '$1 == "maxrss" && $2 < 200000 { print "bounded" }' "$T/rss"
	assert_output bounded
}

@test "compare: single-rank runs with different rank numbers pair by position" {
	printf 'type\trank\tts\tdur\tname\nkernel\t3\t0\t100000\tgemm_a\n' >"$T/b.tsv"
	printf 'type\trank\tts\tdur\tname\nkernel\t1\t0\t80000\tgemm_a\n' >"$T/t.tsv"
	pack "$T/b.tsv" "$T/b.ev"
	pack "$T/t.tsv" "$T/t.ev"
	ev-merge -q -o "$T/m.ev" base="$T/b.ev" test="$T/t.ev"
	run -0 ev-stats compare --what=timeline --no-hta "$T/m.ev"
	assert_line --index 0 "$(printf 'baseline\ttest\trank\ttest_rank\ttype\tmetric\tbase\tvalue\tdiff\tpct\tstatus\tbase_count\ttest_count')"
	assert_line --index 1 --regexp "$(printf '^base\ttest\t3\t1\tcomputation_time\ttime_ms\t0.1\t0.08\t-0.02[0-9]*\t-20[.0-9]*\tBetter\t\t$')"
	refute_output --partial only-
	# A rank without a partner is reported on its side, with its numbers.
	printf 'type\trank\tts\tdur\tname\nkernel\t1\t0\t80000\tgemm_a\nkernel\t5\t0\t70000\tgemm_a\n' >"$T/t2.tsv"
	pack "$T/t2.tsv" "$T/t2.ev"
	ev-merge -q -o "$T/m2.ev" base="$T/b.ev" test="$T/t2.ev"
	run -0 ev-stats compare --what=timeline --no-hta "$T/m2.ev"
	assert_output --partial "$(printf 'base\ttest\t3\t1\tcomputation_time\ttime_ms\t0.1\t0.08\t')"
	assert_output --partial "$(printf 'base\ttest\t\t5\tcomputation_time\ttime_ms\t\t0.07\t\t\tonly-test\t\t')"
}

@test "compare --rank-mean: each run's mean over its ranks" {
	# Base ranks 0 and 1: 100 and 300 us of compute (mean 200); test: one
	# rank of 150 us (mean 150): -25%, where rank by rank says -50%.
	printf 'type\trank\tts\tdur\tname\nkernel\t0\t0\t100000\tgemm_a\nkernel\t1\t0\t300000\tgemm_a\n' >"$T/b.tsv"
	printf 'type\trank\tts\tdur\tname\nkernel\t0\t0\t150000\tgemm_a\n' >"$T/t.tsv"
	pack "$T/b.tsv" "$T/b.ev"
	pack "$T/t.tsv" "$T/t.ev"
	ev-merge -q -o "$T/m.ev" base="$T/b.ev" test="$T/t.ev"
	run -0 ev-stats compare --what=timeline --no-hta --rank-mean "$T/m.ev"
	assert_line --index 0 "$(printf 'baseline\ttest\ttype\tmetric\tbase\tvalue\tdiff\tpct\tstatus\tbase_count\ttest_count')"
	assert_line --index 1 --regexp "$(printf '^base\ttest\tcomputation_time\ttime_ms\t0.2\t0.15\t-0.0500*[0-9]?\t-25.00*[0-9]?\tBetter\t\t$')"
	refute_output --partial only-
	run -0 ev-stats compare --what=timeline --no-hta "$T/m.ev"
	assert_line --index 1 --regexp "$(printf '^base\ttest\t0\t0\tcomputation_time\ttime_ms\t0.1\t0.15\t0.0[45][0-9]*\t(49.9|50)[.0-9]*\tWorse\t')"
}

@test "an analysis with nothing to report says why on stderr" {
	printf 'type\tts\tdur\tname\nkernel\t0\t1000\tvectorized_elementwise\n' >"$T/e.tsv"
	pack "$T/e.tsv" "$T/e.ev"
	run -0 --separate-stderr ev-stats ops "$T/e.ev"
	assert_equal "$stderr" "ev-stats: warning: ops: none of the 1 GPU events is linked to a launching op (no sig): empty table"
	run -0 --separate-stderr ev-stats variance "$T/e.ev"
	assert_equal "$stderr" "ev-stats: warning: variance: no kernel of class gemm among 1 kernels: empty table (try --class=all)"
	run -0 --separate-stderr ev-stats coll "$T/e.ev"
	assert_equal "$stderr" "ev-stats: warning: coll: no coll records among 1 records: empty table (no collectives were traced or converted)"
	run -0 --separate-stderr ev-stats coll --table=each "$T/e.ev"
	assert_output "$(printf 'src\tcomm\tseq\tcoll\tdtype\tbytes\tnranks\tseen\tts\tlatency_us\tstart_skew_us\tend_skew_us\tavg_wait_us\tfirst_rank\tlast_rank\talgbw_GBps\tbusbw_GBps')"
	assert_equal "$stderr" "ev-stats: warning: coll: no coll records among 1 records: empty table (no collectives were traced or converted)"
	printf 'type\top\tts\tdur\tbytes\tcomm\tseq\taux\ncoll\tallreduce\t0\t1\t8\t1\t0\t1\n' >"$T/n.tsv"
	pack "$T/n.tsv" "$T/n.ev"
	run -0 --separate-stderr ev-stats timeline "$T/n.ev"
	assert_equal "$stderr" "ev-stats: warning: timeline: no GPU events (kernel, memcpy, memset) among 1 records: empty table"
	run -0 --separate-stderr ev-stats compare --what=kernels "$T/e.ev"
	assert_equal "$stderr" "$(printf '%s\n' "ev-stats: warning: 1 row(s) of a single instance: std left empty (a sample std needs two)" \
		"ev-stats: warning: compare: only one source in the input; nothing to compare")"
	# -q silences it.
	run -0 --separate-stderr ev-stats ops -q "$T/e.ev"
	assert_equal "$stderr" ""
}

@test "options a subcommand does not use are usage errors" {
	run -2 ev-stats kernels --what=timeline
	assert_output --partial "ev-stats: kernels: --what does not apply (it is for: compare)"
	run -2 ev-stats timeline --table=each
	run -2 ev-stats timeline --exact-limit=5
	run -2 ev-stats coll --key=name
	run -2 ev-stats compare --what=kernels --no-hta
	assert_output --partial "ev-stats: compare --what=kernels: --no-hta does not apply (it is for: timeline)"
	run -2 ev-stats compare --table=each
	run -2 ev-stats coll --table=nope
	assert_output --partial "--table: 'nope' is not one of: summary, each, stragglers"
	# Options of the compared analysis, and after the file names, are fine.
	printf 'type\tts\tdur\tname\nkernel\t0\t1000\tk\n' >"$T/k.tsv"
	pack "$T/k.tsv" "$T/k.ev"
	run -0 ev-stats compare -q --what=timeline "$T/k.ev" --no-hta
	run -0 ev-stats kernels "$T/k.ev" --by=rank -q
	assert_line --index 0 --partial "$(printf 'rank\tname\t')"
}

@test "--help prints percent signs once" {
	run -0 ev-stats --help
	assert_output --partial "within 0.5%"
	refute_output --partial "%%"
}

@test "--help states --class's defaults as ops and variance apply them" {
	# ops reports every kernel class unless --class narrows it; variance
	# keeps GEMMs.  The help once said GEMMs for both.
	run -0 ev-stats --help
	assert_output --partial "[ops: all; variance: gemm]"
	refute_output --partial "ops, variance: kernel classes [gemm]"
	printf 'type\top\tts\tdur\tname\tsig\tstep\n' >"$T/o.tsv"
	printf 'kernel\tgemm\t0\t1000\tCijk_a\taten::mm\t1\nkernel\telementwise\t5000\t1000\tvectorized_elementwise_kernel\taten::add\t2\n' >>"$T/o.tsv"
	pack "$T/o.tsv" "$T/o.ev"
	run -0 bash -c 'ev-stats ops -q "$1" | cut -f1,3' _ "$T/o.ev"
	assert_output "$(printf 'sig\tclass\naten::mm\tgemm\naten::add\telementwise')"
	run -0 bash -c 'ev-stats variance -q "$1" | cut -f2,3' _ "$T/o.ev"
	assert_output "$(printf 'key\tname\naten::mm\tCijk_a')"
}

@test "format-legal extreme ts and dur give no negative durations" {
	printf 'type\tstream\tts\tdur\tname\nkernel\t1\t9223372036854775000\t18446744073709551615\tCijk_a\nkernel\t2\t9223372036854775100\t10\tncclKernel_x\n' >"$T/x.tsv"
	pack "$T/x.tsv" "$T/x.ev"
	run -0 bash -c 'ev-stats timeline --no-hta "$1" | cut -f3,4' _ "$T/x.ev"
	assert_line --index 1 "$(printf 'computation_time\t0.000807')"
	assert_line --index 6 "$(printf 'total_time\t0.000807')"
	run -0 bash -c 'ev-stats timeline --no-hta "$1" | awk -F"\t" "NR > 1 && \$4 < 0"' _ "$T/x.ev"
	assert_output ""
	run -0 bash -c 'ev-overlap --table "$1" | cut -f5,8,12' _ "$T/x.ev"
	assert_line --index 1 "$(printf '1.844674407370955e+16\t1\t0.01')"
	printf 'type\top\trank\tts\tdur\tbytes\tcomm\tseq\taux\ncoll\tallreduce\t0\t-9223372036854775808\t5\t8\t1\t0\t2\ncoll\tallreduce\t1\t9223372036854775000\t18446744073709551615\t8\t1\t0\t2\n' >"$T/c.tsv"
	pack "$T/c.tsv" "$T/c.ev"
	run -0 bash -c 'ev-stats coll --table=each "$1" | cut -f10-13' _ "$T/c.ev"
	assert_line --index 1 "$(printf '0.005\t1.844674407370955e+16\t1.844674407370955e+16\t9223372036854776')"
}

@test "SIGTERM leaves no temporary output behind" {
	mkfifo "$T/in"
	ev-stats kernels -o "$T/out.tsv" "$T/in" &
	pid=$!
	exec 5>"$T/in"
	wait_reading "$pid"
	kill -TERM "$pid"
	wait "$pid" || true
	exec 5>&-
	run -0 find "$T" -name '.out.tsv*'
	assert_output ""
	[ ! -e "$T/out.tsv" ]
}

# names N FILE.ev: N kernels of N names k1..kN, then k1 and kN again.
many_names() {
	awk -v n="$1" 'BEGIN { print "type\tts\tdur\tname"; for (i = 1; i <= n; i++) printf "kernel\t%d\t1000\tk%d\n", i * 1000, i
	                      printf "kernel\t%d\t3000\tk1\nkernel\t%d\t3000\tk%d\n", (n + 1) * 1000, (n + 5) * 1000, n }' >"$T/names.tsv"
	pack "$T/names.tsv" "$2"
}

@test "kernels: past --max-names the other names share one counted row, said on stderr" {
	many_names 200000 "$T/n.ev"
	run -0 --separate-stderr ev-stats kernels --max-names=1000 -o "$T/out.tsv" "$T/n.ev"
	[[ "${stderr_lines[0]}" =~ ^"ev-stats: warning: kernels: 199001 kernels of about "([0-9]+)" other names past --max-names=1000 share the row '(other names)'"$ ]]
	n=${BASH_REMATCH[1]}
	[ "$n" -gt 198000 ] && [ "$n" -lt 200000 ]
	run -0 wc -l <"$T/out.tsv"
	assert_output 1002
	# the first 1000 names keep their rows; k200000's second kernel is folded too
	run -0 awk -F'\t' '$1 == "(other names)" || $1 == "k1" || $1 == "k1000" || $1 == "k1001" { print $1, $2, $3, $4 }' "$T/out.tsv"
	assert_output - <<'EOF'
(other names) (mixed) 199001 199003
k1 other 2 4
k1000 other 1 1
EOF
	# no limit: every name has its row
	run -0 ev-stats kernels -q --max-names=0 -o "$T/all.tsv" "$T/n.ev"
	run -0 wc -l <"$T/all.tsv"
	assert_output 200001
	run -2 ev-stats kernels --max-names=x "$T/n.ev"
	assert_output --partial -- "--max-names: expected a count"
	run -2 ev-stats categories --max-names=10 "$T/n.ev"
	assert_output --partial "--max-names does not apply (it is for: kernels)"
}

@test "kernels: out of memory names the input and the bound, not the output" {
	[[ "$EV_BIN" != *asan* ]] || skip "ulimit -v cannot be combined with ASan's shadow memory"
	many_names 200000 "$T/n.ev"
	run -1 bash -c 'ulimit -v 60000; ev-stats kernels --max-names=0 -o "$1/out.tsv" "$1/n.ev"' _ "$T"
	assert_output --regexp "^ev-stats: $T/n.ev: record [0-9]+: out of memory holding the table's groups \(--max-names bounds a kernels table\)\$"
	[ ! -e "$T/out.tsv" ]
	# the bound keeps the same input within the same memory
	run -0 bash -c 'ulimit -v 60000; ev-stats kernels -q --max-names=1000 -o "$1/out.tsv" "$1/n.ev"' _ "$T"
}
