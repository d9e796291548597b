#!/usr/bin/env bash
# ev-merge: merge of 8 streams x N records (events/s, peak RSS at two sizes),
# an external sort of a shuffled stream within -S 64M, clock alignment of one
# 8-rank input (two passes and the sorter), and peak RSS with 256 inputs.
# BENCH_SMALL=1 divides the sizes by 10.
# shellcheck disable=SC2154 # measure sets <var>_wall and <var>_rss
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
for n in $(scale 200000) $(scale 2000000); do
	gen_ranks "$n" "$d/r$n"
	total=$((8 * n))
	measure m "ev-merge -q -o /dev/null $d/r$n/rank*.ev"
	echo "| ev-merge | merge 8 inputs | 8 x $n records | $m_wall | $(rate "$total" "$m_wall" events) | $m_rss |"
done
# External sort: 20 M records in random order, 64 MiB budget.
ns=$(scale 20000000)
s="$d/shuffled$ns.ev"
if [ ! -s "$s" ]; then
	awk -v n="$ns" 'BEGIN { srand(9); print "type\trank\tts\tname"; for (i = 0; i < n; i++) printf "kernel\t%d\t%.0f\tk%d\n", i % 8, int(rand() * 1e12), i % 100 }' |
		ev-view --pack -o "$s"
fi
f=$(mktemp)
/usr/bin/time -f '%e %M' -o "$f" ev-merge -q --sort -S 64M -o /dev/null "$s"
read -r w r <"$f"
rm -f "$f"
echo "| ev-merge | external sort, -S 64M | $(count_label "$ns") shuffled records | $w | $(rate "$ns" "$w" events) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
# Alignment: 8 ranks in one file (as merge-traces gives it), 10-minute run,
# offsets up to 2 s, 50 ppm drift; corrected records go through the sorter.
it=$(scale 60000)
a="$d/align$it"
if [ ! -s "$a/one.ev" ]; then
	GEN_PERIOD_NS=$((600000000000 / it)) GEN_UNIX=1 GEN_JITTER_NS=2000 \
		bash "$(dirname "$0")/../tests/gen/gen-ev-ranks.sh" "$a" 8 "$it" 5 2000000000 50
	ev-merge -q -o "$a/one.ev" "$a"/rank*.ev
fi
measure al "ev-merge -q --align=coll-drift -o /dev/null $a/one.ev"
echo "| ev-merge | --align=coll-drift, one 8-rank input | $((16 * it)) records | $al_wall | $(rate $((16 * it)) "$al_wall" events) | $al_rss |"
# Many inputs: 256 copies of one stream, all open at once.
m="$d/many"
if [ ! -s "$m/k255.ev" ]; then
	mkdir -p "$m"
	awk -v n="$(scale 20000)" 'BEGIN { OFS = "\t"; print "type", "rank", "ts", "dur", "name"; for (i = 0; i < n; i++) print "kernel", 0, i * 100, 50, "k" }' |
		ev-view --pack -o "$m/k0.ev"
	for i in $(seq 1 255); do cp "$m/k0.ev" "$m/k$i.ev"; done
fi
measure mi "ev-merge -q -o /dev/null $m/k*.ev"
echo "| ev-merge | 256 inputs | $((256 * $(scale 20000))) records | $mi_wall | $(rate $((256 * $(scale 20000))) "$mi_wall" events) | $mi_rss |"
