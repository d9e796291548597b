#!/usr/bin/env bash
# nsys2ev: rows/s on generated exports against the floor of SQLite alone
# (the same kernel query ORDER BY start through the sqlite3 CLI), and peak
# RSS at 1x and 10x input, which must stay flat (issue 22: <= 1.2x):
#   kernels only   --bench-kernels: 0.5 M and 5 M kernels, 2 ranks
#   full NCCL mix  --iters 200 and 2000 (annotated NCCL, 4 ranks, markers,
#                  memcpy/memset, NVTX): every table and the NCCL queues
# BENCH_SMALL=1 runs at a tenth of the sizes.
# shellcheck disable=SC2154  # measure() sets <var>_wall and <var>_rss
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/nsys2ev"
gen="$(dirname "$0")/../tests/gen/gen-nsys.py"
small="${BENCH_SMALL:-}"
mkdir -p "$d"
kernels="500000 5000000"
iters="200 2000"
if [ -n "$small" ]; then
	kernels="50000 500000"
	iters="20 200"
fi
rss=()
for n in $kernels; do
	out="$d/k$n"
	[ -s "$out/nsys_nid000000.sqlite" ] || python3 "$gen" --gpus 2 --bench-kernels "$n" "$out" >/dev/null
	f="$out/nsys_nid000000.sqlite"
	measure floor "sqlite3 $f 'SELECT start,end,deviceId,streamId,demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start' >/dev/null"
	measure conv "nsys2ev -q -o /dev/null $f"
	rss+=("$conv_rss")
	echo "| sqlite3 floor | kernel query ORDER BY start | $n kernels | $floor_wall | $(rate "$n" "$floor_wall" rows) | $floor_rss |"
	echo "| nsys2ev | convert, 2 ranks | $n kernels | $conv_wall | $(rate "$n" "$conv_wall" rows) | $conv_rss |"
	awk -v a="$conv_wall" -v b="$floor_wall" -v n="$n" 'BEGIN { printf "nsys2ev/floor time ratio at %s kernels: %.2f\n", n, a / (b > 0 ? b : 0.001) }' >&2
done
for it in $iters; do
	out="$d/it$it"
	[ -s "$out/nsys_nid000001.sqlite" ] || python3 "$gen" --iters "$it" "$out" >/dev/null
	rows=$(for f in "$out"/*.sqlite; do
		sqlite3 "$f" 'SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) + (SELECT count(*) FROM NVTX_EVENTS) +
			(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) +
			(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)'
	done | awk '{ s += $1 } END { print s }')
	measure floor "for f in $out/*.sqlite; do sqlite3 \$f 'SELECT start,end,text FROM NVTX_EVENTS ORDER BY start' >/dev/null; sqlite3 \$f 'SELECT start,end,demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start' >/dev/null; done"
	measure conv "nsys2ev -q -o /dev/null $out"
	rss+=("$conv_rss")
	echo "| sqlite3 floor | NVTX + kernel queries ORDER BY start | $it iterations, 2 files | $floor_wall | $(rate "$rows" "$floor_wall" rows) | $floor_rss |"
	echo "| nsys2ev | convert, annotated NCCL, 4 ranks | $it iterations, $rows rows | $conv_wall | $(rate "$rows" "$conv_wall" rows) | $conv_rss |"
	awk -v a="$conv_wall" -v b="$floor_wall" -v n="$it" 'BEGIN { printf "nsys2ev/floor time ratio at %s iterations: %.2f\n", n, a / (b > 0 ? b : 0.001) }' >&2
done
awk -v a="${rss[0]}" -v b="${rss[1]}" -v c="${rss[2]}" -v e="${rss[3]}" 'BEGIN {
	printf "nsys2ev peak RSS at 10x / 1x input: kernels %.2f (%s -> %s MiB), NCCL mix %.2f (%s -> %s MiB)\n", b / a, a, b, e / c, c, e }' >&2
