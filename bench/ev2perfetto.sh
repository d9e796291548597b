#!/usr/bin/env bash
# ev2perfetto: JSON export of a 4-rank stream (launch + kernel pairs, every
# 10th a collective) at 1x and 10x input: events/s, MB/s written, peak RSS.
# BENCH_SMALL=1 divides the sizes by 10.
# shellcheck disable=SC2154 # measure sets <var>_wall and <var>_rss
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/ev2perfetto"
mkdir -p "$d"
gen() { # gen N FILE: N launch/kernel pairs on 4 ranks, in time order
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN { OFS = "\t"; print "type", "op", "rank", "stream", "ts", "dur", "name", "id", "comm", "seq", "aux", "bytes";
		for (i = 0; i < n; i++) { r = i % 4; t = i * 100;
			print "api", "runtime", r, 1, t, 20, "cudaLaunchKernel", i + 1, 0, 0, 0, 0
			print "kernel", "gemm", r, 7, t + 30, 150, "Cijk_Alik_Bljk_MT128x128_" (i % 50), i + 1, 0, 0, 0, 0
			if (i % 10 == 0) print "coll", "allreduce", r, 8, t + 40, 50, "ncclDevKernel_Generic_1", 0, 5, int(i / 40), 4, 4194304 } }' |
		ev-view --pack -o "$2"
}
for n in $(scale 250000) $(scale 2500000); do
	gen "$n" "$d/in$n.ev"
	recs=$(tail -n 1 "$d/in$n.ev" | cut -d' ' -f2)
	ev2perfetto -o "$d/out.json" "$d/in$n.ev"
	bytes=$(stat -c %s "$d/out.json")
	rm -f "$d/out.json"
	measure m "ev2perfetto -q -o /dev/null $d/in$n.ev"
	echo "| ev2perfetto | JSON, flows and counters | $recs records ($(mib "$bytes") JSON) | $m_wall | $(rate "$recs" "$m_wall" events), $(awk -v b="$bytes" -v s="$m_wall" 'BEGIN { if (s <= 0) s = 0.001; printf "%.0f MB/s", b / s / 1e6 }') | $m_rss |"
	measure z "ev2perfetto -q -z -o /dev/null $d/in$n.ev"
	echo "| ev2perfetto | -z gzip | $recs records | $z_wall | $(rate "$recs" "$z_wall" events) | $z_rss |"
done
