#!/usr/bin/env bash
# kineto2ev: MB/s and peak RSS converting one rank's generated Kineto trace
# at 1x (50 MB) and 10x (500 MB) of JSON, against the floors of `cat`,
# `gzip -dc` (same JSON gzipped) and Python's json.load on the same files.
# Flat RSS from 1x to 10x is the streaming promise.  BENCH_SMALL=1 runs at
# 1/10 of the sizes (a quick check of the script).
# shellcheck disable=SC2154 # measure sets <var>_wall and <var>_rss
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/kineto2ev"
mkdir -p "$d"
unit=50
[ -z "${BENCH_SMALL:-}" ] || unit=5
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s <= 0) s = 0.001; printf "%.1f MB/s", b / s / 1e6 }'; }
for mult in 1 10; do
	mb=$((unit * mult))
	f="$d/k${mb}m/rank3/trace.json"
	[ -s "$f" ] || gen-kineto -q --ranks 8 --only 3 --size "${mb}M" --seed 12 "$d/k${mb}m"
	[ -s "$f.gz" ] || gzip -1 -c "$f" >"$f.gz"
	bytes=$(stat -c %s "$f")
	events=$(kineto2ev -q "$f" | tail -n 1 | awk '{print $2}')
	measure conv "kineto2ev -q -o /dev/null $f"
	measure cat "cat $f"
	measure gz "gzip -dc $f.gz"
	measure py "python3 -c 'import json, sys; json.load(open(sys.argv[1]))' $f"
	measure convgz "kineto2ev -q -o /dev/null $f.gz"
	# The time-order buffer (-S, 256M by default) holds the records until it
	# spills; with a small one what remains is the link tables.
	measure small "kineto2ev -q -S 16M -o /dev/null $f"
	echo "| kineto2ev | 1 rank, ${mult}x | $(mib "$bytes") JSON, $events records | $conv_wall | $(mbps "$bytes" "$conv_wall"), $(rate "$events" "$conv_wall" events) | $conv_rss |"
	echo "| kineto2ev | 1 rank, ${mult}x, .json.gz input | $(mib "$bytes") JSON | $convgz_wall | $(mbps "$bytes" "$convgz_wall") | $convgz_rss |"
	echo "| kineto2ev | 1 rank, ${mult}x, -S 16M | $(mib "$bytes") JSON | $small_wall | $(mbps "$bytes" "$small_wall") | $small_rss |"
	echo "| cat (floor) | same JSON | $(mib "$bytes") | $cat_wall | $(mbps "$bytes" "$cat_wall") | $cat_rss |"
	echo "| gzip -dc (floor) | same JSON, gzip -1 | $(mib "$bytes") | $gz_wall | $(mbps "$bytes" "$gz_wall") | $gz_rss |"
	echo "| python3 json.load (floor) | same JSON | $(mib "$bytes") | $py_wall | $(mbps "$bytes" "$py_wall") | $py_rss |"
	awk -v a="$conv_wall" -v p="$py_wall" -v r="$conv_rss" -v q="$py_rss" -v m="$mult" 'BEGIN {
		if (a <= 0) a = 0.01
		printf "| kineto2ev | %dx: speed vs json.load, RSS vs json.load | | %.1fx faster | | %.2fx the RAM |\n", m, p / a, r / (q > 0 ? q : 1) }'
done
