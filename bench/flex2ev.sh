#!/usr/bin/env bash
# flex2ev: MB/s and peak RSS converting a generated 8-rank AIU Flex trace
# (tests/gen/gen-flex.py: compute, DMA and a chain AllReduce per iteration,
# skewed rank clocks) of 256 MiB and 1 GiB, and flex-stats summary on the
# result.  Flat RSS from 256 MiB to 1 GiB is the streaming promise: memory
# is the three time-ordering buffers (-S each) plus tables per rank,
# thread and CollGroup.  BENCH_SMALL=1 runs at 1/16 of the sizes.
# shellcheck disable=SC2154 # measure sets <var>_wall and <var>_rss
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
d="$BENCH_DIR/flex2ev"
mkdir -p "$d"
unit=256
[ -z "${BENCH_SMALL:-}" ] || unit=16
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s <= 0) s = 0.001; printf "%.1f MB/s", b / s / 1e6 }'; }
for mult in 1 4; do
	mb=$((unit * mult))
	f="$d/flex8_${mb}m.json"
	[ -s "$f" ] || python3 "$root/tests/gen/gen-flex.py" --ranks 8 --seed 21 --size $((mb * 1048576)) --truth "$f.truth" -o "$f"
	bytes=$(stat -c %s "$f")
	events=$(awk '$1 == "pairs" { print 2 * $2 }' "$f.truth")
	measure conv "flex2ev -q -o /dev/null $f"
	measure small "flex2ev -q -S 64M -o $d/out.ev $f"
	measure stats "flex-stats summary -q -o /dev/null $d/out.ev"
	# json.load (what acelyzer's ingest does) only at the small size: at
	# 1 GiB it needs several GiB of a shared machine.
	[ "$mult" = 1 ] && measure py "python3 -c 'import json, sys; json.load(open(sys.argv[1]))' $f"
	echo "| flex2ev | 8 ranks, $(mib "$bytes") | $(mib "$bytes") JSON, $events B/E events | $conv_wall | $(mbps "$bytes" "$conv_wall"), $(rate "$events" "$conv_wall" events) | $conv_rss |"
	echo "| flex2ev | 8 ranks, $(mib "$bytes"), -S 64M | $(mib "$bytes") JSON | $small_wall | $(mbps "$bytes" "$small_wall") | $small_rss |"
	echo "| flex-stats summary | its ev stream | $(mib "$(stat -c %s "$d/out.ev")") ev | $stats_wall | | $stats_rss |"
	[ "$mult" = 1 ] && echo "| python3 json.load (floor) | same JSON | $(mib "$bytes") | $py_wall | $(mbps "$bytes" "$py_wall") | $py_rss |"
	rm -f "$d/out.ev"
done
