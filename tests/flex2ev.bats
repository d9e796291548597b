#!/usr/bin/env bats
# flex2ev and flex-stats: IBM AIU ("Flex") traces.  Expected values are
# derived by hand from the JSON (see the comments), and checked against
# acelyzer's own outputs where it is right (docs/flex2ev.md).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$TESTS_DIR/fixtures/flex2ev"
	A="$SHARED_DATA/acelyzer"
	V="$TESTS_DIR/fixtures/ev2perfetto/validate.py"
}

# col CSV NAME: the values of one column (by header name).
col() {
	awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$1"
}

@test "--help and usage errors" {
	run -0 --separate-stderr flex2ev --help
	assert_line --index 0 "Usage: flex2ev [options] FILE..."
	assert_output --partial "Exit status:"
	run -2 flex2ev
	assert_output --partial "no input file"
	run -2 flex2ev --overlap=async "$F/job.json"
	assert_output --partial "not supported"
	run -2 flex2ev --freq=fast "$F/job.json"
	assert_output --partial "--freq: expected SOC[:CORE]"
	run -2 flex2ev --align=magic "$F/job.json"
	run -2 flex2ev --rank=1 "$F/job.json" "$F/job2.json"
	run -0 --separate-stderr flex-stats --help
	assert_line --index 0 "Usage: flex-stats TABLE [options] [FILE...]"
	run -2 flex-stats
	assert_output --partial "no TABLE given"
	run -2 flex-stats nonsense
	run -2 flex-stats summary -c "$F/job.json"
	assert_output --partial "-c applies to the categories table"
}

