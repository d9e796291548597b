#!/usr/bin/env bash
# npkit2lat: peak RSS and time on generated NPKit summaries.  A summary is
# read one top-level event object at a time and the samples of one size
# are sorted for exact percentiles, so memory follows the largest event
# object, not the file: 10x the primitives must stay flat (<= 1.2x); 10x
# the samples of every size grows, and is reported as such.
# BENCH_SMALL=1: a tenth of the samples.
# shellcheck disable=SC2154  # measure() sets <var>_wall and <var>_rss
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/npkit2lat"
mkdir -p "$d"
gen() { # gen PRIMITIVES SAMPLES_PER_SIZE FILE: 15 sizes per primitive
	[ -s "$3" ] && return 0
	awk -v np="$1" -v ns="$2" 'BEGIN {
		printf "{"
		for (p = 0; p < np; p++) {
			printf "%s\n\"NPKIT_EVENT_GPU_PRIM_%d\": {", p ? "," : "", p
			for (s = 0; s < 15; s++) {
				printf "%s\"%d\": [", s ? "," : "", 4 * 2 ^ s
				for (k = 0; k < ns; k++)
					printf "%s%d", k ? "," : "", 1500 + (k * 7919 + s * 31 + p) % 2000
				printf "]"
			}
			printf "}"
		}
		print "}" }' >"$3"
}
ns=$(scale 2000)
gen 5 "$ns" "$d/p5_Simple.json"
gen 50 "$ns" "$d/p50_Simple.json"
gen 5 $((ns * 10)) "$d/s10_Simple.json"
for c in "p5:5 primitives (1x)" "p50:50 primitives (10x)" "s10:5 primitives, 10x samples per size"; do
	f="$d/${c%%:*}_Simple.json"
	measure n "npkit2lat --require none -o /dev/null $f"
	b=$(stat -c %s "$f")
	echo "| npkit2lat | ${c#*:}, 15 sizes | $(awk -v b="$b" 'BEGIN { printf "%.1f MB", b / 1e6 }') JSON | $n_wall | $(rate "$b" "$n_wall" B) | $n_rss |"
	printf -v "rss_${c%%:*}" '%s' "$n_rss"
done
awk -v a="$rss_p5" -v b="$rss_p50" -v c="$rss_s10" 'BEGIN { if (a <= 0) a = 1
	printf "| npkit2lat | RSS 10x primitives / 1x %.2f (flat <= 1.2); 10x samples per size / 1x %.2f (exact percentiles keep one size) | | | | |\n", b / a, c / a }'
