#!/usr/bin/env bash
# End-to-end pipeline rows: nsys2goal on a generated 64-GPU x 1000-collective
# export; gemm-variance and compare-configs on a generated sweep of 8 ranks x
# 4 configurations (Kineto JSON from gen-kineto).  A pipeline that does not
# exist yet gives a "skipped" row.  BENCH_SMALL=1 shrinks the inputs 10x.
# shellcheck disable=SC2154 # measure sets <var>_wall and <var>_rss
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
d="$BENCH_DIR/e2e"
mkdir -p "$d"
small="${BENCH_SMALL:-}"
why() { grep -v "^Try '" "$d/$1.err" | tail -n 1; } # the error, not the progress
once() { # once VAR CMD: one run (the inputs are large), wall and peak RSS
	local tf w r
	tf=$(mktemp)
	/usr/bin/time -f '%e %M' -o "$tf" bash -c "$2" >/dev/null 2>"$d/$1.err" || { rm -f "$tf"; return 1; }
	read -r w r <"$tf"
	rm -f "$tf"
	printf -v "${1}_wall" '%s' "$w"
	printf -v "${1}_rss" '%s' "$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')"
}
# nsys2goal: 8 nodes x 8 GPUs; iterations so that there are ~1000 collectives
# per GPU (gen-nsys.py runs 7 NCCL ops per iteration).
iters=143
[ -z "$small" ] || iters=15
if [ -x "$root/pipelines/nsys2goal" ]; then
	n="$d/nsys64x$iters"
	[ -s "$n/nsys_nid000007.sqlite" ] || python3 "$root/tests/gen/gen-nsys.py" --nodes 8 --gpus 8 --iters "$iters" --compute 1 "$n" >/dev/null
	bytes=$(cat "$n"/*.sqlite | wc -c)
	if once g "$root/pipelines/nsys2goal -i $n -o $d/goal-out"; then
		ops=$((iters * 7))
		# NCCL ops/s, not M ops/s: 64 k ops take tens of seconds.
		echo "| nsys2goal | 64 GPUs x $ops NCCL ops | $(mib "$bytes") SQLite | $g_wall | $(awk -v n=$((ops * 64)) -v s="$g_wall" 'BEGIN { if (s <= 0) s = 0.001; printf "%.0f NCCL ops/s", n / s }') | $g_rss |"
	else
		echo "| nsys2goal | 64 GPUs x $((iters * 7)) NCCL ops | FAILED: $(why g) | | | |"
	fi
else
	echo "| nsys2goal | skipped: pipelines/nsys2goal not present | | | | |"
fi
# A sweep of 4 configurations x 8 ranks, aorta's layout; ~1 GB of JSON in
# all at full size (32 traces x 32 MB).
mb=32
[ -z "$small" ] || mb=3
s="$d/sweep${mb}m"
i=0
for t in 256 512; do
	for c in 28 56; do
		dir="$s/${t}thread/nccl_${c}channels/torch_profiler"
		scale=$(awk -v t="$t" -v c="$c" 'BEGIN { printf "%.2f", 1 + (t - 256) / 1024 + (c - 28) / 280 }')
		[ -s "$dir/rank7/trace.json" ] || gen-kineto -q --ranks 8 --size "${mb}M" --seed $((40 + i)) --scale "$scale" "$dir"
		i=$((i + 1))
	done
done
bytes=$(find "$s" -name trace.json -exec cat {} + | wc -c)
if [ -x "$root/pipelines/gemm-variance" ]; then
	rm -rf "$d/gv-out"
	if once v "$root/pipelines/gemm-variance -o $d/gv-out $s"; then
		echo "| gemm-variance | 4 configs x 8 ranks | $(mib "$bytes") JSON | $v_wall | $(awk -v b="$bytes" -v w="$v_wall" 'BEGIN { printf "%.1f MB/s", b / (w > 0 ? w : 0.001) / 1e6 }') | $v_rss |"
	else
		echo "| gemm-variance | 4 configs x 8 ranks | FAILED: $(why v) | | | |"
	fi
else
	echo "| gemm-variance | skipped: pipelines/gemm-variance not present | | | | |"
fi
if [ -x "$root/pipelines/compare-configs" ]; then
	rm -rf "$d/cc-out"
	base="$s/256thread/nccl_28channels"
	if once x "$root/pipelines/compare-configs --baseline $base --test $s/256thread/nccl_56channels --test $s/512thread/nccl_28channels --test $s/512thread/nccl_56channels -o $d/cc-out"; then
		echo "| compare-configs | baseline + 3 configs x 8 ranks | $(mib "$bytes") JSON | $x_wall | $(awk -v b="$bytes" -v w="$x_wall" 'BEGIN { printf "%.1f MB/s", b / (w > 0 ? w : 0.001) / 1e6 }') | $x_rss |"
	else
		echo "| compare-configs | baseline + 3 configs x 8 ranks | FAILED: $(why x) | | | |"
	fi
else
	echo "| compare-configs | skipped: pipelines/compare-configs not present | | | | |"
fi