@test "job fixture: records, classes and device times by hand" {
	# Device slices are their instruction's interval ending at the host end
	# (1000 MHz: 1 cycle = 1 ns).  DMA inside the compute window [1015 us,
	# 1100 us] is a protocol signal when it moves 128 bytes, else data;
	# outside it stays DATA_IN/DATA_OUT.
	# Its host times were written by hand, not by a clock, and the clock
	# estimates disagree.  By duration: sub 5000 cycles / 10 us = 500 MHz,
	# addmm 55296 / 60 = 921.6, relu 1000 / 5 = 200, bmm 20000 / 30 =
	# 666.67 (mean 572.07, (921.6 - 200) / 572.07 = 1.261 apart).  By
	# interval (TS3 and host start after the previous kernel's, in file
	# order): sub 500 (the first: its duration's), addmm 7000 / 20 = 350,
	# relu 30000 / 10 = 3000, bmm 30000 / 50 = 600 (mean 1112.5, 2.382).
	# Every event reads Power 0x10: no charge between two readings is
	# acelyzer's 2^32 wrap, far above 100 W, so all 7 samples are 0.
	run -0 flex2ev -o "$T/j.ev" "$F/job.json"
	assert_line "flex2ev: warning: 7 Power sample(s) above 100 W (or from readings going backwards): written as 0 (acelyzer's rule)"
	assert_line --index 0 --regexp '^flex2ev: warning: .*job.json: the clock estimates spread over more than 10% \(rel_range 2\.382 by interval, 1\.261 by duration; min/mean/max over 4 kernel\(s\) of 1 rank\(s\): by interval 350\.00/1112\.50/3000\.00, by duration 200\.00/572\.07/921\.60\): no --freq to recommend; check the trace.s time stamps$'
	run -0 view "$T/j.ev" -H -t range,memcpy,kernel,mark -c type,op,ts,dur,bytes,name,sig
	assert_output - <<'EOF'
range	other	995000	145000	0	AIU Roundtrip	ROUNDTRIP_AIU
range	other	1005000	2000	0	LaunchComputeStream	OTHER
memcpy	htod	1008000	2000	4096	Input_0 DmaI	DATA_IN
kernel	other	1015000	5000	0	sub Cmpt Exec	COMPUTE_EXEC
memcpy	dtoh	1021800	200	128	Sig_1 DmaO	MAIU_PROTOCOL_SIGNAL_DATA
memcpy	htod	1023900	100	128	Ack_1 DmaI	MAIU_PROTOCOL_SIGNAL_ACK
memcpy	htod	1029000	1000	4096	Data_1 DmaI	MAIU_PROTOCOL_RECV_DATA
kernel	other	1034704	55296	0	addmm_MatMul-BMM_1 Cmpt Exec	COMPUTE_EXEC
kernel	other	1044000	1000	0	relu Cmpt Exec	COMPUTE_EXEC
mark	other	1050000	0	0	marker	OTHER
kernel	other	1100000	20000	0	bmm-BMM_1 Cmpt Exec	COMPUTE_EXEC
memcpy	dtoh	1127000	3000	4096	Data_2 DmaO	DATA_OUT
EOF
	# Each kernel's TS1..TS5 ride in the tsx record right before it: bytes
	# = TS1, step = TS2-TS1, aux = TS3-TS2, step_size = TS4-TS3, id =
	# TS5-TS4 (sub: 1002000, +0, +1000, +5000, +10).
	run -0 view "$T/j.ev" -H -t tsx,kernel -c type,ts,stream
	assert_output - <<'EOF'
tsx	1015000	3
kernel	1015000	3
tsx	1034704	3
kernel	1034704	3
tsx	1044000	5
kernel	1044000	5
tsx	1100000	3
kernel	1100000	3
EOF
	run -0 view "$T/j.ev" -H -t tsx -c bytes,step,aux,step_size,id
	assert_output - <<'EOF'
1002000	0	1000	5000	10
1009000	0	1000	55296	4
1039000	0	1000	1000	5
1066000	0	4000	20000	5
EOF
	# --no-tighten keeps the host times; --freq=500 doubles device times.
	run -0 bash -c 'flex2ev -q --no-tighten "$1" | ev-view -M -H -c ts,dur -n "^sub " ' _ "$F/job.json"
	assert_output "1010000	10000"
	run -0 bash -c 'flex2ev -q --freq=500 "$1" | ev-view -M -H -c ts,dur -n "^sub " ' _ "$F/job.json"
	assert_output "1010000	10000"
	run -0 bash -c 'flex2ev -q --freq=2000 "$1" | ev-view -M -H -c ts,dur -n "^sub " ' _ "$F/job.json"
	assert_output "1017500	2500"
	run -0 bash -c 'flex2ev --drop-prep --overlap=drop -v "$1" 2>&1 >/dev/null' _ "$F/job.json"
	assert_line "flex2ev: 23 objects: 10 B, 10 E, 1 X, 1 metadata, 1 instants, 0 counters, 0 other"
	assert_line "flex2ev: 10 B/E pairs, 0 unmatched B, 0 unmatched E, 0 reversed; 9 device, 2 CPU"
	assert_line "flex2ev: class COMPUTE_EXEC 4"
	assert_line "flex2ev: class MAIU_PROTOCOL_SIGNAL_DATA 1"
	assert_line "flex2ev: 12 records, 0 p2p sends, 0 p2p receives, 0 collective spans, 1 rank(s)"
}

@test "unmatched B and E are counted and said" {
	run -0 --separate-stderr flex2ev -v -o "$T/u.ev" "$F/unmatched.json"
	[[ "$stderr" == *"1 B event(s) without their E and 1 E event(s) without their B: left out"* ]]
	[[ "$stderr" == *"1 B/E pairs, 1 unmatched B, 1 unmatched E"* ]]
	run -0 view "$T/u.ev" -H -t kernel -c type,name
	assert_output "kernel	a Cmpt Exec"
	run -0 view "$T/u.ev" -H -t tsx -c type,bytes,step,aux,step_size,id
	assert_output "tsx	1	0	0	1	1"
}

@test "--flex-ts-fix moves a job's device events into its AIU Roundtrip" {
	# Roundtrip [2000, 2100] us; the exec's host range [2150, 2160] lies
	# outside: offset 2000 - 2150 = -150 us; its device slice (5000 cycles,
	# ending at 2160) moves from 2155 to 2005 us.
	run -0 bash -c 'flex2ev -q "$1" | ev-view -M -H -c ts,dur,name -t kernel' _ "$F/job2.json"
	assert_output "2155000	5000	sub Cmpt Exec"
	run -0 --separate-stderr bash -c 'flex2ev --flex-ts-fix "$1" | ev-view -M -H -c ts,dur,name -t kernel' _ "$F/job2.json"
	assert_output "2005000	5000	sub Cmpt Exec"
	[[ "$stderr" == *"1 job(s) had device events outside their AIU Roundtrip: moved"* ]]
}

