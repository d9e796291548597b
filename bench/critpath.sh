#!/usr/bin/env bash
# ev-stats critpath --table=cross (the critical path across ranks) after
# kineto2ev, on a generated 4-rank trace whose rank 2 runs a GEMM of the
# first step 20 times longer (gen-kineto --slow=2:0:3:20 --event-sync), at
# 1x and 10x the iterations.  Wall: medians of BENCH_ROUNDS (default 5)
# rounds, each running the pipeline and its floor (kineto2ev alone) in
# turn, with the rounds' min-max and the load at the start of the row.
# Peak RSS of each process alone (a pipe's /usr/bin/time shows only the
# larger): critpath holds the first step's window whatever the size, so
# its RSS stays flat; kineto2ev's grows until its sort buffer (-S, 16 MiB
# of records) fills, then its runs spill to disk.  The path must be the
# same at both sizes.  BENCH_SMALL=1: 1/10 of the iterations.
# shellcheck disable=SC2154 # imeasure sets <var>_wall, _range and _rss
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/critpath"
mkdir -p "$d"
it1=$(scale 1000) # 1000 iterations: about 378 k records, 144 MiB of JSON
rss_of() { # rss_of CMD: peak RSS of CMD in MiB
	local tf
	tf=$(mktemp)
	/usr/bin/time -f '%M' -o "$tf" bash -c "$1" >/dev/null
	awk '{ printf "%.1f", $1 / 1024 }' "$tf"
	rm -f "$tf"
}
declare -A crss
for mult in 1 10; do
	it=$((it1 * mult))
	g="$d/g$it"
	[ -s "$g/rank3/trace.json" ] || gen-kineto -q -r 4 -i "$it" -k 24 --mix allreduce:2 --slow=2:0:3:20 --event-sync "$g"
	bytes=$(cat "$g"/rank*/trace.json | wc -c)
	kineto2ev -q -o "$d/g$it.ev" "$g"/rank*/trace.json
	recs=$(grep -ac -v "^#" "$d/g$it.ev")
	load=$(cut -d' ' -f1 /proc/loadavg)
	imeasure p "kineto2ev -q $g/rank*/trace.json | ev-stats critpath -q --table=cross -o /dev/null" \
		k "kineto2ev -q -o /dev/null $g/rank*/trace.json"
	krss=$(rss_of "kineto2ev -q -o /dev/null $g/rank*/trace.json")
	crss[$mult]=$(rss_of "ev-stats critpath -q --table=cross -o /dev/null $d/g$it.ev")
	ev-stats critpath -q --table=cross -o "$d/path$mult.tsv" "$d/g$it.ev"
	rm -f "$d/g$it.ev"
	ratio=$(awk -v a="$p_wall" -v b="$k_wall" 'BEGIN { if (b <= 0) b = 0.001; printf "%.2f", a / b }')
	echo "| kineto2ev \\| ev-stats critpath --table=cross | 4 ranks, straggler, $it iterations, ${mult}x (load $load) | $recs records, $(mib "$bytes") JSON | $p_wall ($p_range) | $(rate "$recs" "$p_wall" records); ${ratio}x the floor | kineto2ev $krss, critpath ${crss[$mult]} |"
	echo "| kineto2ev (floor) | the same JSON to /dev/null | $recs records | $k_wall ($k_range) | $(rate "$recs" "$k_wall" records) | $k_rss |"
done
same=no
cmp -s "$d/path1.tsv" "$d/path10.tsv" && same=yes
awk -v a="${crss[1]}" -v b="${crss[10]}" -v s="$same" 'BEGIN {
	printf "critpath --table=cross peak RSS 10x/1x: %.2f (%s -> %s MiB); the same path at both sizes: %s\n", b / a, a, b, s }'
