#!/usr/bin/env bash
# ev-stats timeline and ev-overlap throughput (target >= 10 M events/s) and
# peak RSS on 5 M and 50 M events (1x, 10x); then end to end, kineto2ev |
# ev-stats timeline on 8 ranks of generated Kineto JSON, against TraceLens's
# published ~3 MB/s and 13-19x the trace size in RAM.  BENCH_SMALL=1 runs at
# 1/10 of the sizes.
# shellcheck disable=SC2154 # measure sets <var>_wall and <var>_rss
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/ev-stats"
mkdir -p "$d"
unit=5000000
[ -z "${BENCH_SMALL:-}" ] || unit=500000
gen() { # gen N FILE: 8 ranks in time order; per rank GEMMs on stream 7,
	# an NCCL kernel on stream 20 overlapping the next GEMM, a memcpy.
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN { OFS = "\t"
		print "type", "op", "rank", "stream", "ts", "dur", "bytes", "name"
		for (i = 0; i < n; i++) {
			r = i % 8; s = int(i / 8); t = s * 1000 + r; k = s % 4
			# %.0f: mawk prints integers past 2^31 in exponent form
			if (k < 2) printf "kernel\tgemm\t%d\t7\t%.0f\t%d\t0\tCijk_Alik_Bljk_MT128x128x32_%d\n", r, t, 700 + (s * 7 + r) % 90, s % 50
			else if (k == 2) printf "kernel\tcomm\t%d\t20\t%.0f\t2300\t0\tncclDevKernel_AllReduce_Sum_bf16_RING_LL\n", r, t
			else printf "memcpy\thtod\t%d\t9\t%.0f\t200\t4096\tMemcpy HtoD (Pinned -> Device)\n", r, t
		} }' | ev-view --pack -o "$2"
}
for mult in 1 10; do
	n=$((unit * mult))
	f="$d/e$n.ev"
	gen "$n" "$f"
	bytes=$(stat -c %s "$f")
	if [ "$mult" -eq 1 ]; then
		measure t "ev-stats timeline -q -o /dev/null $f"
		measure o "ev-overlap -q --summary -o /dev/null $f"
		measure c "cat $f"
	else
		# One run each at 10x (the input is several GB).
		for v in t o c; do
			case $v in
			t) cmd="ev-stats timeline -q -o /dev/null $f" ;;
			o) cmd="ev-overlap -q --summary -o /dev/null $f" ;;
			c) cmd="cat $f" ;;
			esac
			tf=$(mktemp)
			/usr/bin/time -f '%e %M' -o "$tf" bash -c "$cmd" >/dev/null
			read -r w r <"$tf"
			rm -f "$tf"
			printf -v "${v}_wall" '%s' "$w"
			printf -v "${v}_rss" '%s' "$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')"
		done
	fi
	echo "| ev-stats | timeline, 8 ranks, ${mult}x | $n events ($(mib "$bytes")) | $t_wall | $(rate "$n" "$t_wall" events) | $t_rss |"
	echo "| ev-overlap | --summary, 8 ranks, ${mult}x | $n events | $o_wall | $(rate "$n" "$o_wall" events) | $o_rss |"
	echo "| cat (floor) | same stream | $n events | $c_wall | $(rate "$n" "$c_wall" events) | $c_rss |"
done
# End to end on generated Kineto JSON: 8 ranks x (unit/100) MB.
mb=$((unit / 100000))
k="$d/kineto${mb}m"
[ -s "$k/rank7/trace.json" ] || gen-kineto -q --ranks 8 --size "${mb}M" --seed 5 "$k"
bytes=$(cat "$k"/rank*/trace.json | wc -c)
measure e "kineto2ev -q $k/rank*/trace.json | ev-stats timeline -q -o /dev/null"
# The pipeline's peak RSS is that of its two processes together: measure
# each alone (the pipe's /usr/bin/time shows only the larger one).
tf=$(mktemp)
/usr/bin/time -f '%M' -o "$tf" kineto2ev -q -o "$d/e2e.ev" "$k"/rank*/trace.json
krss=$(awk '{ printf "%.1f", $1 / 1024 }' "$tf")
/usr/bin/time -f '%M' -o "$tf" ev-stats timeline -q -o /dev/null "$d/e2e.ev"
srss=$(awk '{ printf "%.1f", $1 / 1024 }' "$tf")
rm -f "$tf" "$d/e2e.ev"
awk -v b="$bytes" -v s="$e_wall" -v k="$krss" -v t="$srss" -v mb="$mb" 'BEGIN {
	if (s <= 0) s = 0.001
	printf "| kineto2ev \\| ev-stats timeline | end to end, 8 ranks x %d MB JSON | %.0f MiB JSON | %s | %.1f MB/s (TraceLens ~3 MB/s: %.0fx) | %s + %s (%.2fx the JSON; TraceLens 13-19x) |\n",
		mb, b / 1048576, s, b / s / 1e6, b / s / 1e6 / 3, k, t, (k + t) / (b / 1048576) }'