@test "not Flex: unknown JSON, PyTorch traces, processed output, metadata only" {
	run -1 flex2ev -o "$T/x.ev" "$F/other.json"
	assert_output --regexp '^flex2ev: .*/other.json: not a Flex trace \(no TS1\.\.TS5 device counters, Flex instruction names or CollGroup\): 1 events \(0 metadata\), .*cat "render", first name "frame"'
	[ ! -e "$T/x.ev" ]
	run -1 flex2ev -o "$T/x.ev" "$TESTS_DIR/fixtures/kineto2ev/small.json"
	assert_output --partial 'this is a PyTorch profiler trace (top-level "schemaVersion"): use kineto2ev'
	echo '{"traceEvents":[],"otherData":{"Application":"Acelyzer: Trace Post-Processing Tool"}}' >"$T/done.json"
	run -1 flex2ev "$T/done.json"
	assert_output --partial "already processed output"
	echo '[]' >"$T/empty.json"
	run -1 flex2ev "$T/empty.json"
	assert_output --partial "no events: nothing to convert"
	run -0 flex2ev --sniff "$F/job.json" "$F/other.json" "$TESTS_DIR/fixtures/kineto2ev/small.json"
	assert_line --index 0 --regexp "job.json	flex	"
	assert_line --index 1 --regexp "other.json	unknown	"
	assert_line --index 2 --regexp "small.json	kineto	"
	# rocprofv3 JSON is named and sent to its converter, its one huge
	# value scanned past (not a size error past --max-object).
	python3 -c 'import json, sys; json.dump({"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"x": "y" * 100}] * 20000}}]}, sys.stdout)' >"$T/rp_results.json"
	run -0 flex2ev --sniff "$T/rp_results.json"
	assert_output --partial "rp_results.json	rocprofv3	"
	assert_output --partial "convert it with rocprof2ev"
	run -1 flex2ev --max-object=64K -o "$T/x.ev" "$T/rp_results.json"
	assert_output --partial 'this is rocprofv3 JSON (top-level "rocprofiler-sdk-tool"): use rocprof2ev'
	# flex-stats never writes an empty table silently.
	printf '#ev 1.0 96\n#end 0\n' >"$T/none.ev"
	run -1 flex-stats summary "$T/none.ev"
	assert_output --partial "no records in the input"
}

@test "shared data: meta_events_only.json is refused as metadata only" {
	need_shared_data
	run -1 flex2ev -o "$T/m.ev" "$A/meta_events_only.json"
	assert_output "flex2ev: $A/meta_events_only.json: only metadata events (4 \"M\" events, no trace events): nothing to convert"
	[ ! -e "$T/m.ev" ]
	run -0 flex2ev --sniff "$A/meta_events_only.json"
	assert_output --regexp "	metadata-only	4 events \(4 metadata\), ph M,"
}

