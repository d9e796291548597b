#!/usr/bin/env bash
# nsys2ev: rows/s on generated exports with 0.5 M and 5 M kernels against the
# floor of SQLite alone (the kernel query ORDER BY start), and peak RSS at
# both sizes (must stay flat: streaming, constant memory).
# shellcheck disable=SC2154  # measure() sets <var>_wall and <var>_rss
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/nsys2ev"
gen="$(dirname "$0")/../tests/gen/gen-nsys.py"
mkdir -p "$d"
for n in 500000 5000000; do
	out="$d/k$n"
	[ -s "$out/nsys_nid000000.sqlite" ] || python3 "$gen" --gpus 2 --bench-kernels "$n" "$out" >/dev/null
	f="$out/nsys_nid000000.sqlite"
	measure floor "sqlite3 $f 'SELECT start,end,deviceId,streamId,demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start' >/dev/null"
	measure conv "nsys2ev -q -o /dev/null $f"
	echo "| sqlite3 floor | kernel query ORDER BY start | $n kernels | $floor_wall | $(rate "$n" "$floor_wall" rows) | $floor_rss |"
	echo "| nsys2ev | convert, 2 ranks | $n kernels | $conv_wall | $(rate "$n" "$conv_wall" rows) | $conv_rss |"
	awk -v a="$conv_wall" -v b="$floor_wall" 'BEGIN { printf "nsys2ev/floor time ratio at %s kernels: %.2f\n", "'"$n"'", a / (b > 0 ? b : 0.001) }' >&2
done
