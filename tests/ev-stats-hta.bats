#!/usr/bin/env bats
# ev-stats idle, launch, queue, membw: HTA's idle time breakdown, kernel
# launch statistics, queue length and memory bandwidth summaries, against
# what HTA returned on the shared traces (tests/expected/hta/README) and on
# small generated streams worked out by hand.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	E="$TESTS_DIR/expected/hta"
}

# convert: every shared HTA trace of traces.tsv to $T/NAME.ev.
convert() {
	local name path
	while IFS=$'\t' read -r name path; do
		case "$name" in '#'* | '') continue ;; esac
		kineto2ev -q -o "$T/$name.ev" "$SHARED_DATA/kineto/hta/$path"
	done <"$E/traces.tsv"
}

# same REF OURS TOL: two files of "key<TAB>values..." lines hold the same
# keys, and each value of OURS is within TOL of REF's (TOL < 0.001:
# relative, else absolute; empty equals empty).  Prints the differences.
same() {
	awk -F'\t' -v tol="$3" '
		function bad(a, b) {
			if (a == "" || b == "") return a != b
			d = a - b; if (d < 0) d = -d
			m = b < 0 ? -b : b
			return tol < 0.001 ? d > tol * (m > 1e-300 ? m : 1e-300) && a != b : d > tol
		}
		NR == FNR { ref[$1] = $0; next }
		{ seen[$1] = 1
		  if (!($1 in ref)) { print "only ours: " $0; next }
		  n = split(ref[$1], r, "\t")
		  for (i = 2; i <= n; i++) if (bad($i, r[i])) { print "differs: " $0 " vs " ref[$1]; break } }
		END { for (k in ref) if (!(k in seen)) print "only HTA: " ref[k] }' "$1" "$2"
}

@test "idle: the breakdown and interval statistics equal HTA's on 15 shared traces" {
	need_shared_data
	convert
	local name path
	: >"$T/ours" && : >"$T/ours_i"
	while IFS=$'\t' read -r name path; do
		case "$name" in '#'* | '') continue ;; esac
		ev-stats idle -q "$T/$name.ev" | awk -F'\t' -v n="$name" 'NR > 1 {
			printf "%s|%s|%s\t%s\t%s\n", n, $3, $4, $5, $6 == "" ? "" : sprintf("%.2f", $6) }' >>"$T/ours"
		ev-stats idle --table=intervals -q "$T/$name.ev" | awk -F'\t' -v n="$name" 'NR > 1 {
			printf "%s|%s|%s", n, $3, $4; for (i = 5; i <= 12; i++) printf "\t%s", $i; print "" }' >>"$T/ours_i"
	done <"$E/traces.tsv"
	awk -F'\t' '!/^#/ { printf "%s|%s|%s\t%s\t%s\n", $1, $2, $3, $4, $5 }' "$E/idle.tsv" >"$T/ref"
	awk -F'\t' '!/^#/ { printf "%s|%s|%s", $1, $2, $3; for (i = 4; i <= 11; i++) printf "\t%s", $i; print "" }' \
		"$E/idle_intervals.tsv" >"$T/ref_i"
	# HTA rounds both tables to two decimals.
	run -0 same "$T/ref" "$T/ours" 0.0051
	assert_output ''
	run -0 same "$T/ref_i" "$T/ours_i" 0.0051
	assert_output ''
	assert_equal "$(wc -l <"$T/ours")" "$(grep -vc '^#' "$E/idle.tsv")"
}

