#!/usr/bin/env bash
# ev-merge: merge of 8 streams x N records (events/s, peak RSS at two sizes)
# and an external sort of a shuffled stream within -S 64M.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/ev-merge"
mkdir -p "$d"
gen_ranks() { # gen_ranks N DIR: 8 time-ordered rank streams of N records
	[ -s "$2/rank7.ev" ] && return 0
	mkdir -p "$2"
	for r in 0 1 2 3 4 5 6 7; do
		awk -v n="$1" -v r="$r" 'BEGIN { OFS = "\t"; print "type", "op", "rank", "stream", "ts", "dur", "name", "comm", "seq";
			for (i = 0; i < n; i++) print "kernel", "gemm", r, i % 4, i * 100 + r * 7, 50, "k" (i % 200), 77, i }' |
			ev-view --pack -o "$2/rank$r.ev"
	done
}
for n in 200000 2000000; do
	gen_ranks "$n" "$d/r$n"
	total=$((8 * n))
	measure m "ev-merge -q -o /dev/null $d/r$n/rank*.ev"
	echo "| ev-merge | merge 8 inputs | 8 x $n records | $m_wall | $(rate "$total" "$m_wall" events) | $m_rss |"
done
# External sort: 20 M records in random order, 64 MiB budget.
s="$d/shuffled20m.ev"
if [ ! -s "$s" ]; then
	awk 'BEGIN { srand(9); print "type\trank\tts\tname"; for (i = 0; i < 20000000; i++) printf "kernel\t%d\t%.0f\tk%d\n", i % 8, int(rand() * 1e12), i % 100 }' |
		ev-view --pack -o "$s"
fi
f=$(mktemp)
/usr/bin/time -f '%e %M' -o "$f" ev-merge -q --sort -S 64M -o /dev/null "$s"
read -r w r <"$f"
rm -f "$f"
echo "| ev-merge | external sort, -S 64M | 20M shuffled records | $w | $(rate 20000000 "$w" events) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