@test "shared data: allreduce_tp4.json - four ranks, classes, p2p pairs, spans, alignment" {
	need_shared_data
	run -0 --separate-stderr flex2ev -v -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	# 56 B/E events = 28 slices, all with TS1..TS5.
	[[ "$stderr" == *"flex2ev: 56 objects: 28 B, 28 E, 0 X"* ]]
	[[ "$stderr" == *"28 B/E pairs, 0 unmatched B, 0 unmatched E, 0 reversed; 28 device, 0 CPU"* ]]
	# Prep and Exec: one add_11 per rank + the AllReduce Add on ranks 1-3.
	# Sends: 3 SingleCast + rank 3's data; receives: 1 + 2 + 2 + 1; serial:
	# rank 3's Set BcList and 3 Xseg.
	[[ "$stderr" == *"class COMPUTE_PREP 7"* ]]
	[[ "$stderr" == *"class COMPUTE_EXEC 7"* ]]
	[[ "$stderr" == *"class MAIU_PROTOCOL_SERIAL 4"* ]]
	[[ "$stderr" == *"class MAIU_P2PRDMA_PROTOCOL_SEND_DATA 4"* ]]
	[[ "$stderr" == *"class MAIU_P2PRDMA_PROTOCOL_RECV_DATA 6"* ]]
	# 6 sends (0->1, 1->2, 2->3 SingleCast; 3->0,1,2 Xseg) and the 6 WDone
	# receives; one AllReduce span per rank.
	[[ "$stderr" == *"28 records, 6 p2p sends, 6 p2p receives, 4 collective spans, 4 rank(s)"* ]]
	# Alignment from the host E times: rank 1's receive from 0 ends at
	# 2097962447759.763, rank 0's send at 2097962449127.335 -> -1367.572 us;
	# rank 2: +20.408 us on rank 1; rank 3 from its Xseg to rank 0 (ends
	# 2097962447971.082) and rank 0's receive (ends 2097962449285.464).
	[[ "$stderr" == *"rank 1 clock offset -1367.572 us (to rank 0, 1 pair(s), receive ends with its send)"* ]]
	[[ "$stderr" == *"rank 2 clock offset -1347.164 us (to rank 1, 1 pair(s)"* ]]
	[[ "$stderr" == *"rank 3 clock offset -1314.382 us (to rank 0, 1 pair(s)"* ]]
	run -0 bash -c 'ev-view -M -H -c rank,op,peer,seq -t p2p "$1" | sort' _ "$T/tp4.ev"
	assert_output - <<'EOF'
0	recv	3	0
0	send	1	0
1	recv	0	0
1	recv	3	0
1	send	2	0
2	recv	1	0
2	recv	3	0
2	send	3	0
3	recv	2	0
3	send	0	0
3	send	1	0
3	send	2	0
EOF
	run -0 bash -c 'ev-view -H -c type,rank,bytes,seq,aux -t coll "$1" | grep -v "^#"' _ "$T/tp4.ev"
	assert_line "coll	0	524288	1	4"
	assert_line "coll	3	524288	1	4"
	assert_equal "${#lines[@]}" 4
	# In the timeline: 6 send -> recv flows and the span chained over 4 ranks.
	ev2perfetto -q -o "$T/tp4.json" "$T/tp4.ev"
	run -0 python3 "$V" "$T/tp4.json"
	assert_line "flows collective=3 p2p=6"
	assert_line "process 6 rank 3 GPU (device aiu3)"
	# After alignment no receive ends before its send ends (acelyzer's 3
	# "potential problems" were flows pointing backwards before alignment).
	run -0 bash -c 'ev-view -M -H -c rank,op,peer,ts,dur -t p2p "$1" | awk -F"\t" '"'"'
		{ e = $4 + $5; if ($2 == "send") s[$1 "-" $3] = e; else r[$3 "-" $1] = e }
		END { for (k in s) if (r[k] < s[k] - 1000) print "backwards", k, s[k] - r[k] }'"'"'' _ "$T/tp4.ev"
	assert_output ""
	run -0 flex2ev -q --align=none -o "$T/raw.ev" "$A/allreduce_tp4.json"
	run -0 bash -c 'ev-view -M -H -c rank,op,peer,ts,dur -t p2p "$1" | awk -F"\t" '"'"'
		{ e = $4 + $5; if ($2 == "send") s[$1 "-" $3] = e; else r[$3 "-" $1] = e }
		END { for (k in s) if (r[k] < s[k] - 1000) n++; print n }'"'"'' _ "$T/raw.ev"
	assert_output 3
}

