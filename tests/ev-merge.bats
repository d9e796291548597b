#!/usr/bin/env bats
# ev-merge: order, ties, sources, ranks, external sort, clock alignment.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-ev-ranks.sh"
}

tsv2ev() { ev-view --pack -o "$2" "$1"; }

# ends_within_seq FILE: the collectives of each (source keys, seq) end within
# 10 us of each other.
ends_within_seq() {
	ev-view -M -H --type=coll -c src,seq,ts,dur "$1" >"$T/coll.tsv"
	grep -a '^#src' "$1" | awk '{ c = ""; for (i = 3; i <= NF; i++) if ($i ~ /^(threads|channels)=/) c = c $i; print $2 "\t" c }' >"$T/srccfg.tsv"
	awk -F'\t' 'NR == FNR { cfg[$1] = $2; next } { k = cfg[$1] "/" $2; e = $3 + $4; if (!(k in lo) || e < lo[k]) lo[k] = e; if (e > hi[k]) hi[k] = e }
		END { m = 0; for (k in lo) if (hi[k] - lo[k] > m) m = hi[k] - lo[k]; if (m > 10000) { print "spread " m; exit 1 } }' "$T/srccfg.tsv" "$T/coll.tsv"
}

@test "merge order is (ts, rank, stream, seq), ties by input order" {
	printf 'type\trank\tstream\tts\tseq\tname\nkernel\t1\t0\t10\t0\ta\nkernel\t0\t5\t20\t0\tb\nkernel\t0\t5\t20\t1\tc\n' >"$T/a.tsv"
	printf 'type\trank\tstream\tts\tseq\tname\nkernel\t0\t0\t10\t0\td\nkernel\t0\t5\t20\t0\te\nkernel\t1\t0\t30\t0\tf\n' >"$T/b.tsv"
	tsv2ev "$T/a.tsv" "$T/a.ev"
	tsv2ev "$T/b.tsv" "$T/b.ev"
	run -0 bash -c 'ev-merge "$1" "$2" | ev-view -M -H -c name,src' _ "$T/a.ev" "$T/b.ev"
	assert_output "$(printf 'd\t1\na\t0\nb\t0\ne\t1\nc\t0\nf\t1')"
	# Merging is associative and deterministic.
	ev-merge -o "$T/ab.ev" "$T/a.ev" "$T/b.ev"
	ev-merge -o "$T/ab2.ev" "$T/a.ev" "$T/b.ev"
	cmp "$T/ab.ev" "$T/ab2.ev"
}

@test "detail records stay right after their op" {
	printf 'type\trank\tstream\tts\tseq\tid\taux\ncoll\t0\t4\t100\t3\t9\t0\ndep\t0\t4\t100\t3\t9\t8\nchan\t0\t4\t100\t3\t9\t0\n' >"$T/a.tsv"
	printf 'type\trank\tstream\tts\tseq\nkernel\t0\t4\t100\t3\nkernel\t0\t4\t100\t3\n' >"$T/b.tsv"
	tsv2ev "$T/a.tsv" "$T/a.ev"
	tsv2ev "$T/b.tsv" "$T/b.ev"
	run -0 bash -c 'ev-merge "$2" "$1" | ev-view -M -H -c type' _ "$T/a.ev" "$T/b.ev"
	assert_output "$(printf 'kernel\nkernel\ncoll\ndep\nchan')"
	run -0 bash -c 'ev-merge "$1" "$2" | ev-view -M -H -c type' _ "$T/a.ev" "$T/b.ev"
	assert_output "$(printf 'coll\ndep\nchan\nkernel\nkernel')"
}

@test "sources carry labels, files and keys from the path" {
	mkdir -p "$T/s/256thread/nccl_28channels" "$T/s/512thread/nccl_56channels"
	printf 'type\tts\tname\nkernel\t1\tk\n' >"$T/k.tsv"
	tsv2ev "$T/k.tsv" "$T/s/256thread/nccl_28channels/r0.ev"
	tsv2ev "$T/k.tsv" "$T/s/512thread/nccl_56channels/r0.ev"
	cd "$T"
	ev-merge -o m.ev -k threads,channels -x '([0-9]+)thread/nccl_([0-9]+)channels' \
		base=s/256thread/nccl_28channels/r0.ev s/512thread/nccl_56channels/r0.ev
	run -0 grep -a '^#src' m.ev
	assert_line --index 0 '#src 0 label=base file=s/256thread/nccl_28channels/r0.ev threads=256 channels=28'
	assert_line --index 1 '#src 1 file=s/512thread/nccl_56channels/r0.ev threads=512 channels=56'
	run -0 ev-view -M -H -c src m.ev
	assert_output "$(printf '0\n1')"
	run -0 grep -ac '^#str' m.ev
	assert_output 1
}

