#!/usr/bin/env bats
# ev-overlap: overlap of compute kernels with communication, per instance
# and per rank.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	# Rank 0: comm D [0,5) runs when GEMM [0,100) starts; A [20,40) and
	# B [30,60) overlap each other; C [90,150) outlives the GEMM; E starts
	# exactly at the GEMM's end (no overlap).  Rank 1: a GEMM alone.
	# Times in microseconds (x1000 ns).
	{
		printf 'type\trank\tstream\tts\tdur\tname\tid\n'
		printf 'kernel\t0\t9\t0\t5000\tncclD\t1\n'
		printf 'kernel\t0\t7\t0\t100000\tCijk_gemm\t2\n'
		printf 'kernel\t1\t7\t0\t50000\tCijk_gemm\t3\n'
		printf 'kernel\t0\t9\t20000\t20000\tncclA\t4\n'
		printf 'kernel\t0\t8\t30000\t30000\tncclB\t5\n'
		printf 'kernel\t0\t7\t70000\t0\tzero_len_kernel\t6\n'
		printf 'kernel\t0\t9\t90000\t60000\tncclC\t7\n'
		printf 'kernel\t0\t9\t100000\t20000\tncclE\t8\n'
	} >"$T/o.tsv"
	pack "$T/o.tsv" "$T/o.ev"
}

@test "per instance: count, names, largest overlap, union without double counting" {
	run -0 ev-overlap --table "$T/o.ev"
	assert_line --index 0 "$(printf 'src\trank\tstream\tts\tdur_us\tname\tsig\tcomm_count\tcomm_names\tmax_overlap_pct\tmax_overlap_name\toverlap_us\toverlap_pct')"
	# Closed in end order: rank 1's GEMM (end 50) first.
	assert_line --index 1 "$(printf '0\t1\t7\t0\t50\tCijk_gemm\t\t0\t\t0\t\t0\t0')"
	# Union = [0,5) + [20,60) + [90,100) = 55 us; largest single = B, 30 us.
	assert_line --index 2 "$(printf '0\t0\t7\t0\t100\tCijk_gemm\t\t4\tncclD;ncclA;ncclB;ncclC\t30\tncclB\t55\t55')"
	assert_equal "${#lines[@]}" 3
}

@test "--class=all also reports non-GEMM compute, including zero-length kernels" {
	run -0 ev-overlap --table --class=all "$T/o.ev"
	assert_output --partial "$(printf '0\t0\t7\t70000\t0\tzero_len_kernel\t\t0\t\t0\t\t0\t0')"
}

@test "per rank: comm time, hidden, exposed and HTA's overlap percentage" {
	run -0 ev-overlap --summary "$T/o.ev"
	# comm union [0,5)+[20,60)+[90,150) = 105 (E lies inside C); under the GEMM: 55.
	assert_line --index 1 "$(printf '0\t0\t105\t55\t50\t52.38095238095238\t1\t1')"
	assert_line --index 2 "$(printf '0\t1\t0\t0\t0\t0\t1\t0')"
}

@test "ev output: overlap records at the kernel's end keep time order" {
	ev-overlap -o "$T/with.ev" "$T/o.ev"
	run -0 ev-view -M -H -c type,rank,ts,dur,bytes,aux,step,name,sig "$T/with.ev"
	assert_line --index 5 "$(printf 'overlap\t1\t50000\t50000\t0\t0\t0\tCijk_gemm\t')"
	assert_line --index 8 "$(printf 'overlap\t0\t100000\t100000\t55000\t4\t300\tCijk_gemm\tncclB')"
	# The result is a valid, ordered stream: ev-overlap accepts it again.
	run -0 ev-overlap --summary "$T/with.ev"
	grep -q '^#meta overlap.src0.rank0.comm_ns=105000 ' <(ev-view "$T/with.ev")
}

