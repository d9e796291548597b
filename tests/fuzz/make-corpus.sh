#!/usr/bin/env bash
# make-corpus.sh - (re)generate the seed inputs of tests/fuzz/corpus/<harness>/
# from the fixtures and generators: valid inputs and typical damage
# (truncation, bad escapes, wrong sizes, bad numbers).  Files named seed-*
# are replaced; inputs merged in from fuzzing runs are kept.
# Needs the tools on PATH or in EV_BIN (make fuzz-corpus sets it).
set -euo pipefail
cd "$(dirname "$0")/../.."
EV_BIN="${EV_BIN:-$PWD/bin}"
PATH="$EV_BIN:$PATH"
c=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for h in ev_read json kineto npkit tsv_pack goal; do
	mkdir -p "$c/$h"
	rm -f "$c/$h"/seed-*
done

# ---- ev streams ---------------------------------------------------------
ev-view --pack -o "$tmp/small.ev" tests/fixtures/ev-view/small.tsv
ev-view --pack -o "$tmp/timeline.ev" tests/fixtures/ev-stats/timeline.tsv
ev-view --pack -o "$tmp/p2p.ev" tests/fixtures/coll-expand/p2p.tsv
e="$c/ev_read"
cp "$tmp/small.ev" "$e/seed-small.ev"
cp "$tmp/timeline.ev" "$e/seed-timeline.ev"
cp "$tmp/p2p.ev" "$e/seed-p2p-meta.ev"
cat "$tmp/small.ev" "$tmp/timeline.ev" >"$e/seed-two-segments.ev"
gzip -9n <"$tmp/small.ev" >"$e/seed-gzip.ev"
head -c -1 "$tmp/small.ev" >"$e/seed-no-final-newline.ev"
grep -av '^#end' "$tmp/small.ev" >"$e/seed-no-end.ev" || true
sed 's/^#end .*/#end 99/' "$tmp/small.ev" >"$e/seed-end-count.ev"
sed '1s/^#ev 1\.0/#ev 2.0/' "$tmp/small.ev" >"$e/seed-major2.ev"
sed '1s/^#ev 1\.0 96/#ev 1.1 100/' "$tmp/small.ev" >"$e/seed-minor-bigger.ev"
grep -av '^#str' "$tmp/small.ev" >"$e/seed-undefined-string.ev" || true
sed '2s/^#str \(.\)/#str f/' "$tmp/small.ev" >"$e/seed-bad-string-id.ev"
printf '#ev 1.0 96 clock=ns\n\001\\x\n#end 1\n' >"$e/seed-bad-escape.ev"
printf '#ev 1.0 96 clock=ns\n\001short\n#end 1\n' >"$e/seed-short-record.ev"
printf '#ev 1.0 96 clock=ns\n#end 0\n' >"$e/seed-empty.ev"
printf '#ev 1.0 96 clock=ns\n#rank 0 host=a\n#comm 5 nranks=2 ranks=0,1\n#ring 5 0 0 1\n#tree 5 0 0:-1:1,-1,-1\n#meta k=v\n#end 0\n' >"$e/seed-meta-only.ev"
printf 'not an ev stream\n' >"$e/seed-text.ev"

# ---- JSON: Kineto traces --------------------------------------------------
k="$c/kineto"
cp tests/fixtures/kineto2ev/small.json "$k/seed-small.json"
gen-kineto -q --ranks 2 --iters 1 --kernels 2 --mix allreduce:1,sendrecv:1 --only 1 - |
	grep -v '"id": [0-6], "name": "NVIDIA' >"$tmp/gen.json"
cp "$tmp/gen.json" "$k/seed-gen.json"
gen-kineto -q --ranks 2 --iters 1 --kernels 1 --mix allgather:1 --python --no-flows --only 0 - |
	grep -v '"id": [0-6], "name": "NVIDIA' >"$k/seed-gen-python.json"
