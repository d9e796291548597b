#!/usr/bin/env bats
# ev-stats kdist: HTA's kernel breakdown per rank (get_gpu_kernel_breakdown
# with duration_ratio / num_kernels) and its distribution across ranks, by
# hand and against what HTA returned (tests/expected/hta/README).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	E="$TESTS_DIR/expected/hta"
}

# ours NAME FILE.ev: our kernel table for the three settings of kdist.tsv,
# as "trace setting kernel_type rank name sum max min std mean".
ours() {
	local tag opts
	while read -r tag opts; do
		# shellcheck disable=SC2086 # opts is a word list
		ev-stats kdist -q $opts "$2" | awk -F'\t' -v n="$1" -v t="$tag" 'NR > 1 {
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n, t, $2, $4, $3, $5, $6, $7, $8, $9 }'
	done <<'SETTINGS'
default
ratio0.5_top5_nomemory --duration-ratio=0.5 --top=5 --no-memory-events
ratio0.6_top2 --duration-ratio=0.6 --top=2
SETTINGS
}

# same NAME OURS: OURS has HTA's rows of trace NAME, each value within 1e-6
# relative; prints the differences, then the row count.
same() {
	awk -F'\t' -v n="$1" '
		NR == FNR { if ($1 == n) { k = $2 "|" $3 "|" $4 "|" $5; ref[k] = $0 }; next }
		{ k = $2 "|" $3 "|" $4 "|" $5; seen[k] = 1
		  if (!(k in ref)) { print "only ours: " k; next }
		  split(ref[k], r, "\t")
		  for (i = 6; i <= 10; i++) {
			d = $i - r[i]; if (d < 0) d = -d; m = r[i] < 0 ? -r[i] : r[i]
			if (d > 1e-6 * (m > 1 ? m : 1)) { print "differs: " k " " $i " vs " r[i]; break } }
		  rows++ }
		END { for (k in ref) if (!(k in seen)) print "only HTA: " k; print rows " rows" }' "$E/kdist.tsv" "$2"
}

@test "kdist: the top kernels, HTA's 'others' and its second grouping, by hand" {
	pack "$TESTS_DIR/fixtures/ev-stats/kdist.tsv" "$T/k.ev"
	# Rank 0's four compute kernels by sum: kA 60, kB 50, kC 8, kD 2; with
	# --top=2, kC and kD are 'others' (sum 10, max 8, min 2, mean 5, std of
	# 8 and 2), and kA and kB keep their sums in every column (HTA groups
	# them again over the sums).  Rank 1 has two: its real statistics.
	run -0 ev-stats kdist --top=2 "$T/k.ev"
	assert_output - <<'OUT'
config	kernel_type	name	rank	sum_us	max_us	min_us	stddev_us	mean_us	count	instance_mean_us
*	COMMUNICATION	ncclKernel_AllReduce	0	40	40	40	0	40	1	40
*	COMPUTATION	kA	0	60	60	60	0	60	3	20
*	COMPUTATION	kA	1	120	40	40	0	40	3	40
*	COMPUTATION	kB	0	50	50	50	0	50	2	25
*	COMPUTATION	kB	1	50	25	25	0	25	2	25
*	COMPUTATION	others	0	10	8	2	4.242640687119285	5	2	5
*	MEMORY	Memcpy HtoD (Pinned -> Device)	0	5	5	5	0	5	1	5
OUT
	# Side by side: kA's instances take 20 us on rank 0 and 40 on rank 1.
	run -0 ev-stats kdist --top=2 --table=ranks "$T/k.ev"
	assert_output - <<'OUT'
config	kernel_type	name	ranks	slowest_rank	max_mean_us	min_mean_us	max_over_min	rank0_mean_us	rank1_mean_us
*	COMMUNICATION	ncclKernel_AllReduce	1	0	40	40	1	40	
*	COMPUTATION	kA	2	1	40	20	2	20	40
*	COMPUTATION	kB	2	0	25	25	1	25	25
*	MEMORY	Memcpy HtoD (Pinned -> Device)	1	0	5	5	1	5	
OUT
	# --no-memory-events leaves out HTA's MEMORY kernels; the default
	# --top (10) keeps every name, with its real statistics.
	run -0 ev-stats kdist --no-memory-events "$T/k.ev"
	refute_output --partial MEMORY
	assert_line "$(printf '*\tCOMPUTATION\tkA\t0\t60\t30\t10\t10\t20\t3\t20')"
}

@test "kdist: equal to HTA's on the four ranks of a generated run, and the slowest rank named" {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --ranks 4 --iters 5 --jitter 3 --seed 7 --run "$T/g" >/dev/null
	kineto2ev -q -o "$T/g.ev" "$T"/g/torch_profiler/rank*/trace.json
	ours gen4 "$T/g.ev" >"$T/ours"
	run -0 same gen4 "$T/ours"
	assert_output "48 rows"
	# GEMM A lasts 100 + 10 i + r us plus jitter: rank 3 is the slowest.
	run -0 ev-stats kdist --table=ranks "$T/g.ev"
	assert_line --partial "$(printf 'Cijk_Ailk_Bljk_SB_MT128x128x32_MI32x32x1x2\t4\t3\t')"
}

@test "kdist: equal to HTA's on the two ranks of the shared trace_filter trace (last step left out)" {
	need_shared_data
	kineto2ev -q -o "$T/tf.ev" "$SHARED_DATA"/kineto/hta/trace_filter/sampled_rank-{0,1}.json.gz
	ours trace_filter "$T/tf.ev" >"$T/ours"
	run -0 same trace_filter "$T/ours"
	assert_output "62 rows"
}

@test "kdist: --duration-ratio is checked and only for kdist" {
	run -2 ev-stats kdist --duration-ratio=1.5 /dev/null
	assert_output --partial "--duration-ratio: expected 0 to 1, got '1.5'"
	run -2 ev-stats queue --duration-ratio=0.5 /dev/null
	assert_output --partial "--duration-ratio does not apply"
}