@test "strings and metadata of all inputs appear once" {
	printf '#rank 0 host=a\n#comm 5 nranks=2 ranks=0,1\ntype\tts\tname\nkernel\t1\tk\n' >"$T/a.tsv"
	printf '#rank 1 host=b\n#comm 5 nranks=2 ranks=0,1\ntype\tts\tname\nkernel\t2\tk\n' >"$T/b.tsv"
	tsv2ev "$T/a.tsv" "$T/a.ev"
	tsv2ev "$T/b.tsv" "$T/b.ev"
	ev-merge -o "$T/m.ev" "$T/a.ev" "$T/b.ev"
	run -0 grep -ac '^#comm 5' "$T/m.ev"
	assert_output 1
	run -0 grep -ac '^#rank' "$T/m.ev"
	assert_output 2
}

@test "--rank-from-src numbers inputs as ranks" {
	printf '#rank 0 host=a\ntype\trank\tts\nkernel\t0\t1\n' >"$T/a.tsv"
	tsv2ev "$T/a.tsv" "$T/a.ev"
	ev-merge -R -o "$T/m.ev" "$T/a.ev" "$T/a.ev" "$T/a.ev"
	run -0 ev-view -M -H -c rank "$T/m.ev"
	assert_output "$(printf '0\n1\n2')"
	run -0 grep -a '^#rank' "$T/m.ev"
	assert_output "$(printf '#rank 0 host=a\n#rank 1 host=a\n#rank 2 host=a')"
}

@test "out-of-order input is an error naming input and record, unless --sort" {
	printf 'type\tts\nkernel\t5\nkernel\t7\nkernel\t3\n' >"$T/o.tsv"
	tsv2ev "$T/o.tsv" "$T/o.ev"
	run -1 ev-merge -o "$T/m.ev" "$T/o.ev"
	assert_output --partial "o.ev: record 3: out of order (ts 3 after 7); sort with ev-merge --sort"
	[ ! -e "$T/m.ev" ]
	run -0 bash -c 'ev-merge --sort "$1" | ev-view -M -H -c ts' _ "$T/o.ev"
	assert_output "$(printf '3\n5\n7')"
}

@test "external sort with a small buffer equals the in-memory sort" {
	n=${EV_TEST_SORT_RECORDS:-300000}
	awk -v n="$n" 'BEGIN { srand(3); OFS = "\t"; print "type", "rank", "stream", "ts", "seq", "name";
		for (i = 0; i < n; i++) print "kernel", int(rand() * 8), int(rand() * 4), int(rand() * 1000000), i, "k" (i % 50) }' >"$T/r.tsv"
	tsv2ev "$T/r.tsv" "$T/r.ev"
	mkdir "$T/tmp"
	TMPDIR="$T/tmp" ev-merge --sort -S 1M -o "$T/ext.ev" "$T/r.ev"
	ev-merge --sort -S 1G -o "$T/mem.ev" "$T/r.ev"
	cmp "$T/ext.ev" "$T/mem.ev"
	run -0 bash -c 'ev-view -M -H -c ts "$1" | sort -n -c && echo sorted' _ "$T/ext.ev"
	assert_output sorted
	[ -z "$(ls -A "$T/tmp")" ]
}