@test "unordered input is an error naming the record" {
	printf 'type\tts\tdur\tname\nkernel\t500\t1\tncclX\nkernel\t100\t1\tCijk\n' >"$T/u.tsv"
	pack "$T/u.tsv" "$T/u.ev"
	run -1 ev-overlap --table "$T/u.ev"
	assert_output --regexp 'record 2: out of order'
}

@test "usage errors exit 2" {
	run -2 ev-overlap --class=comm
	run -2 ev-overlap --rules=nope
}

@test "overlapping communication is named by its collective when a coll record follows" {
	{
		printf 'type\top\trank\tstream\tts\tdur\tname\n'
		printf 'kernel\tgemm\t0\t7\t0\t100000\tCijk_gemm\n'
		printf 'kernel\tcomm\t0\t9\t10000\t20000\tncclDevKernel_Generic_1\n'
		printf 'coll\tallgather\t0\t9\t10000\t20000\tncclDevKernel_Generic_1\n'
		printf 'kernel\tcomm\t0\t9\t50000\t10000\tncclDevKernel_Generic_1\n'
	} >"$T/c.tsv"
	pack "$T/c.tsv" "$T/c.ev"
	run -0 bash -c 'ev-overlap --table "$1" | cut -f8-11' _ "$T/c.ev"
	assert_line --index 1 "$(printf '2\tallgather;ncclDevKernel_Generic_1\t20\tallgather')"
	run -0 bash -c 'ev-overlap --table --kernel-names "$1" | cut -f8-11' _ "$T/c.ev"
	assert_line --index 1 "$(printf '2\tncclDevKernel_Generic_1\t20\tncclDevKernel_Generic_1')"
	ev-overlap -o "$T/o.ev" "$T/c.ev"
	run -0 ev-view -M -H -t overlap -c sig "$T/o.ev"
	assert_output allgather
}

@test "nothing to report is said on stderr" {
	printf 'type\tts\tdur\tname\nkernel\t0\t1000\tvectorized_elementwise\n' >"$T/e.tsv"
	pack "$T/e.tsv" "$T/e.ev"
	run -0 --separate-stderr ev-overlap --table "$T/e.ev"
	assert_equal "${#lines[@]}" 1
	assert_equal "$stderr" "ev-overlap: warning: no compute kernel of class gemm among 1 kernels: nothing to report (try --class=all)"
	run -0 --separate-stderr ev-overlap --summary --class=all "$T/e.ev"
	assert_equal "$stderr" "ev-overlap: warning: no communication kernels among 1 kernels (--rules=tracelens): every overlap is 0"
	run -0 --separate-stderr ev-overlap -q --summary --class=all "$T/e.ev"
	assert_equal "$stderr" ""
}

@test "the cost per record does not depend on idle ranks, and order holds across many ranks" {
	# 2000 ranks each with one GEMM and one overlapping comm kernel, interleaved.
	awk 'BEGIN { OFS = "\t"; print "type", "rank", "stream", "ts", "dur", "name"
		for (r = 0; r < 2000; r++) { print "kernel", r, 7, r * 10, 5000, "Cijk_g"; print "kernel", r, 9, r * 10 + 1, 100, "ncclK" } }' |
		sort -t$'\t' -k4,4n >"$T/m.tsv"
	{ printf 'type\trank\tstream\tts\tdur\tname\n'; grep -v '^type' "$T/m.tsv"; } >"$T/m2.tsv"
	pack "$T/m2.tsv" "$T/m.ev"
	ev-overlap -o "$T/out.ev" "$T/m.ev"
	# Overlap records come out in time order (the stream is valid) and each
	# GEMM got its 0.1 us.
	run -0 ev-overlap --summary "$T/out.ev"
	run -0 bash -c 'ev-view -M -H -t overlap -c bytes "$1" | sort -u' _ "$T/out.ev"
	assert_output 100
	run -0 bash -c 'ev-view -M -H -t overlap "$1" | wc -l' _ "$T/out.ev"
	assert_output 2000
}