@test "launch: summary equals pandas' describe of HTA's table, every launch HTA lists is ours" {
	need_shared_data
	convert
	local name path
	: >"$T/ours" && : >"$T/events"
	while IFS=$'\t' read -r name path; do
		case "$name" in '#'* | '') continue ;; esac
		ev-stats launch -q "$T/$name.ev" | awk -F'\t' -v n="$name" 'NR > 1 {
			printf "%s|%s", n, $3; for (i = 4; i <= 12; i++) printf "\t%s", $i; print "" }' >>"$T/ours"
		# The streamed rows carry the launch's step: HTA leaves out the
		# last step of a trace with two or more (the highest step here).
		ev-stats launch --table=events -q "$T/$name.ev" | awk -F'\t' -v n="$name" '
			NR > 1 { line[NR] = n "|" $3 "\t" $7 "\t" $8 "\t" $9; step[NR] = $4; if ($4 > max) max = $4 }
			END { for (i in line) if (max < 2 || step[i] < max) print line[i] }' >>"$T/events"
	done <"$E/traces.tsv"
	awk -F'\t' '!/^#/ { printf "%s|%s", $1, $2; for (i = 3; i <= 11; i++) printf "\t%s", $i; print "" }' \
		"$E/launch.tsv" >"$T/ref"
	run -0 same "$T/ref" "$T/ours" 1e-9
	assert_output ''
	# HTA's full table of the traces with at most 602 launches.
	awk -F'\t' '!/^#/ { print $1 "|" $2 "\t" $3 "\t" $4 "\t" $5 }' "$E/launch_events.tsv" >"$T/ref_e"
	cut -d'|' -f1 "$T/ref_e" | sort -u >"$T/small"
	grep -F -f <(sed 's/$/|/' "$T/small") "$T/events" >"$T/ours_e"
	run -0 same "$T/ref_e" "$T/ours_e" 0
	assert_output ''
	assert_equal "$(wc -l <"$T/ours_e")" "$(wc -l <"$T/ref_e")"
}

@test "queue: equal to HTA's; where HTA's unstable sort reorders ties, equal counts and extremes" {
	need_shared_data
	convert
	local name path
	: >"$T/ours"
	while IFS=$'\t' read -r name path; do
		case "$name" in '#'* | '') continue ;; esac
		ev-stats queue -q "$T/$name.ev" | awk -F'\t' -v n="$name" 'NR > 1 {
			printf "%s|%s", n, $3; for (i = 4; i <= 11; i++) printf "\t%s", $i; print "" }' >>"$T/ours"
	done <"$E/traces.tsv"
	awk -F'\t' '!/^#/ { printf "%s|%s", $1, $2; for (i = 3; i <= 10; i++) printf "\t%s", $i; print "" }' \
		"$E/queue.tsv" >"$T/ref"
	# HTA sorts launches and starts by time with numpy's quicksort, which
	# for more than 16 rows puts equal microseconds in an arbitrary order;
	# evkit puts a launch before a start of the same microsecond (HTA's
	# concatenation order).  On these streams the order of such ties
	# changes the running values: count, min and max stay equal.
	local ties='cp_simple_add|7 nccl_parser_config|7 ns_resolution_trace|7 negative_queue_length_values_check|7
		negative_queue_length_values_check|27 df_index_resolver|7 df_index_resolver|14'
	local k
	for k in $ties; do
		grep -F "$k"$'\t' "$T/ref" | cut -f1,2,5,9 >>"$T/ref_t"
		grep -F "$k"$'\t' "$T/ours" | cut -f1,2,5,9 >>"$T/ours_t"
	done
	grep -v -F -f <(printf '%s\t\n' $ties) "$T/ref" >"$T/ref_x"
	grep -v -F -f <(printf '%s\t\n' $ties) "$T/ours" >"$T/ours_x"
	run -0 same "$T/ref_x" "$T/ours_x" 1e-6
	assert_output ''
	run -0 same "$T/ref_t" "$T/ours_t" 0
	assert_output ''
	assert_equal "$(wc -l <"$T/ours_x")" 27
}

