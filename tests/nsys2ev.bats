#!/usr/bin/env bats
# nsys2ev: Nsight Systems SQLite exports to ev.  Synthetic exports come from
# tests/gen/gen-nsys.py (seeded); real ones from ../shared/data/nsys.
bats_require_minimum_version 1.5.0
load test_helper

GEN="$TESTS_DIR/gen/gen-nsys.py"
NSYS="$SHARED_DATA/nsys"

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
}

# golden NAME FILE.ev: compare the full ev-view TSV with tests/expected.
golden() {
	local want="$TESTS_DIR/expected/nsys2ev/$1.tsv"
	ev-view "$2" >"$1.tsv"
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		cp "$1.tsv" "$want"
	fi
	diff -u "$want" "$1.tsv"
}

@test "annotated NCCL: golden output (2 nodes x 2 GPUs)" {
	python3 "$GEN" --iters 1 ann
	run -0 --separate-stderr nsys2ev -o ann.ev ann
	[ -z "$stderr" ]
	golden annotated ann.ev
}

@test "annotated generator: coll_kernel markers as ATLAHS' NCCL prints them, read by key" {
	# ATLAHS' enqueue.cc prints sendbuff and recvbuff before pid, and its V2
	# generator's pattern requires them (without them it drops every
	# collective, silently: docs/nsys2goal.md).  nsys2ev reads markers by
	# key: the same stream with the two fields taken out.
	python3 "$GEN" --iters 1 ann
	f=$(ls ann/*.sqlite | head -n 1)
	n=$(sqlite3 "$f" "SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'nWarps %'")
	[ "$n" -gt 0 ]
	run -0 sqlite3 "$f" "SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'nWarps %'
	  AND text GLOB 'nWarps [0-9]* count [0-9]* chunkCount [0-9]* workCount [0-9]* lastChunkCount [0-9]* workOffset [0-9]* sendbuff [0-9]* recvbuff [0-9]* pid [0-9]*'"
	[ "$output" = "$n" ]
	run -0 nsys2ev -o with.ev ann
	mkdir bare
	for s in ann/*.sqlite; do
		cp "$s" bare/
		sqlite3 "bare/${s##*/}" "UPDATE NVTX_EVENTS SET text = substr(text, 1, instr(text, ' sendbuff ') - 1) || substr(text, instr(text, ' pid '))
		  WHERE text LIKE 'nWarps % sendbuff % pid %'"
	done
	[ "$(sqlite3 "bare/${f##*/}" "SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE '% sendbuff %'")" = 0 ]
	run -0 nsys2ev -o without.ev bare
	# Only the #src lines, which name the files, may differ.
	diff <(grep -av '^#src ' with.ev) <(grep -av '^#src ' without.ev)
	[ "$(ev-view -M -H with.ev | wc -l)" -gt 0 ]
}

@test "stock NCCL with payload blobs: golden output" {
	python3 "$GEN" --flavour stock --iters 1 stock
	run -0 --separate-stderr nsys2ev -o stock.ev stock
	# Ring protocols come from the threads per block (544 SIMPLE, 512 LL),
	# as in every converter; what is inferred is said once per file.
	assert_equal "$stderr" "nsys2ev: warning: stock/nsys_nid000000.sqlite: NCCL operations without annotated info: 10 take the algorithm from the kernel name (NCCL >= 2.19 names tell only TREE or RING; NVLS, CollNet and PAT kernels are named RING), 10 the protocol from the threads per block
nsys2ev: warning: stock/nsys_nid000001.sqlite: NCCL operations without annotated info: 10 take the algorithm from the kernel name (NCCL >= 2.19 names tell only TREE or RING; NVLS, CollNet and PAT kernels are named RING), 10 the protocol from the threads per block"
	golden stock stock.ev
	run -0 bash -c "ev-view -M -H -t coll -r 0 -c op,algo,proto,nthreads stock.ev"
	assert_output - <<'OUT'
allreduce	ring	simple	544
allreduce	tree	-	640
allgather	ring	simple	544
reducescatter	ring	simple	544
broadcast	ring	ll	512
reduce	ring	simple	544
OUT
}

@test "annotated: every collective kind with chunking and channel work" {
	python3 "$GEN" --iters 1 ann
	nsys2ev -o ann.ev ann
	run -0 ev-view -M -H -t coll -r 0 -c op,bytes,algo,proto,dtype,redop,peer,channel,chunk_steps,slice_steps,step_size,aux ann.ev
	assert_output - <<'OUT'
allreduce	4194304	ring	simple	float32	sum	-1	2	4	2	131072	4
allreduce	65536	tree	ll	bfloat16	sum	-1	2	1	1	16384	4
allgather	1048576	ring	simple	int8	-	-1	2	4	2	131072	4
reducescatter	262144	ring	simple	float32	sum	-1	2	4	2	131072	4
broadcast	524288	ring	ll	int8	-	0	2	1	1	16384	4
reduce	131072	ring	simple	float32	max	1	2	4	2	131072	4
OUT
	# Two chan records follow each coll; their work covers the count.
	run -0 bash -c "ev-view -M -H -t chan -r 0 -c op,channel,bytes,dur ann.ev | head -2"
	assert_output - <<'OUT'
allreduce	0	524288	0
allreduce	1	524288	524288
OUT
}

@test "grouped send/recv: both ops of a group get the group's kernel" {
	python3 "$GEN" --iters 1 ann
	nsys2ev -o ann.ev ann
	run -0 bash -c "ev-view -M -H -t p2p -c rank,op,peer,bytes,flags,step_size,channel ann.ev | sort"
	assert_output - <<'OUT'
0	recv	3	262144	group	131072	2
0	send	1	262144	group	131072	2
1	recv	0	262144	group	131072	2
1	send	2	262144	group	131072	2
2	recv	1	262144	group	131072	2
2	send	3	262144	group	131072	2
3	recv	2	262144	group	131072	2
3	send	0	262144	group	131072	2
OUT
	# A group's ops share the kernel's start and duration.
	run -0 bash -c "ev-view -M -H -t p2p -r 0 -c ts,dur,id ann.ev | sort -u | wc -l"
	assert_output 1
}

@test "UTC alignment: a collective ends together on nodes with different clocks" {
	python3 "$GEN" --iters 1 ann
	nsys2ev -o ann.ev ann
	grep -aq '^#ev 1.1 96 .*origin=unix' ann.ev
	# Ends of the first AllReduce (seq 0) on all four ranks, within 1 us.
	run -0 bash -c "ev-view -M -H -t coll -c seq,ts,dur ann.ev | awk '\$1 == 0 { e = \$2 + \$3; if (!n++ || e < lo) lo = e; if (e > hi) hi = e } END { print n, (hi - lo < 1000) }'"
	assert_output '4 1'
}

@test "seq matches one collective across ranks" {
	python3 "$GEN" --iters 2 ann
	nsys2ev -o ann.ev ann
	# For every seq, one op kind and one size on every rank.
	run -0 bash -c "ev-view -M -H -t coll -c seq,op,bytes ann.ev | sort -u | awk '{ print \$1 }' | uniq -d"
	assert_output ''
	run -0 bash -c "ev-view -M -H -t coll -c seq ann.ev | sort -n | uniq -c | awk '{ print \$1 }' | sort -u"
	assert_output 4
}

@test "without a runtime table the time fallback matches every op" {
	python3 "$GEN" --iters 1 --no-runtime nort
	run -0 --separate-stderr nsys2ev -v -o nort.ev nort
	[[ "$stderr" == *"rank 0 (pid 100, device 0): NCCL operations: 0 matched by correlation id, 8 by time fallback, 0 unmatched"* ]]
	run -0 bash -c "ev-view -M -H -t coll,p2p -c flags nort.ev | sort | uniq -c"
	assert_output - <<'OUT'
     24 fallback
      8 group|fallback
OUT
	# The same collectives as with correlation ids.
	python3 "$GEN" --iters 1 ann
	nsys2ev -o ann.ev ann
	cmp <(ev-view -M -t coll,p2p,chan -c type,op,rank,ts,dur,bytes,seq,peer ann.ev) \
	    <(ev-view -M -t coll,p2p,chan -c type,op,rank,ts,dur,bytes,seq,peer nort.ev)
}

@test "missing init markers: membership, rings and trees synthesized with a warning" {
	python3 "$GEN" --iters 1 --no-init noinit
	run -0 --separate-stderr nsys2ev -o noinit.ev noinit
	[[ "$stderr" == *"no init markers; 4 members, rings and trees synthesized"* ]]
	[[ "$stderr" == *"1 communicator synthesized: no init markers (commHash ... commId ...) in the exports; members are the GPUs that called them, in (node, pid) order"* ]]
	run -0 grep -a '^#\(comm\|ring\)' noinit.ev
	assert_output - <<'OUT'
#comm 405852560972185601 nranks=4 ranks=0,1,2,3 synthesized=1
#ring 405852560972185601 0 0 1 2 3
#ring 405852560972185601 1 0 1 2 3
OUT
}

@test "ranks do not depend on the order of the inputs" {
	python3 "$GEN" --iters 1 ann
	nsys2ev -o ab.ev ann/nsys_nid000000.sqlite ann/nsys_nid000001.sqlite
	nsys2ev -o ba.ev ann/nsys_nid000001.sqlite ann/nsys_nid000000.sqlite
	cmp <(grep -a '^#rank' ab.ev | sed 's/ src=.*//') <(grep -a '^#rank' ba.ev | sed 's/ src=.*//')
	cmp <(ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,seq,peer ab.ev | sort) \
	    <(ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,seq,peer ba.ev | sort)
}

@test "--rank-map overrides ranks; --node-regex names nodes" {
	python3 "$GEN" --iters 1 ann
	printf '# node pid rank\n0 100 3\n0 101 2\n1 110 1\n1 111 0\n' >map.txt
	nsys2ev --rank-map map.txt -o m.ev ann
	run -0 grep -a '^#rank' m.ev
	assert_output - <<'OUT'
#rank 0 host=host1 node=1 pid=111 device=1 src=1
#rank 1 host=host1 node=1 pid=110 device=0 src=1
#rank 2 host=host0 node=0 pid=101 device=1 src=0
#rank 3 host=host0 node=0 pid=100 device=0 src=0
OUT
	nsys2ev --node-regex='(nid[0-9]+)' -o n.ev ann
	run -0 bash -c "grep -a '^#rank 0' n.ev"
	assert_output '#rank 0 host=host0 node=nid000000 pid=100 device=0 src=0'
	printf '0 100\n' >bad.txt
	run -1 nsys2ev --rank-map bad.txt -o m2.ev ann
	assert_output --partial "bad.txt: line 1: expected 'NODE PID RANK'"
}

@test "--api adds runtime and driver calls" {
	python3 "$GEN" --iters 1 --nodes 1 --gpus 1 one
	nsys2ev -o plain.ev one
	nsys2ev --api -o api.ev one
	run -0 bash -c "ev-view -M -H -t api -c op,name api.ev | sort | uniq -c"
	assert_output - <<'OUT'
      7 driver	cuLaunchKernelEx
     14 runtime	cudaLaunchKernel_v7000
      1 runtime	cudaMemcpyAsync_v3020
      1 runtime	cudaMemsetAsync_v3020
OUT
	run -0 bash -c "ev-view -M -H -t api plain.ev | wc -l"
	assert_output 0
}

@test "real export: kernel counts, SendRecv calls, two processes, time order, names" {
	need_shared_data
	f="$NSYS/nsysai_mfu_2gpu_before.sqlite"
	run -0 --separate-stderr nsys2ev -o mfu.ev "$f"
	[[ "$stderr" == *"8 NCCL operations had no kernel"* ]] # calls after the cut window
	n=$(sqlite3 "$f" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
	run -0 bash -c "ev-view -M -H -t kernel mfu.ev | wc -l"
	assert_output "$n"
	run -0 bash -c "ev-view -M -H -t kernel -c rank mfu.ev | sort | uniq -c"
	assert_output - <<'OUT'
   1993 0
   2017 1
OUT
	run -0 grep -a '^#rank' mfu.ev
	assert_output - <<'OUT'
#rank 0 host=modal node=modal pid=144 device=0 src=0
#rank 1 host=modal node=modal pid=145 device=1 src=0
OUT
	# 32 groups of 2 sends + 2 receives per rank on the SendRecv kernels.
	run -0 bash -c "ev-view -M -H -t p2p -c rank,op,sig,flags mfu.ev | sort | uniq -c"
	assert_output - <<'OUT'
     64 0	recv	ncclRecv	group
     64 0	send	ncclSend	group
     64 1	recv	ncclRecv	group
     64 1	send	ncclSend	group
OUT
	run -0 bash -c "ev-view -M -H -t kernel -n '^ncclDevKernel_SendRecv' -c rank mfu.ev | wc -l"
	assert_output 66
	ev-view -M -H -c ts mfu.ev | sort -c -n
	run -0 bash -c "ev-view -M -H -t kernel -c name mfu.ev | grep -c '^\$' || true"
	assert_output 0
	n=$(sqlite3 "$f" 'SELECT count(*) FROM NVTX_EVENTS')
	run -0 bash -c "ev-view -M -H -t range,mark mfu.ev | wc -l"
	assert_output "$n"
}

@test "real export without NCCL: kernels only, two ranks" {
	need_shared_data
	f="$NSYS/nsysai_h100_2gpu_1s.sqlite"
	run -0 --separate-stderr nsys2ev -o h.ev "$f"
	[ -z "$stderr" ]
	n=$(sqlite3 "$f" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
	run -0 bash -c "ev-view -M -H -t kernel h.ev | wc -l"
	assert_output "$n"
	run -0 bash -c "ev-view -M -H -t coll,p2p h.ev | wc -l"
	assert_output 0
	run -0 bash -c "grep -ac '^#rank' h.ev"
	assert_output 2
}

@test "bad input: not SQLite, not an nsys export, a view posing as a table, empty trace" {
	echo 'hello' >text.sqlite
	run -1 nsys2ev -o x.ev text.sqlite
	assert_output 'nsys2ev: text.sqlite: not an SQLite database (nsys export --type sqlite)'
	sqlite3 other.sqlite 'CREATE TABLE foo (a INTEGER); INSERT INTO foo VALUES (1);'
	run -1 nsys2ev -o x.ev other.sqlite
	assert_output 'nsys2ev: other.sqlite: not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)'
	# A view is not a table: nothing is read through it.
	sqlite3 view.sqlite 'CREATE TABLE t (start, end); CREATE VIEW NVTX_EVENTS AS SELECT * FROM t;'
	run -1 nsys2ev -o x.ev view.sqlite
	assert_output --partial 'not an Nsight Systems export'
	sqlite3 empty.sqlite 'CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
		CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName);'
	run -1 nsys2ev -o x.ev empty.sqlite
	assert_output 'nsys2ev: empty.sqlite: empty trace: no kernels, memory operations or NCCL markers'
	sqlite3 nocol.sqlite 'CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, deviceId);'
	run -1 nsys2ev -o x.ev nocol.sqlite
	assert_output --partial 'lacks start, end or demangledName'
	[ ! -e x.ev ]
}

@test "minimal ATLAHS schema: markers carry the pid, no globalTid or runtime" {
	sqlite3 min.sqlite <<'SQL'
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)');
CREATE TABLE NVTX_EVENTS (start INT, end INT NULL, text TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName);
INSERT INTO NVTX_EVENTS VALUES (100, NULL, 'commHash 0xab commId 0xcd rank 0 nranks 1 pid 7');
INSERT INTO NVTX_EVENTS VALUES (200, 300, 'ncclAllReduce(): commHash 0xab, stream 0x10, data_size 64, type_size 4, red_op 0, pid 7');
INSERT INTO NVTX_EVENTS VALUES (210, NULL, 'collType 4 root 0 redOp 0 algo 1 proto 2 commHash 0xab stream 0x10 data_size 64 type_size 4 chunkSize 1 chunkCount 16 chunkSteps 4 sliceSteps 2 stepSize 4096 pid 7');
INSERT INTO NVTX_EVENTS VALUES (220, NULL, 'collType oops pid 7');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (400, 900, 0, 3, 7 << 24, 1);
SQL
	run -0 --separate-stderr nsys2ev -o min.ev min.sqlite
	[ "$stderr" = 'nsys2ev: warning: 1 NCCL markers could not be parsed or placed and were skipped (-v for details)' ]
	run -0 ev-view -M -H -t coll -c rank,op,ts,dur,bytes,comm,algo,proto,step_size,flags min.ev
	assert_output $'0\tallreduce\t400\t500\t64\t205\tring\tsimple\t4096\tfallback'
	grep -aq '^#ev 1.1 96 .*origin=trace' min.ev
}

@test "a database cut short is refused before any output" {
	python3 "$GEN" --iters 1 --nodes 1 --gpus 1 one
	head -c 30000 one/nsys_nid000000.sqlite >cut.sqlite
	run -1 nsys2ev -o cut.ev cut.sqlite
	assert_output --regexp '^nsys2ev: cut.sqlite: truncated SQLite database \(30000 of [0-9]+ bytes\)$'
	[ ! -e cut.ev ]
}

@test "directories are searched for exports, gzip exports are read" {
	python3 "$GEN" --iters 1 ann
	gzip -k ann/nsys_nid000001.sqlite
	mkdir -p tree/sub
	cp ann/nsys_nid000000.sqlite tree/
	cp ann/nsys_nid000001.sqlite.gz tree/sub/
	nsys2ev -o a.ev ann/nsys_nid000000.sqlite ann/nsys_nid000001.sqlite
	nsys2ev -o t.ev tree
	cmp <(grep -av '^#src' a.ev) <(grep -av '^#src' t.ev)
	mkdir none
	run -1 nsys2ev -o n.ev none
	assert_output 'nsys2ev: none: directory holds no .sqlite or .sqlite.gz files'
}

@test "profiled window: 'nsys profiling start/stopped' marks keep the iterations between them, cuts counted" {
	python3 "$GEN" --iters 4 --marks ann
	run -0 --separate-stderr nsys2ev -o w.ev ann
	[[ "$stderr" == *"nsys_nid000000.sqlite: 92 records before and 92 after the profiled window (nsys profiling start/stopped marks) left out"* ]]
	# Iterations 1 and 2 of 4: 6 collectives and 2 p2p per rank each.
	run -0 bash -c "ev-view -M -H -t coll,p2p -c type w.ev | sort | uniq -c"
	assert_output - <<'OUT'
     48 coll
     16 p2p
OUT
	# The same collectives keep their sequence numbers on every rank.
	run -0 bash -c "ev-view -M -H -t coll -c seq w.ev | sort -n | uniq -c | awk '{ print \$1 }' | sort -u"
	assert_output 4
	run -0 bash -c "ev-view -M -H -t coll -c seq w.ev | sort -n | sed -n '1p;\$p'"
	assert_output $'6\n17'
	run -0 --separate-stderr nsys2ev --window=all -o a.ev ann
	[ -z "$stderr" ]
	run -0 bash -c "ev-view -M -H -t coll -c type a.ev | wc -l"
	assert_output 96
}

@test "--window T0:T1 and --steps NAME:FROM-TO choose the time or the iterations" {
	python3 "$GEN" --iters 4 --iter-ranges ann
	nsys2ev -o all.ev ann
	# Steps 2-3 by their NVTX ranges (numbered from 0 on each process).
	run -0 --separate-stderr nsys2ev --steps 'ProfilerStep#:2-3' -o s.ev ann
	[[ "$stderr" == *"records before and 0 after the profiled window (--steps) left out"* ]]
	run -0 bash -c "ev-view -M -H -t coll -c seq s.ev | sort -n | uniq | sed -n '1p;\$p'"
	assert_output $'12\n23'
	# --window: from the first record of step 2 on.
	t0=$(ev-view -M -H -t range -n '^ProfilerStep#2$' -c ts all.ev | sort -n | head -1)
	run -0 --separate-stderr nsys2ev --window "$t0:" -o t.ev ann
	[[ "$stderr" == *"after the profiled window (--window) left out"* ]]
	run -0 bash -c "ev-view -M -H -t coll -r 0 -c seq t.ev | sort -n | head -1"
	assert_output 12
	run -2 nsys2ev --window 5:1 -o x.ev ann
	assert_output --partial "--window: expected T0:T1"
	run -2 nsys2ev --steps 'a:3-1' -o x.ev ann
	assert_output --partial "--steps: expected NAME or NAME:FROM-TO"
	run -1 nsys2ev --steps 'NoSuchStep' -o x.ev ann
	assert_output --partial "no NVTX range named 'NoSuchStep*'"
	[ ! -e x.ev ]
}

@test "--nccl-log: a stock export without payloads gets sizes, communicators and rings from NCCL_DEBUG=INFO" {
	python3 "$GEN" --flavour stock --iters 1 blobs
	python3 "$GEN" --flavour stock --iters 1 --no-blobs --nccl-log run.log noblobs
	nsys2ev -o blobs.ev blobs
	run -0 --separate-stderr nsys2ev --nccl-log run.log -o log.ev noblobs
	[[ "$stderr" != *"no size"* ]] || false
	cmp <(ev-view -M -t coll,p2p log.ev) <(ev-view -M -t coll,p2p blobs.ev)
	run -0 grep -a '^#\(comm\|ring\|tree\)' log.ev
	assert_output - <<'OUT'
#comm 405852560972185601 nranks=4 ranks=0,1,2,3
#ring 405852560972185601 0 0 1 2 3
#ring 405852560972185601 1 0 3 2 1
#tree 405852560972185601 0 0:-1:1,2,-1 1:0:3,-1,-1 2:0:-1,-1,-1 3:1:-1,-1,-1
#tree 405852560972185601 1 0:-1:1,2,-1 1:0:3,-1,-1 2:0:-1,-1,-1 3:1:-1,-1,-1
OUT
}

@test "no payloads and no log: the warning names what to re-export or log" {
	python3 "$GEN" --flavour stock --iters 1 --no-blobs noblobs
	run -0 --separate-stderr nsys2ev -o n.ev noblobs
	[[ "$stderr" == *"nsys_nid000000.sqlite: 16 of 16 NCCL calls have no size, peer or communicator: the export has NCCL's payload schemas but no values; re-export it with 'nsys export --type sqlite --include-blobs=true REPORT.nsys-rep', or give --nccl-log with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output"* ]]
	echo 'nothing useful' >empty.log
	run -0 --separate-stderr nsys2ev --nccl-log empty.log -o n.ev noblobs
	[[ "$stderr" == *"empty.log: no NCCL call lines"*"NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL"* ]]
	run -1 nsys2ev --nccl-log nosuch.log -o n.ev noblobs
	assert_output 'nsys2ev: nosuch.log: No such file or directory'
}

@test "real stock export without payloads: the warning says to re-export with --include-blobs" {
	need_shared_data
	run -0 --separate-stderr nsys2ev -o mfu.ev "$NSYS/nsysai_mfu_2gpu_before.sqlite"
	[[ "$stderr" == *"nsysai_mfu_2gpu_before.sqlite: 264 of 264 NCCL calls have no size, peer or communicator: the export has NCCL's payload schemas but no values; re-export it with 'nsys export --type sqlite --include-blobs=true"* ]]
}

@test "a missing export is named: which communicator, which ranks, which files were read" {
	python3 "$GEN" --flavour stock --iters 1 st
	run -0 --separate-stderr nsys2ev -o one.ev st/nsys_nid000000.sqlite
	[[ "$stderr" == *"communicator 05a1e0c0ffee0001 (4 ranks): ranks 2,3 have no export among the files read (st/nsys_nid000000.sqlite)"* ]]
	python3 "$GEN" --flavour stock --iters 1 --seed 2 --nodes 1 other
	run -0 --separate-stderr nsys2ev -o two.ev st other/nsys_nid000000.sqlite
	[[ "$stderr" != *"have no export"* ]] || false
}

@test "-o onto an input is refused and the input stays intact" {
	python3 "$GEN" --iters 1 --nodes 1 --gpus 1 one
	cp one/nsys_nid000000.sqlite keep.sqlite
	run -1 nsys2ev -o one/nsys_nid000000.sqlite one
	assert_output "nsys2ev: one/nsys_nid000000.sqlite: is also an input: refusing to overwrite an input"
	cmp keep.sqlite one/nsys_nid000000.sqlite
	ln -s one/nsys_nid000000.sqlite link.sqlite
	run -1 nsys2ev -o link.sqlite one/nsys_nid000000.sqlite
	assert_output "nsys2ev: link.sqlite: is also an input: refusing to overwrite an input"
	cmp keep.sqlite one/nsys_nid000000.sqlite
}

@test "a write error in the main pass is an error naming the output, not a silent exit 1" {
	[ -w /dev/full ] || skip "no /dev/full"
	# 1.4 MB of output: the writer's buffer fills and fails mid-pass.
	python3 "$GEN" --iters 60 big
	run -1 --separate-stderr bash -c 'nsys2ev big >/dev/full'
	assert_equal "$stderr" "nsys2ev: standard output: No space left on device"
}

@test "bad values are counted warnings naming the file, table and row" {
	python3 "$GEN" --iters 1 --nodes 1 one
	f=one/nsys_nid000000.sqlite
	sqlite3 "$f" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'abc' WHERE rowid IN (3, 5);
		UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 999999 WHERE rowid = 7;
		UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 'soon'"
	run -0 --separate-stderr nsys2ev -o b.ev "$f"
	[[ "$stderr" == *"$f: CUPTI_ACTIVITY_KIND_KERNEL: 2 rows: start is not an integer; row left out"* ]]
	[[ "$stderr" == *"$f: CUPTI_ACTIVITY_KIND_KERNEL: 1 row: string id not in StringIds; empty name (first: row "* ]]
	[[ "$stderr" == *"$f: TARGET_INFO_SESSION_START_TIME: utcEpochNs or systemClockNs is not an integer"* ]]
	grep -aq '^#ev 1.1 96 .*origin=trace' b.ev
	n=$(sqlite3 "$f" 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
	run -0 bash -c "ev-view -M -H -t kernel b.ev | wc -l"
	assert_output "$((n - 2))"
}

@test "PyTorch shapes (--pytorch=autograd-shapes-nvtx) size the calls whose kernel names a type; the rest is said" {
	python3 "$GEN" --flavour stock --iters 1 --no-blobs --torch-shapes ts
	run -0 --separate-stderr nsys2ev -o ts.ev ts
	[[ "$stderr" == *"nsys_nid000000.sqlite: 12 NCCL calls sized from PyTorch's NVTX shapes (elements x the kernel's type)"* ]]
	[[ "$stderr" == *"nsys_nid000000.sqlite: 4 NCCL operations have element counts but no element type: bytes 0"* ]]
	# left: the grouped send/recv (no PyTorch range, SendRecv kernels name no type)
	[[ "$stderr" == *"nsys_nid000000.sqlite: 4 of 16 NCCL calls have no size"* ]]
	run -0 ev-view -M -H -t coll -r 0 -c op,bytes,dtype ts.ev
	assert_output - <<'OUT'
allreduce	4194304	float32
allreduce	65536	bfloat16
allgather	0	int8
reducescatter	262144	float32
broadcast	0	int8
reduce	131072	float32
OUT
	# ReduceScatter's shape is its whole input: the same bytes as the
	# payload export of the same run
	python3 "$GEN" --flavour stock --iters 1 bl
	nsys2ev -q -o bl.ev bl
	for f in ts bl; do
		ev-view -M -H -t coll -c op,rank,bytes $f.ev | awk -F'\t' '$1 == "reducescatter"' >$f.rs
	done
	[ -s bl.rs ]
	cmp ts.rs bl.rs
}