@test "shared data: allreduce_tp4.json tables match acelyzer's per-rank summary" {
	need_shared_data
	flex2ev -q -o "$T/tp4.ev" "$A/allreduce_tp4.json"
	# Exec = TS4 - TS3 of the B event: rank 0 2553427105 - 2553144502.
	run -0 bash -c 'flex-stats summary "$1" | cut -d, -f1-4,10' _ "$T/tp4.ev"
	assert_output - <<'EOF'
rank,name,calls,total_us,percent
0,add_[N] Cmpt Exec,1,282.603,100
1,add_[N] Cmpt Exec,1,276.014,96.75
1,AllReduce_all_reduce_[N]_Add_[N] Cmpt Exec,1,9.264,3.25
2,add_[N] Cmpt Exec,1,275.371,96.72
2,AllReduce_all_reduce_[N]_Add_[N] Cmpt Exec,1,9.331,3.28
3,add_[N] Cmpt Exec,1,275.079,96.78
3,AllReduce_all_reduce_[N]_Add_[N] Cmpt Exec,1,9.159,3.22
EOF
	# One collective, all 4 ranks, 2(N-1) x 524288 bytes.
	run -0 bash -c 'flex-stats colls "$1" | cut -d, -f1-7' _ "$T/tp4.ev"
	assert_output - <<'EOF'
collective,seq,kind,nranks,ranks_seen,bytes,coll_data_bytes
AllReduce_all_reduce_4,1,allreduce,4,4,524288,3145728
EOF
	run -0 bash -c 'flex-stats classes "$1" | grep "^3,"' _ "$T/tp4.ev"
	assert_output - <<'EOF'
3,COMPUTE_PREP,2,393.425
3,COMPUTE_EXEC,2,284.238
3,MAIU_PROTOCOL_SERIAL,4,40.459
3,MAIU_P2PRDMA_PROTOCOL_SEND_DATA,1,41.49
3,MAIU_P2PRDMA_PROTOCOL_RECV_DATA,1,381.881
EOF
	# Rows by each rank's first kernel start (acelyzer's order).
	run -0 col <(flex-stats stats "$T/tp4.ev") comp_active_atime
	assert_output - <<'EOF'
284.238
284.702
285.278
282.603
EOF
}

@test "shared data: sample_flex_3062_job_4.json summary and categories equal acelyzer's" {
	need_shared_data
	flex2ev -q -o "$T/s.ev" "$A/sample_flex_3062_job_4.json"
	# acelyzer 1.x: the same 9 rows (its TSV: 32.92 495.615 7 70.802 61.424
	# 19.867 109.218 31.248 0 convolution_[N] Cmpt Exec, ...); add_1 appears
	# twice in the file and counts twice, as in acelyzer.
	run -0 flex-stats summary "$T/s.ev"
	assert_output - <<'EOF'
rank,name,calls,total_us,mean_us,median_us,min_us,max_us,stdev_us,percent
0,convolution_[N] Cmpt Exec,7,495.615,70.802,61.424,19.867,109.218,31.248,32.92
0,add_[N] Cmpt Exec,2,313.026,156.513,156.513,156.513,156.513,0,20.79
0,relu_[N] Cmpt Exec,2,197.796,98.898,98.898,98.106,99.69,1.12,13.14
0,convolution Cmpt Exec,1,196.942,196.942,196.942,196.942,196.942,0,13.08
0,add Cmpt Exec,1,156.554,156.554,156.554,156.554,156.554,0,10.4
0,max_pool2d_with_indices Cmpt Exec,1,106.759,106.759,106.759,106.759,106.759,0,7.09
0,addmm_MatMul Cmpt Exec,1,37.248,37.248,37.248,37.248,37.248,0,2.47
0,mean Cmpt Exec,1,1.15,1.15,1.15,1.15,1.15,0,0.08
0,view-VirtualReshape-Output-LxRelayout Cmpt Exec,1,0.262,0.262,0.262,0.262,0.262,0,0.02
EOF
	# Conv_fp16 = convolution_1..7: ideal 12544 + 50176 + 112896 + 50176 +
	# 50176 + 112896 + 50176 = 439040 cycles / 1100 MHz = 399.1273 us.
	run -0 flex-stats categories -c "$A/sample_comp_log_ideal.txt" "$T/s.ev"
	assert_output - <<'EOF'
Pid,Phase,Category,Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,PT_Util
0,UNKN,StcdpHbm,0,0,0,0,0,0,0
0,UNKN,other,0,0,0,0,0,0,0
0,UNKN,StcdpLx,0.262,0.0002,1,0,0,0,0
0,UNKN,Bmm_fp16,37.248,0.0247,1,1.8618,2048,0.0037,0.05
0,UNKN,Pooling,107.909,0.0717,2,0,0,0,0
0,UNKN,ConvOs1_fp16,196.942,0.1308,1,104.7709,115248,0.2072,0.532
0,UNKN,Scalar,197.796,0.1314,2,0,0,0,0
0,UNKN,Broadcast,469.58000000000004,0.3119,3,0,0,0,0
0,UNKN,Conv_fp16,495.615,0.3292,7,399.1273,439040,0.7892,0.8053
0,UNKN,Total,1505.352,1,17,505.76,556336,1,0.336
EOF
	# Another core clock changes ideal time and utilisation, not cycles:
	# 439040 / 2200 MHz = 199.5636 us, / 495.615 us = 0.4027.
	run -0 bash -c 'flex-stats categories --freq=1000:2200 -c "$1" "$2" | grep Conv_fp16' _ "$A/sample_comp_log_ideal.txt" "$T/s.ev"
	assert_output "0,UNKN,Conv_fp16,495.615,0.3292,7,199.5636,439040,0.7892,0.4027"
	# A too slow core clock makes ideal times longer than observed ones:
	# not counted, and said (acelyzer drops them too).
	run -0 --separate-stderr bash -c 'flex-stats categories --freq=1000:550 -c "$1" "$2" | grep Conv_fp16' _ "$A/sample_comp_log_ideal.txt" "$T/s.ev"
	assert_output "0,UNKN,Conv_fp16,495.615,0.3292,7,0,0,0,0"
	[ "$stderr" = "flex-stats: warning: 8 kernel(s) ran shorter than their ideal time: ideal not counted (check --freq)" ]
}