@test "temporary runs are removed after an error and after SIGINT" {
	awk 'BEGIN { OFS = "\t"; print "type", "ts"; for (i = 0; i < 100000; i++) print "kernel", 100000 - i }' >"$T/r.tsv"
	tsv2ev "$T/r.tsv" "$T/r.ev"
	mkdir "$T/tmp"
	# Error: a truncated second input after runs were spilled.
	head -n 50 "$T/r.ev" >"$T/cut.ev"
	TMPDIR="$T/tmp" run -1 ev-merge --sort -S 1M -o "$T/m.ev" "$T/r.ev" "$T/cut.ev"
	assert_output --partial "truncated"
	[ -z "$(ls -A "$T/tmp")" ]
	[ ! -e "$T/m.ev" ]
	# SIGINT while it waits for more input on a FIFO, runs already on disk.
	mkfifo "$T/fifo"
	TMPDIR="$T/tmp" ev-merge --sort -S 1M -o "$T/m.ev" "$T/fifo" 2>/dev/null &
	pid=$!
	exec 7>"$T/fifo"
	cat "$T/r.ev" >&7
	for _ in $(seq 100); do [ -n "$(ls -A "$T/tmp")" ] && break; sleep 0.1; done
	[ -n "$(ls -A "$T/tmp")" ]
	kill -INT "$pid"
	wait "$pid" || true
	exec 7>&-
	[ -z "$(ls -A "$T/tmp")" ]
	[ -z "$(find "$T" -maxdepth 1 -name '.m.ev.*')" ]
}

@test "--align=start puts each rank's first event at 0" {
	bash "$GEN" "$T/g" 3 5 1 1000000 0
	ev-merge -q --align=start -o "$T/m.ev" "$T"/g/rank*.ev
	run -0 bash -c 'ev-view -M -H -c rank,ts "$1" | sort -k1,1n -k2,2n -s | awk "!s[\$1]++ { print \$2 }"' _ "$T/m.ev"
	assert_output "$(printf '0\n0\n0')"
}

@test "--align=coll recovers known offsets to within 10 us" {
	bash "$GEN" "$T/g" 8 100 11 50000000 0
	ev-merge --align=coll -o "$T/m.ev" "$T"/g/rank*.ev 2>"$T/err"
	grep -q 'align:   rank 7: offset' "$T/err"
	grep -a '^#meta align.rank' "$T/m.ev" | tr ' ' '\n' | sed -n 's/^align.rank\([0-9]*\).offset_ns=\(.*\)/\1\t\2/p' >"$T/got.tsv"
	run -0 awk -F'\t' 'NR == FNR { truth[$1] = $2; next } { d = $2 - truth[$1]; if (d < 0) d = -d; if (d > 10000) { print "rank " $1 " off by " d; bad = 1 } n++ } END { if (n != 8) print "ranks: " n; exit bad || n != 8 }' "$T/g/truth.tsv" "$T/got.tsv"
	# After alignment the collectives end together on every rank.
	run -0 bash -c 'ev-view -M -H --type=coll -c seq,ts,dur "$1" | awk -F"\t" "{ e = \$2 + \$3; if (!(\$1 in lo) || e < lo[\$1]) lo[\$1] = e; if (e > hi[\$1]) hi[\$1] = e } END { m = 0; for (k in lo) if (hi[k] - lo[k] > m) m = hi[k] - lo[k]; print (m <= 10000) ? \"ok\" : \"spread \" m }"' _ "$T/m.ev"
	assert_output ok
}

# ends_within FILE PERIOD TOL: every communication record of FILE (coll, p2p,
# NCCL kernel) ends within TOL ns after the true end of its iteration
# (generator: GEN_UNIX=1, T0 = 1e10 ns after the epoch prefix, ends at 3/4 of
# the period).  Prints "ok" or the worst error.
ends_within() {
	ev-view -M -H -c type,op,ts,dur "$1" | awk -F'\t' -v P="$2" -v tol="$3" '
		$1 == "coll" || $1 == "p2p" || ($1 == "kernel" && $2 == "comm") {
			e = substr($3, 8) + $4 - 10000000000 - 0.75 * P
			i = int(e / P + 0.5); err = e - i * P
			if (err < 0) err = -err
			if (err > worst) worst = err
			n++
		}
		END { if (n == 0) print "no records"; else if (worst <= tol) print "ok"; else print "worst " worst " ns over " n }'
}

