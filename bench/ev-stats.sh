#!/usr/bin/env bash
# ev-stats timeline and ev-overlap throughput (target >= 10 M events/s) and
# peak RSS on 5 M and 50 M events (1x, 10x); peak RSS of the other
# subcommands at 1x and 10x (target <= 1.2x) on a stream with op signatures
# and matched collectives; time at 1x and 10x distinct kernel names and
# collectives (linear: about 10x, not 100x); then end to end, kineto2ev |
# ev-stats timeline on 8 ranks of generated Kineto JSON, against TraceLens's
# published ~3 MB/s and 13-19x the trace size in RAM.  BENCH_SMALL=1 runs at
# 1/10 of every size.
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
# once VAR CMD: one run, VAR_wall (s) and VAR_rss (MiB).
once() {
	local tf w r
	tf=$(mktemp)
	/usr/bin/time -f '%e %M' -o "$tf" bash -c "$2" >/dev/null
	read -r w r <"$tf"
	rm -f "$tf"
	printf -v "${1}_wall" '%s' "$w"
	printf -v "${1}_rss" '%s' "$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')"
}
gen_full() { # gen_full N FILE: 8 ranks; GEMMs with op signatures and
	# instance ids, NCCL kernels, and allreduces on one 8-rank communicator.
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN { OFS = "\t"
		print "#ev 1.0 96 clock=ns origin=trace"; print "#comm 5 nranks=8 ranks=0,1,2,3,4,5,6,7"
		print "type", "op", "rank", "stream", "ts", "dur", "bytes", "name", "sig", "step", "comm", "seq", "aux", "dtype"
		for (i = 0; i < n; i++) {
			r = i % 8; s = int(i / 8); t = s * 1000 + r; k = s % 4
			if (k < 2) printf "kernel\tgemm\t%d\t7\t%.0f\t%d\t0\tCijk_Alik_Bljk_MT128x128x32_%d\taten::mm dims=[[%d,64],[64,64]]\t%d\t0\t0\t0\tunknown\n", r, t, 700 + (s * 7 + r) % 90, s % 50, s % 50 + 1, s
			else if (k == 2) printf "kernel\tcomm\t%d\t20\t%.0f\t2300\t0\tncclDevKernel_AllReduce_Sum_bf16_RING_LL\t\t0\t0\t0\t0\tunknown\n", r, t
			else printf "coll\tallreduce\t%d\t20\t%.0f\t%d\t%d\t\t\t0\t5\t%d\t8\tbfloat16\n", r, t, 2000 + r * 10 + s % 7, 1048576 * (1 + s % 3), s
		} }' | ev-view --pack -o "$2"
}
n1=$((unit / 2)) # 2.5 M and 25 M events (0.25 M and 2.5 M with BENCH_SMALL)
gen_full "$n1" "$d/f1.ev"
gen_full $((n1 * 10)) "$d/f10.ev"
for sub in kernels categories ops variance coll "coll --table=stragglers"; do
	once a "ev-stats $sub -q -o /dev/null $d/f1.ev"
	once b "ev-stats $sub -q -o /dev/null $d/f10.ev"
	awk -v s="$sub" -v n="$n1" -v a="$a_wall" -v b="$b_wall" -v ra="$a_rss" -v rb="$b_rss" 'BEGIN {
		if (b <= 0) b = 0.001
		printf "| ev-stats | %s, 1x / 10x (RSS 10x/1x %.2f) | %d / %d events | %s / %s | %.2f M events/s at 10x | %s / %s |\n",
			s, rb / ra, n, n * 10, a, b, n * 10 / b / 1e6, ra, rb }'
done
# Scaling in distinct keys: 1x and 10x distinct kernel names (one kernel
# each), and 1x and 10x collectives on 64 ranks.
names() { # names N FILE
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN { OFS = "\t"; print "type", "ts", "dur", "name"
		for (i = 0; i < n; i++) printf "kernel\t%.0f\t100\tkernel_%d\n", i * 200, i }' | ev-view --pack -o "$2" # %.0f: mawk's %d stops at 2^31
}
k1=$((unit / 50)) # 100 k names (10 k with BENCH_SMALL)
names "$k1" "$d/n1.ev"
names $((k1 * 10)) "$d/n10.ev"
once a "ev-stats kernels -q -o /dev/null $d/n1.ev"
once b "ev-stats kernels -q -o /dev/null $d/n10.ev"
echo "| ev-stats | kernels, $k1 / $((k1 * 10)) distinct names (time 10x/1x $(awk -v a="$a_wall" -v b="$b_wall" 'BEGIN { if (a <= 0) a = 0.01; printf "%.1f", b / a }'); linear = 10) | one kernel each | $a_wall / $b_wall | | $a_rss / $b_rss |"
c1=$((unit / 500)) # 10 k collectives x 64 ranks (1 k with BENCH_SMALL)
gen_colls "$c1" "$d/c1.ev"
gen_colls $((c1 * 10)) "$d/c10.ev"
once a "ev-stats coll -q -o /dev/null $d/c1.ev"
once b "ev-stats coll -q -o /dev/null $d/c10.ev"
echo "| ev-stats | coll, $c1 / $((c1 * 10)) collectives x 64 ranks (time 10x/1x $(awk -v a="$a_wall" -v b="$b_wall" 'BEGIN { if (a <= 0) a = 0.01; printf "%.1f", b / a }'); linear = 10) | $((c1 * 64)) / $((c1 * 640)) records | $a_wall / $b_wall | $(rate $((c1 * 640)) "$b_wall" records) | $a_rss / $b_rss |"
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