@test "dt_cycles_table.log categories on the job fixture (acelyzer gives the same numbers)" {
	need_shared_data
	# addmm_MatMul-BMM_1: 55.296 us, ideal 27648 / 1100 = 25.1345 us;
	# bmm-BMM_1: 20 us, ideal 12288 / 1100 = 11.1709 us; sub: Broadcast, 5 us;
	# relu: not in the table -> other.
	run -0 --separate-stderr bash -c 'flex2ev -q "$1" | flex-stats categories -c "$2"' _ "$F/job.json" "$A/dt_cycles_table.log"
	assert_output - <<'EOF'
Pid,Phase,Category,Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,PT_Util
0,UNKN,StcdpHbm,0,0,0,0,0,0,0
0,UNKN,other,1,0.0123,1,0,0,0,0
0,UNKN,Broadcast,5,0.0615,1,0,0,0,0
0,UNKN,Bmm_fp16,75.29599999999999,0.9262,2,36.3055,39936,1,0.4822
0,UNKN,Total,81.29599999999999,1,4,36.3055,39936,1,0.4466
EOF
	[ "$stderr" = "flex-stats: warning: 1 kernel(s) not in the compiler tables: counted as 'other'" ]
	run -1 bash -c 'flex2ev -q "$1" | flex-stats categories -c "$1"' _ "$F/job.json"
	assert_output --partial 'no compiler "Perf Summary / Ideal/Total Cycles" table found'
}

