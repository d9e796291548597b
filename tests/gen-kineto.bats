#!/usr/bin/env bats
# gen-kineto: seeded synthetic Kineto traces (tests/gen/gen-kineto.c).
bats_require_minimum_version 1.5.0
load test_helper

@test "the same options give the same bytes; another seed does not" {
	gen-kineto -q --ranks 3 --iters 2 --seed 7 "$BATS_TEST_TMPDIR/a"
	gen-kineto -q --ranks 3 --iters 2 --seed 7 "$BATS_TEST_TMPDIR/b"
	gen-kineto -q --ranks 3 --iters 2 --seed 8 "$BATS_TEST_TMPDIR/c"
	for r in 0 1 2; do
		cmp "$BATS_TEST_TMPDIR/a/rank$r/trace.json" "$BATS_TEST_TMPDIR/b/rank$r/trace.json"
	done
	run ! cmp -s "$BATS_TEST_TMPDIR/a/rank0/trace.json" "$BATS_TEST_TMPDIR/c/rank0/trace.json"
}

@test "valid JSON with PyTorch profiler's event kinds and distributedInfo" {
	gen-kineto -q --ranks 2 --iters 2 --kernels 6 --mix allreduce:1,allgather:1 "$BATS_TEST_TMPDIR/t"
	# 2 iterations x (6 compute ops + 2 collectives): cpu_op 2 x (6 + 2 x 2) +
	# aten::copy_ = 21; runtime 2 x (6 + 2) + memcpy + memset = 18 (one flow
	# pair each); kernels 16; annotations 2 steps + 4 nccl:*.
	run -0 python3 - "$BATS_TEST_TMPDIR/t/rank1/trace.json" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
c = collections.Counter((e["ph"], e.get("cat")) for e in d["traceEvents"])
print(sorted(f"{k[0]} {k[1]} {v}" for k, v in c.items()))
print(d["distributedInfo"]["rank"], d["distributedInfo"]["world_size"], d["baseTimeNanoseconds"])
PY
	assert_output - <<'EOF'
['M None 3', 'X Trace 1', 'X cpu_op 21', 'X cuda_runtime 18', 'X gpu_memcpy 1', 'X gpu_memset 1', 'X gpu_user_annotation 2', 'X kernel 16', 'X user_annotation 6', 'f ac2g 18', 's ac2g 18']
1 2 1700000000000000000
EOF
}

@test "kineto2ev: every kernel linked, collectives match and end together on all ranks" {
	gen-kineto -q --ranks 4 --iters 3 --mix allreduce:2,reducescatter:1,broadcast:1 "$BATS_TEST_TMPDIR/t"
	kineto2ev -q -o "$BATS_TEST_TMPDIR/t.ev" "$BATS_TEST_TMPDIR"/t/rank*/trace.json
	run -0 ev-view -M -H -t kernel,memcpy,memset -c flags "$BATS_TEST_TMPDIR/t.ev"
	refute_output --partial unlinked
	# Per seq: one kind and size, four ranks, one end time.
	ev-view -M -H -t coll -c seq,op,bytes,rank,ts,dur "$BATS_TEST_TMPDIR/t.ev" |
		awk -F'\t' '{ k = $1; n[k]++; if (!(k in key)) key[k] = $2 " " $3
			if (key[k] != $2 " " $3) bad = bad "seq " k " differs\n"
			e = substr($5, length($5) - 11) + $6 # ns past the base: exact in a double
			if (!(k in lo) || e < lo[k]) lo[k] = e; if (!(k in hi) || e > hi[k]) hi[k] = e }
			END { for (k in n) { c++; if (n[k] != 4) bad = bad "seq " k ": " n[k] " ranks\n"
				if (hi[k] != lo[k]) bad = bad "seq " k ": ends differ\n" }
				printf "%s%d collectives\n", bad, c }' >"$BATS_TEST_TMPDIR/check"
	run cat "$BATS_TEST_TMPDIR/check"
	assert_output "12 collectives"
}

@test "--size: about that many bytes per rank; -z and standard output give the same trace" {
	run -0 --separate-stderr gen-kineto --ranks 2 --size 2M "$BATS_TEST_TMPDIR/s"
	size=$(stat -c %s "$BATS_TEST_TMPDIR/s/rank0/trace.json")
	[ "$size" -ge 2000000 ] && [ "$size" -le 2300000 ]
	assert_regex "$stderr" '^gen-kineto: 2 ranks x [0-9]+ iterations, [0-9]+ events, [0-9]+ bytes of JSON$'
	gen-kineto -q -z --ranks 2 --size 2M "$BATS_TEST_TMPDIR/z"
	gzip -dc "$BATS_TEST_TMPDIR/z/rank1/trace.json.gz" | cmp - "$BATS_TEST_TMPDIR/s/rank1/trace.json"
	gen-kineto -q --ranks 2 --size 2M --only 1 - | cmp - "$BATS_TEST_TMPDIR/s/rank1/trace.json"
}

@test "memory stays flat: 10x the size, the same peak RSS" {
	/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/m1" gen-kineto -q --only 0 --size 2M - >/dev/null
	/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/m10" gen-kineto -q --only 0 --size 20M - >/dev/null
	run awk -v a="$(cat "$BATS_TEST_TMPDIR/m1")" -v b="$(cat "$BATS_TEST_TMPDIR/m10")" 'BEGIN { print (b < a * 1.2 + 2048) ? "flat" : "grows " a " -> " b }'
	assert_output flat
}

@test "usage errors exit 2" {
	run -2 gen-kineto --ranks 0 x
	run -2 gen-kineto --mix allreduce:1,bogus:2 x
	run -2 gen-kineto --only 4 --ranks 4 x
	run -2 gen-kineto -z -
	run -2 gen-kineto
	assert_output --partial "Try 'gen-kineto --help'"
	run -0 gen-kineto --help
	assert_output --partial 'Exit status'
}