@test "10-minute run, offsets up to 2 s, 50 ppm drift: recovered within 10 us from one multi-rank input, per anchor kind" {
	for kind in coll p2p kernel; do
		rm -rf "$T/g"
		GEN_ANCHOR=$kind GEN_PERIOD_NS=1000000000 GEN_UNIX=1 GEN_JITTER_NS=2000 bash "$GEN" "$T/g" 8 600 5 2000000000 50
		# One input holding every rank, as merge-traces gives it.
		ev-merge -o "$T/one.ev" "$T"/g/rank*.ev
		ev-merge --align=coll-drift --report="$T/rep.tsv" -o "$T/m.ev" "$T/one.ev" 2>"$T/err"
		run -0 bash -c 'ev-view -M -H -c ts "$1" | sort -c -n && echo ordered' _ "$T/m.ev"
		assert_output ordered
		[ "$(ev-view -M -H "$T/m.ev" | wc -l)" = "$(ev-view -M -H "$T/one.ev" | wc -l)" ]
		run -0 ends_within "$T/m.ev" 1000000000 10000
		assert_output ok
		# The report: every rank aligned with its drift, residuals shown.
		run -0 awk -F'\t' 'NR > 1 && $3 == "aligned" { n++; if ($18 != "drift fitted") bad = 1 } END { print n + 0, bad + 0 }' "$T/rep.tsv"
		assert_output "7 0"
		grep -q 'residual median' "$T/err"
		# The drift is the truth within 0.05 ppm.
		run -0 awk -F'\t' 'NR == FNR { truth[$1] = $3; next } FNR > 1 && $3 == "aligned" { d = $6 - truth[$2]; if (d < 0) d = -d; if (d > 0.05) { print "rank " $2 " drift off by " d; bad = 1 } } END { exit bad }' "$T/g/truth.tsv" "$T/rep.tsv"
		if [ "$kind" = kernel ]; then grep -q 'no coll or p2p records.*NCCL kernels' "$T/err"; fi
		# Same result from one file per rank.
		ev-merge -q --align=coll-drift -o "$T/m2.ev" "$T"/g/rank*.ev
		run -0 ends_within "$T/m2.ev" 1000000000 10000
		assert_output ok
	done
}

@test "offset-only coll-drift applies the offset right at +2 s and 50 ppm (no drift x offset error)" {
	GEN_PERIOD_NS=1000000000 GEN_UNIX=1 bash "$GEN" "$T/g" 2 600 5 2000000000 50
	ev-merge -q --align=coll-drift -o "$T/m.ev" "$T"/g/rank*.ev
	run -0 ends_within "$T/m.ev" 1000000000 1000
	assert_output ok
}

@test "a short trace gets offsets only, and says so" {
	bash "$GEN" "$T/g" 4 70 5 20000000 30
	ev-merge --align=coll-drift --report="$T/rep.tsv" -o "$T/m.ev" "$T"/g/rank*.ev 2>"$T/err"
	grep -q 'offset only: anchors span too short a time for a drift' "$T/err"
	run -0 awk -F'\t' 'NR > 1 && $3 == "aligned" && $6 != 0 { print "drift applied" }' "$T/rep.tsv"
	assert_output ""
	# A longer minimum span is an option.
	ev-merge -q --align=coll-drift --drift-min-span=1ms --report="$T/rep.tsv" -o "$T/m.ev" "$T"/g/rank*.ev
	run -0 awk -F'\t' 'NR == FNR { truth[$1] = $3; next } FNR > 1 && $3 == "aligned" { d = $6 - truth[$2]; if (d < 0) d = -d; if (d > 0.1) { print "rank " $2 " drift off by " d; bad = 1 } } END { exit bad }' "$T/g/truth.tsv" "$T/rep.tsv"
}

@test "no anchors: not a silent no-op" {
	printf 'type\trank\tts\tname\nkernel\t0\t10\tk\nkernel\t1\t20\tk\n' >"$T/a.tsv"
	tsv2ev "$T/a.tsv" "$T/a.ev"
	run -0 ev-merge --align=coll -o "$T/m.ev" "$T/a.ev"
	assert_output --partial "no coll or p2p records"
	assert_output --partial "no rank could be aligned"
}