head -c 1500 "$tmp/gen.json" >"$k/seed-truncated.json"
gzip -9n <tests/fixtures/kineto2ev/small.json >"$k/seed-small.json.gz"
printf '[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":3},{"ph":"E","pid":1,"tid":1,"ts":4},{"ph":"C","name":"m","pid":1,"ts":2,"args":{"x":1,"y":-2,"z":"s"}}]\n' >"$k/seed-bare-array.json"
printf '{"traceEvents":[{"ph":"X","name":"k","cat":"kernel","ts":1e3,"dur":"2","pid":0,"tid":1,"args":{"Collective name":"all_reduce","In msg nelems":"12","Group size":2,"dtype":"Float","grid":[1e9,1e9,1e9],"block":[99999,1,1]}}],"baseTimeNanoseconds":"x","distributedInfo":[1]}\n' >"$k/seed-odd-types.json"
printf '{"traceEvents":[{"ph":"X","name":"\\ud83d\\ude00 \\u00e9\\n","ts":1.0005,"dur":0.0004,"pid":"p","tid":"t"}],"distributedInfo":{"rank":"3","world_size":4,"nccl_version":"2.1"}}\n' >"$k/seed-unicode.json"
printf '{"traceEvents":[{"ph":"X","ts":1}' >"$k/seed-unterminated.json"
printf '{"a":{"b":[1,2,{"c":"\\"}"}]},"traceEvents":[],"z":null}\n' >"$k/seed-nested-top.json"
# The JSON harness reads the same documents.
cp "$k"/seed-* "$c/json/"

# ---- NPKit summaries ------------------------------------------------------
n="$c/npkit"
cp tests/fixtures/npkit2lat/small_Simple.json "$n/seed-small.json"
printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": {"4": [1.5, 2e3, 0]}, "NPKIT_EVENT_GPU_DIRECT_RECV_COPY_SEND": {"18446744073709551615": []}}\n' >"$n/seed-edge-numbers.json"
printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": {"x": [1]}, "NPKIT_EVENT_GPU_DIRECT_RECV_COPY_SEND": {"4": [-1, "a"]}}\n' >"$n/seed-bad-values.json"
printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": {"4": [1, 2' >"$n/seed-truncated.json"
printf '[]\n' >"$n/seed-array.json"
printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": 5, "NPKIT_EVENT_GPU_DIRECT_RECV_COPY_SEND": {"4": {"a": 1}}}\n' >"$n/seed-wrong-shapes.json"

# ---- TSV for ev-view --pack ----------------------------------------------
t="$c/tsv_pack"
cp tests/fixtures/ev-view/small.tsv "$t/seed-small.tsv"
cp tests/fixtures/coll-expand/p2p.tsv "$t/seed-p2p.tsv"
ev-view "$tmp/small.ev" >"$t/seed-lossless.tsv"
ev-view "$tmp/p2p.ev" >"$t/seed-lossless-meta.tsv"
printf 'type\trank\tts\tflags\tdtype\nkernel\t-1\t9223372036854775808\tbogus\tfloat99\n' >"$t/seed-bad-values.tsv"
printf 'type\tname\nkernel\tbad \\q escape\n' >"$t/seed-bad-escape.tsv"
printf 'rank\tts\n0\t1\n' >"$t/seed-no-type.tsv"
printf 'type\ttype\nkernel\tcoll\n' >"$t/seed-dup-column.tsv"
printf 'type\tts\nkernel\t1\textra\n' >"$t/seed-extra-field.tsv"
printf '#ev 1.0 96 clock=ns\n#end 5\n' >"$t/seed-raw-end.tsv"
# ---- GOAL round trip: schedules from coll-expand ------------------------
g="$c/goal"
for f in ar2 atlahs_ll; do
	ev-view --pack tests/fixtures/coll-expand/$f.tsv | coll-expand -q -o "$g/seed-$f.ev"
done
printf 'type\trank\tstream\tts\tdur\tpeer\tbytes\taux\tid\tflags\nsend\t0\t0\t1\t0\t1\t8\t0\t0\t-\nrecv\t1\t0\t1\t0\t0\t8\t0\t0\t-\ncalc\t1\t0\t2\t5\t-1\t0\t0\t1\t-\ndep\t1\t0\t2\t0\t-1\t0\t0\t1\tireq\n' |
	ev-view --pack -o "$g/seed-tiny.ev"
printf 'type\trank\tts\tpeer\tbytes\tid\nsend\t0\t1\t1\t8\t0\n' | ev-view --pack -o "$g/seed-unmatched.ev"
for d in "$c"/*; do
	echo "$(basename "$d"): $(find "$d" -type f | wc -l) files, $(du -sk "$d" | cut -f1) KiB"
done