@test "shared data: basic_event_test_cases.json - overlaps, reversed and zero-duration cases" {
	need_shared_data
	# 45 objects: 3 X, 21 B, 21 E; CaseTSRev1 ends before it begins; 20
	# pairs; CaseZeroDurA (X) and CaseZeroDurB have zero duration;
	# CaseZeroDurC has device counters (TS5 - TS1 = 400 cycles).
	run -0 --separate-stderr flex2ev -v -o "$T/b.ev" "$A/basic_event_test_cases.json"
	[[ "$stderr" == *"1 event(s) ending before they begin: left out"* ]]
	[[ "$stderr" == *"2 slice(s) of zero duration"* ]]
	[[ "$stderr" == *"45 objects: 21 B, 21 E, 3 X"* ]]
	[[ "$stderr" == *"20 B/E pairs, 0 unmatched B, 0 unmatched E, 1 reversed; 1 device, 22 CPU"* ]]
	[[ "$stderr" == *"class OTHER 23"* ]]
	run -0 bash -c 'ev-view -M -H -c ts,dur -n CaseZeroDurC "$1"' _ "$T/b.ev"
	assert_output "190000	400"
	# --overlap=drop leaves out what cannot nest on its thread: Case4 E2,
	# Case5 E2, Case6 E2 and E3 (E3 starts inside E1, ends after), Case7 E2
	# (same start, longer, after E1), Case8 E5 (starts in E4, ends after).
	run -0 --separate-stderr flex2ev --overlap=drop -o "$T/d.ev" "$A/basic_event_test_cases.json"
	[[ "$stderr" == *"--overlap=drop: "*" slice(s) overlapping without nesting left out"* ]]
	run -0 bash -c 'ev-view -M -H -c name "$1" | sort | tr "\n" " "' _ "$T/d.ev"
	refute_output --partial "Case4 E2"
	refute_output --partial "Case5 E2"
	refute_output --partial "Case8 E5"
	assert_output --partial "Case8 E4"
	assert_output --partial "Case3 E2"
}

@test "generated multi-rank trace: counts from the generator's truth" {
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 4 --iters 5 --seed 7 --truth "$T/truth.txt" -o "$T/g.json"
	run -0 --separate-stderr flex2ev -v -o "$T/g.ev" "$T/g.json"
	while read -r k v; do
		case "$k" in
		pairs) [[ "$stderr" == *"$v B/E pairs, 0 unmatched B, 0 unmatched E"* ]] ;;
		p2p) [[ "$stderr" == *"$v p2p sends, $v p2p receives"* ]] ;;
		colls) [[ "$stderr" == *"$v collective spans"* ]] ;;
		exec) [[ "$stderr" == *"class COMPUTE_EXEC $v"* ]] ;;
		esac
	done <"$T/truth.txt"
	# The generator's clock skews are recovered within a microsecond.
	while read -r k r v; do
		[ "$k" = skew ] || continue
		[ "$r" = 0 ] && continue
		got=$(sed -n "s/.*rank $r clock offset \([-+0-9.]*\) us.*/\1/p" <<<"$stderr")
		awk -v a="$got" -v b="$v" 'BEGIN { d = a - b; exit !(d < 1 && d > -1) }'
	done <"$T/truth.txt"
	ev2perfetto -q -o "$T/g.tl.json" "$T/g.ev"
	run -0 python3 "$V" "$T/g.tl.json"
	assert_line --regexp "^flows collective=[0-9]+ p2p=$(awk '$1 == "p2p" { print $2 }' "$T/truth.txt")$"
}

@test "launch flows by correlation: a Launch*ControlBlock call and its kernel" {
	cat >"$T/l.json" <<'EOF'
[
{"name":"LaunchControlBlock","ph":"X","pid":0,"tid":7,"ts":10,"dur":2,"args":{"correlation":42}},
{"name":"k Cmpt Exec","ph":"X","pid":0,"tid":12,"ts":15,"dur":5,"args":{"correlation":42,"TS1":"0","TS2":"0","TS3":"0","TS4":"3000","TS5":"3001"}}
]
EOF
	run -0 bash -c 'flex2ev -q "$1" | ev-view -M -H -t api,kernel -c type,id,ts,dur,name' _ "$T/l.json"
	assert_output - <<'EOF'
api	42	10000	2000	LaunchControlBlock
kernel	42	17000	3000	k Cmpt Exec
EOF
	flex2ev -q "$T/l.json" | ev2perfetto -q -o "$T/l.tl.json"
	run -0 python3 "$V" "$T/l.tl.json"
	assert_line "flows launch=1"
}

