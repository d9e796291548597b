#!/usr/bin/env bash
# gen-ev-ranks.sh DIR RANKS ITERS [SEED] [MAX_OFFSET_NS] [MAX_DRIFT_PPM]
# Writes DIR/rank<r>.ev: per rank and iteration a GEMM kernel and an
# AllReduce that ends at the same true instant on every rank, seen through
# a rank clock with a known offset and drift (DIR/truth.tsv: rank, offset_ns,
# drift_ppm).  Seeded and reproducible; used by tests and benchmarks.
set -euo pipefail
dir="$1" ranks="$2" iters="$3" seed="${4:-1}" maxoff="${5:-0}" maxdrift="${6:-0}"
mkdir -p "$dir"
awk -v ranks="$ranks" -v seed="$seed" -v maxoff="$maxoff" -v maxdrift="$maxdrift" 'BEGIN {
	srand(seed); OFS = "\t"
	for (r = 0; r < ranks; r++) {
		off = (r == 0) ? 0 : int((rand() * 2 - 1) * maxoff)
		drift = (r == 0) ? 0 : (rand() * 2 - 1) * maxdrift
		printf "%d\t%d\t%.6f\n", r, off, drift
	}
}' >"$dir/truth.tsv"
while IFS=$'\t' read -r r off drift; do
	awk -v r="$r" -v off="$off" -v drift="$drift" -v iters="$iters" -v seed="$seed" -v ranks="$ranks" 'BEGIN {
		srand(seed * 1000 + r); OFS = "\t"
		print "#comm 77 nranks=" ranks
		print "type", "op", "rank", "stream", "ts", "dur", "bytes", "name", "comm", "seq"
		for (i = 0; i < iters; i++) {
			base = 1000000000 + i * 200000          # true time of the iteration
			gdur = 50000 + int(rand() * 20000)
			end = base + 150000                     # the collective ends together
			cdur = 40000 + int(rand() * 30000)
			# A rank clock: local = true + off + drift * (true - 1e9) / 1e6
			g0 = base + int(rand() * 1000); c0 = end - cdur
			lg = g0 + off + int(drift * (g0 - 1000000000) / 1e6)
			lc = c0 + off + int(drift * (c0 - 1000000000) / 1e6)
			le = end + off + int(drift * (end - 1000000000) / 1e6)
			print "kernel", "gemm", r, 7, lg, gdur, 0, "Cijk_gemm_" (i % 3), 0, 0
			print "coll", "allreduce", r, 4, lc, le - lc, 1048576, "ncclDevKernel_Generic_1", 77, i
		}
	}' | ev-view --pack -o "$dir/rank$r.ev"
done <"$dir/truth.tsv"