@test "configurations are aligned separately; missing ranks are named" {
	mkdir -p "$T/s/256thread/nccl_28channels" "$T/s/512thread/nccl_56channels"
	bash "$GEN" "$T/g1" 4 50 3 5000000 0
	bash "$GEN" "$T/g2" 4 50 4 7000000 0
	rm "$T/g2/rank2.ev"
	ev-merge -o "$T/s/256thread/nccl_28channels.ev" "$T"/g1/rank*.ev
	ev-merge -o "$T/s/512thread/nccl_56channels.ev" "$T"/g2/rank*.ev
	ev-merge -k threads,channels -x '([0-9]+)thread/nccl_([0-9]+)channels' -o "$T/sweep.ev" "$T"/s/*thread/nccl_*channels.ev
	run -0 ev-merge --align=coll --report="$T/rep.tsv" -o "$T/m.ev" "$T/sweep.ev"
	assert_output --partial "configuration channels=28 threads=256: 4 ranks"
	assert_output --partial "configuration channels=56 threads=512: 3 ranks"
	assert_output --partial "1 of world_size 4 rank(s) missing: 2"
	run -0 grep -c $'\taligned\t' "$T/rep.tsv"
	assert_output 5
	run -0 ends_within_seq "$T/m.ev"
}

@test "alignment reads a pipe through a spool file" {
	bash "$GEN" "$T/g" 2 20 2 1000000 0
	run -0 bash -c 'cat "$1" | ev-merge -q --align=coll -o "$3" - "$2"' _ "$T/g/rank0.ev" "$T/g/rank1.ev" "$T/m.ev"
	run -0 grep -ac '^#meta align.rank1.offset_ns' "$T/m.ev"
}

@test "usage errors" {
	run -2 ev-merge --align=sideways x.ev
	run -2 ev-merge -x '(' -k a x.ev
	run -2 ev-merge -x '([0-9]+)' x.ev
	run -2 ev-merge -k a,b -x '([0-9]+)' x.ev
	run -2 ev-merge -S 10 --sort x.ev
	run -2 ev-merge - -
	assert_output --partial "only once"
}

@test "wrong inputs are named: JSON, gzip JSON, SQLite" {
	printf '{"traceEvents": []}' >"$T/t.json"
	run -1 ev-merge -o "$T/m.ev" "$T/t.json"
	assert_output "ev-merge: $T/t.json: line 1: not an ev stream (looks like JSON: convert a PyTorch profiler trace with kineto2ev)"
	printf '[\n{"a": 1}\n]\n' | gzip >"$T/t.json.gz"
	run -1 ev-merge -o "$T/m.ev" "$T/t.json.gz"
	assert_output --partial "not an ev stream (looks like gzip-compressed JSON"
	printf 'SQLite format 3\0\0\0\0\n' >"$T/x.sqlite"
	run -1 ev-merge -o "$T/m.ev" "$T/x.sqlite"
	assert_output --partial "not an ev stream (SQLite database: convert an Nsight Systems export with nsys2ev)"
	[ ! -e "$T/m.ev" ]
}

@test "#src keys of the inputs survive a merge; no warning for the README sweep workflow" {
	printf '#src 0 file=r0.json rank=0 base_ns=1759300074000000000\n#src 1 file=r1.json rank=1 base_ns=1759300074000000001\ntype\trank\tsrc\tts\tname\nkernel\t0\t0\t1\tk\nkernel\t1\t1\t2\tk\n' >"$T/a.tsv"
	mkdir -p "$T/s/256thread" "$T/s/512thread"
	tsv2ev "$T/a.tsv" "$T/s/256thread/nccl_28channels.ev"
	tsv2ev "$T/a.tsv" "$T/s/512thread/nccl_56channels.ev"
	cd "$T"
	run -0 --separate-stderr ev-merge -k threads,channels -x '([0-9]+)thread/nccl_([0-9]+)channels' -o sweep.ev s/*thread/nccl_*channels.ev
	[ -z "$stderr" ]
	run -0 grep -a '^#src' sweep.ev
	assert_output - <<'OUT'
#src 0 file=r0.json rank=0 base_ns=1759300074000000000 input=s/256thread/nccl_28channels.ev threads=256 channels=28
#src 1 file=r1.json rank=1 base_ns=1759300074000000001 input=s/256thread/nccl_28channels.ev threads=256 channels=28
#src 2 file=r0.json rank=0 base_ns=1759300074000000000 input=s/512thread/nccl_56channels.ev threads=512 channels=56
#src 3 file=r1.json rank=1 base_ns=1759300074000000001 input=s/512thread/nccl_56channels.ev threads=512 channels=56
OUT
	run -0 ev-view -M -H -c src,rank sweep.ev
	assert_output "$(printf '0\t0\n2\t0\n1\t1\n3\t1')"
	# Merging again keeps every key and adds the label.
	ev-merge -o again.ev base=sweep.ev
	run -0 grep -a '^#src 3' again.ev
	assert_output '#src 3 label=base file=r1.json rank=1 base_ns=1759300074000000001 input=s/512thread/nccl_56channels.ev threads=512 channels=56'
}

@test "format-legal extreme ts and dur: no overflow, aligned or sorted" {
	printf 'type\trank\tts\tdur\tcomm\tseq\tname\ncoll\t0\t-9223372036854775800\t18446744073709551615\t5\t1\tk\ncoll\t1\t9223372036854775800\t18446744073709551615\t5\t1\tk\nkernel\t1\t9223372036854775807\t9223372036854775807\t0\t0\tk\n' >"$T/x.tsv"
	tsv2ev "$T/x.tsv" "$T/x.ev"
	for m in coll coll-drift start; do
		run -0 ev-merge -q --align=$m -o "$T/y.ev" "$T/x.ev"
		run -0 bash -c 'ev-view -M -H -c ts "$1" | sort -c -n && echo ordered' _ "$T/y.ev"
		assert_output ordered
	done
	run -0 ev-merge --sort -o "$T/y.ev" "$T/x.ev"
}

# shift_rank IN OUT RANK NS DRIFT_PPM: rank RANK's times in IN seen through a
# clock that is NS ahead and drifts DRIFT_PPM against the others (from the
# rank's first event), to OUT.  Exact decimal arithmetic on 19-digit times
# (awk doubles are not).  The output is re-sorted.
shift_rank() {
	ev-view "$1" | awk -F'\t' -v OFS='\t' -v rank="$3" -v off="$4" -v ppm="$5" '
		# a + d for a decimal string a and |d| < 1e12
		function add(a, d,   n, hi, lo) {
			n = length(a); if (n <= 12) return sprintf("%.0f", a + d)
			hi = substr(a, 1, n - 12); lo = substr(a, n - 11) + d
			while (lo < 0) { lo += 1e12; hi = sprintf("%.0f", hi - 1) }
			while (lo >= 1e12) { lo -= 1e12; hi = sprintf("%.0f", hi + 1) }
			return hi sprintf("%012.0f", lo)
		}
		function since(a, b) { return substr(a, length(a) - 11) - substr(b, length(b) - 11) }
		/^#/ { print; next }
		$1 == "type" { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
		$col["rank"] == rank {
			if (first == "") first = $col["ts"]
			$col["ts"] = add($col["ts"], off + int(ppm * since($col["ts"], first) / 1e6))
		}
		{ print }' | ev-view --pack | ev-merge --sort -o "$2"
}

@test "shared data: offsets injected into real traces (nsys export, aorta Kineto) are recovered within 10 us" {
	need_shared_data
	nsys2ev -q -o "$T/ns.ev" "$SHARED_DATA/nsys/nsysai_mfu_2gpu_before.sqlite"
	kineto2ev -q -o "$T/ao.ev" "$SHARED_DATA"/kineto/aorta-sweep/256thread/nccl_28channels/torch_profiler/rank*/*.json.gz
	for t in ns ao; do
		ev-merge -q --align=coll --report="$T/base.tsv" -o /dev/null "$T/$t.ev"
		for off in 1230000 -37000000 2000000000; do
			shift_rank "$T/$t.ev" "$T/s.ev" 1 "$off" 0
			ev-merge -q --align=coll --report="$T/r.tsv" -o /dev/null "$T/s.ev"
			run -0 awk -F'\t' -v off="$off" 'NR == FNR { if ($2 == 1) base = $5; next } $2 == 1 { d = $5 - base - off; if (d < 0) d = -d; print (d <= 10000 && $3 == "aligned") ? "ok" : "off by " d " (" $3 ")" }' "$T/base.tsv" "$T/r.tsv"
			assert_output ok
		done
	done
}