@test "our own timeline (ev2perfetto output) is refused as processed, not as PyTorch" {
	flex2ev -q "$F/job.json" | ev2perfetto -q -o "$T/tl.json"
	run -1 flex2ev -o "$T/x.ev" "$T/tl.json"
	assert_output --partial "already processed output"
	run -0 flex2ev --sniff "$T/tl.json"
	assert_output --regexp "	processed	"
}

@test "--strip-ids: request ids out of communication names, into id; kernels keep their names" {
	need_shared_data
	run -0 --separate-stderr flex2ev -v --strip-ids -o "$T/s.ev" "$SHARED_DATA/acelyzer/allreduce_tp4.json"
	# 6 sends, 6 receives, Set BcList and the MultiCast data: 14 names.
	[[ "$stderr" == *"--strip-ids: 14 request id(s) taken out of names"* ]]
	run -0 bash -c 'ev-view -M -H -c rank,id,name -t p2p,memcpy "$1" | sort -u | head -3' _ "$T/s.ev"
	assert_output - <<'EOF'
0	82227	SenRdmaSend [sync=AllReduce_all_reduce_4_s0_r1_0] DmaO
0	82229	SenRdmaReceive [524288B] [sync=AllReduce_all_reduce_4_s3_r0x7_6] DmaI
1	82236	SenRdmaReceive [524288B] [sync=AllReduce_all_reduce_4_s0_r1_0] DmaI
EOF
	run -0 bash -c 'ev-view -M -H -c name -t kernel "$1" | sort -u' _ "$T/s.ev"
	assert_output - <<'EOF'
AllReduce_all_reduce_4_Add_1 Cmpt Exec
AllReduce_all_reduce_4_Add_3 Cmpt Exec
AllReduce_all_reduce_4_Add_5 Cmpt Exec
add_11 Cmpt Exec
EOF
	# Same flows: the pairs do not depend on names.
	ev2perfetto -q -o "$T/s.json" "$T/s.ev"
	run -0 python3 "$V" "$T/s.json"
	assert_line "flows collective=3 p2p=6"
}

@test "a Flex file whose events are all left out is an error, not an empty stream" {
	printf '[{"name":"x Cmpt Exec","ph":"B","pid":0,"tid":1,"ts":1}]' >"$T/b.json"
	run -1 flex2ev -o "$T/b.ev" "$T/b.json"
	assert_line "flex2ev: warning: 1 B event(s) without their E and 0 E event(s) without their B: left out"
	assert_line "flex2ev: no slices or marks in the input: nothing converted (see the counts above)"
	[ ! -e "$T/b.ev" ]
}

@test "shared data: ev-merge's anchor alignment agrees with flex2ev's send/recv alignment" {
	need_shared_data
	run -0 --separate-stderr flex2ev -o "$T/a.ev" "$A/allreduce_tp4.json"
	mine="$stderr"
	flex2ev -q --align=none -o "$T/raw.ev" "$A/allreduce_tp4.json"
	run -0 --separate-stderr ev-merge --align=coll -o "$T/m.ev" "$T/raw.ev"
	# Within a microsecond per rank (ev-merge also uses the span ends).
	for r in 1 2 3; do
		a=$(sed -n "s/.*rank $r clock offset \([-+0-9.]*\) us.*/\1/p" <<<"$mine")
		b=$(sed -n "s/.*rank $r: offset \([-+0-9.]*\) ms.*/\1/p" <<<"$stderr")
		awk -v a="$a" -v b="$b" 'BEGIN { d = a - b * 1000; exit !(d < 1 && d > -1) }'
	done
}

@test "default settings: memory does not follow the trace's size (sorted runs spill)" {
	[[ "$EV_BIN" != *asan* ]] || skip "ASan's shadow memory is not the tool's"
	python3 "$TESTS_DIR/gen/gen-flex.py" --ranks 8 --seed 21 --size 41943040 -o "$T/big.json"
	/usr/bin/time -f '%M' -o "$T/rss" flex2ev -q -o "$T/big.ev" "$T/big.json"
	# three passes of 16 MiB and what is per rank: well under the 40 MiB input
	run -0 awk '{ print ($1 < 40960) ? "bounded" : $1 " KiB" }' "$T/rss"
	assert_output bounded
}