@test "membw: equal to HTA's, with the bandwidth the trace wrote" {
	need_shared_data
	convert
	local name path
	: >"$T/ours"
	while IFS=$'\t' read -r name path; do
		case "$name" in '#'* | '') continue ;; esac
		run -0 --separate-stderr ev-stats membw "$T/$name.ev"
		[ -z "$stderr" ] || [[ "$stderr" == *"single instance"* || "$stderr" == *"empty table"* ]] ||
			fail "$name: $stderr"
		awk -F'\t' -v n="$name" 'NR > 1 {
			printf "%s|%s", n, $3; for (i = 4; i <= 11; i++) printf "\t%s", $i; print "" }' <<<"$output" >>"$T/ours"
	done <"$E/traces.tsv"
	awk -F'\t' '!/^#/ { printf "%s|%s", $1, $2; for (i = 3; i <= 10; i++) printf "\t%s", $i; print "" }' \
		"$E/membw.tsv" >"$T/ref"
	# As for queue: HTA's quicksort reorders ends and starts of the same
	# microsecond, and the sum's rounding residues (1e-16 GB/s) count as
	# positive values or not; the quartiles and maximum stay equal.
	local k='ns_resolution_trace|Memcpy DtoD'
	grep -F "$k"$'\t' "$T/ref" | cut -f1,6- >"$T/ref_t"
	grep -F "$k"$'\t' "$T/ours" | cut -f1,6- >"$T/ours_t"
	run -0 same "$T/ref_t" "$T/ours_t" 1e-9
	assert_output ''
	run -0 same <(grep -v -F "$k"$'\t' "$T/ref") <(grep -v -F "$k"$'\t' "$T/ours") 1e-9
	assert_output ''
	assert_equal "$(wc -l <"$T/ours")" "$(grep -vc '^#' "$E/membw.tsv")"
}

# A rank of hand-made launches (tests/fixtures/ev-stats/hta.tsv), times in
# whole microseconds: k1 [20,30) launched at 10; k2 [40,50) launched at 22
# (before k1 ended); k3 [100,110) launched at 60, its call 12 us long; a
# memcpy [150,170) launched at 105 and one on stream 9 [160,180) at 106;
# ProfilerStep#2 starts at 200; k5 [300,310) launched at 210; a kernel at
# [5,6) whose launch is not in the trace.
hta_fixture() {
	pack "$TESTS_DIR/fixtures/ev-stats/hta.tsv" "$T/h.ev"
}

@test "idle: host_wait, kernel_wait, other; HTA's last step and unlaunched kernels left out" {
	hta_fixture
	# Two step names: HTA keeps what was launched before ProfilerStep#2, so
	# not k5 nor the kernel without a launch.  k2's gap (10) is
	# kernel_wait, k3's (50) host_wait (launched at 60, after k2 ended at
	# 50), the memcpy's (40) other.
	run -0 ev-stats idle -q "$T/h.ev"
	assert_output - <<'OUT'
config	rank	stream	idle_category	idle_time_us	idle_time_ratio
*	0	7	host_wait	50	0.5
*	0	7	kernel_wait	10	0.1
*	0	7	other	40	0.4
*	0	9	other	0	
OUT
	# --by rank: the rank column once.
	run -0 ev-stats idle -q --by rank "$T/h.ev"
	assert_line --index 0 "$(printf 'rank\tstream\tidle_category\tidle_time_us\tidle_time_ratio')"
	# --consecutive-kernel-delay: gaps under 50 us are kernel_wait.
	run -0 ev-stats idle -q --consecutive-kernel-delay=50 "$T/h.ev"
	assert_line --index 2 "$(printf '*\t0\t7\tkernel_wait\t50\t0.5')"
	# One step name: HTA keeps every GPU event, launched in the trace or
	# not: k1 waits 14 us for the host after the unlaunched kernel, k5 130.
	sed 's/ProfilerStep#2/ProfilerStep#1/' "$TESTS_DIR/fixtures/ev-stats/hta.tsv" >"$T/one.tsv"
	pack "$T/one.tsv" "$T/one.ev"
	run -0 ev-stats idle --table=intervals -q "$T/one.ev"
	assert_line --index 1 "$(printf '*\t0\t7\thost_wait\t3\t64.66666666666666\t59.37451754189952\t14\t32\t50\t90\t130')"
}

