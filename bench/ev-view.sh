#!/usr/bin/env bash
# ev-view pass-through (ev -> ev) throughput and peak RSS at 1 M and 10 M
# records, and a 3-stage ev-view pipeline against cat | cat | cat (the two
# measured in turn, medians of 5 rounds).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/ev-view"
mkdir -p "$d"
gen() { # gen N FILE: N kernel records over 8 ranks, 500 distinct names
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN { OFS = "\t"; print "type", "op", "rank", "stream", "ts", "dur", "bytes", "name", "comm", "seq";
		for (i = 0; i < n; i++) print "kernel", "gemm", i % 8, i % 4, i * 10, 5 + i % 97, i * 3, "kern_" (i % 500), 12345, i }' |
		ev-view --pack -o "$2"
}
small=$(scale 1000000)
big=$(scale 10000000)
sl=$(count_label "$small")
bl=$(count_label "$big")
gen "$small" "$d/$sl.ev"
gen "$big" "$d/$bl.ev"
for n in "$sl" "$bl"; do
	f="$d/$n.ev"
	recs=$(tail -n 1 "$f" | awk '{print $2}')
	bytes=$(stat -c %s "$f")
	measure r "ev-view --ev $f"
	echo "| ev-view | ev -> ev pass-through | $n records ($(mib "$bytes")) | $r_wall | $(rate "$recs" "$r_wall" events), $(rate "$bytes" "$r_wall" B) | $r_rss |"
	measure t "ev-view $f"
	echo "| ev-view | ev -> TSV | $n records | $t_wall | $(rate "$recs" "$t_wall" events) | $t_rss |"
done
f="$d/$bl.ev"
recs=$(tail -n 1 "$f" | awk '{print $2}')
imeasure p "ev-view --ev $f | ev-view --ev | ev-view --ev" c "cat $f | cat | cat"
echo "| ev-view | 3-stage ev-view pipeline | $bl records | $p_wall | $(rate "$recs" "$p_wall" events) | $p_rss |"
echo "| cat (floor) | cat \| cat \| cat | $bl records | $c_wall | $(rate "$recs" "$c_wall" events) | $c_rss |"
awk -v a="$p_wall" -v b="$c_wall" -v n="$bl" 'BEGIN { if (b <= 0) b = 0.01; printf "| ev-view | pipeline / cat ratio | %s records | %.2fx | | |\n", n, a / b }'