@test "launch: durations, delays, HTA's outlier lists and options" {
	hta_fixture
	# k1: call 5, GPU 10, delay 20-10-5 = 5; k2: 4, 10, 14; k3: 12, 10, 28
	# (a short GPU kernel: 10 < 12); memcpys: 2, 20, 43 and 1, 20, 53.
	run -0 ev-stats launch -q "$T/h.ev"
	assert_output - <<'OUT'
config	rank	metric	count	mean_us	std_us	min_us	p25_us	p50_us	p75_us	max_us	outliers
*	0	cpu_duration	5	4.8	4.324349662087931	1	2	4	5	12	0
*	0	gpu_duration	5	14	5.477225575051661	10	10	10	20	20	1
*	0	launch_delay	5	28.6	19.83179265724609	5	14	28	43	53	0
OUT
	run -0 ev-stats launch -q --runtime-cutoff=4 --launch-delay-cutoff=40 --table=outliers "$T/h.ev"
	assert_output - <<'OUT'
src	rank	list	correlation	step	call	name	cpu_duration_us	gpu_duration_us	launch_delay_us
0	0	runtime_outlier	1	1	cudaLaunchKernel	k1	5	10	5
0	0	runtime_outlier	3	1	cudaLaunchKernel	k3	12	10	28
0	0	launch_delay_outlier	4	1	cudaMemcpyAsync	Memcpy HtoD (Pinned -> Device)	2	20	43
0	0	launch_delay_outlier	7	1	cudaMemcpyAsync	Memcpy HtoD (Pinned -> Device)	1	20	53
0	0	runtime_outlier	5	2	cudaLaunchKernel	k5	5	10	85
0	0	launch_delay_outlier	5	2	cudaLaunchKernel	k5	5	10	85
OUT
	# Kernel launches only; the streamed rows include the last step's.
	run -0 ev-stats launch -q --no-memory-events --table=events "$T/h.ev"
	assert_equal "$(cut -f3,4 <<<"$output" | tr '\n\t' ' :')" "correlation:step 1:1 2:1 3:1 5:2 "
	run -2 ev-stats idle --runtime-cutoff=4 "$T/h.ev"
	assert_output --partial "--runtime-cutoff"
}

@test "queue and membw: the running counts and bandwidths, by hand" {
	hta_fixture
	# Stream 7: +1 at 10, -1 at 20, +1 22, -1 40, +1 60, -1 100, +1 105,
	# -1 150 (k5's launch is in the last step); stream 9: +1 106, -1 160.
	run -0 ev-stats queue -q "$T/h.ev"
	assert_output - <<'OUT'
config	rank	stream	count	mean	std	min	p25	p50	p75	max
*	0	7	8	0.5	0.5345224838248488	0	0	0.5	1	1
*	0	9	2	0.5	0.7071067811865476	0	0.25	0.5	0.75	1
OUT
	# The trace's bandwidths: 1000 B / 25000 ns = 0.04 GB/s (not the 0.05
	# of the rounded 20 us), 3000 / 10000 = 0.3: 0.04, 0.34, 0.3, then ~0.
	run -0 ev-stats membw -q "$T/h.ev"
	assert_line --index 1 --partial "$(printf '*\t0\tMemcpy HtoD\t3\t0.2266666666666')"
	assert_line --index 1 --partial "$(printf '\t0.04\t0.17\t0.3\t')"
	# Without the measured duration (an older stream): bytes / dur, said.
	sed 's/\t25000$/\t0/' "$TESTS_DIR/fixtures/ev-stats/hta.tsv" >"$T/old.tsv"
	pack "$T/old.tsv" "$T/old.ev"
	run -0 --separate-stderr ev-stats membw "$T/old.ev"
	assert_line --index 1 --partial "$(printf '\t0.05\t')"
	assert_equal "$stderr" "ev-stats: warning: 1 memcpy/memset events have no exact bandwidth from the trace (no \"memory bandwidth (GB/s)\", or converted by an older kineto2ev): bytes / duration used, which differs from HTA's where the trace's duration is rounded"
}
