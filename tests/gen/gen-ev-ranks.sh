#!/usr/bin/env bash
# gen-ev-ranks.sh DIR RANKS ITERS [SEED] [MAX_OFFSET_NS] [MAX_DRIFT_PPM]
# Writes DIR/rank<r>.ev: per rank and iteration a GEMM kernel and an
# AllReduce that ends at the same true instant on every rank, seen through
# a rank clock with a known offset and drift (DIR/truth.tsv: rank, offset_ns,
# drift_ppm; the clock is local = true + offset + drift * (true - T0), T0 the
# true time of the first iteration).  Seeded and reproducible; used by tests
# and benchmarks.
#
# Environment (all optional):
#   GEN_PERIOD_NS  true time between iterations [200000]; 1000000000 with
#                  ITERS=600 is a 10-minute run
#   GEN_UNIX=1     Unix-epoch times (1.7e18 ns) instead of times near 1 s,
#                  to catch precision lost in doubles
#   GEN_JITTER_NS  each rank sees each end up to this much late [0]
#   GEN_ANCHOR     coll (AllReduce records, comm 77) [default], p2p (a ring
#                  of send/recv pairs, comm 78), or kernel (NCCL kernels
#                  only, no coll records: older PyTorch traces)
set -euo pipefail
dir="$1" ranks="$2" iters="$3" seed="${4:-1}" maxoff="${5:-0}" maxdrift="${6:-0}"
period="${GEN_PERIOD_NS:-200000}" unix="${GEN_UNIX:-0}" jitter="${GEN_JITTER_NS:-0}" anchor="${GEN_ANCHOR:-coll}"
case "$anchor" in coll | p2p | kernel) ;; *) echo "gen-ev-ranks.sh: GEN_ANCHOR: coll, p2p or kernel" >&2; exit 2 ;; esac
mkdir -p "$dir"
awk -v ranks="$ranks" -v seed="$seed" -v maxoff="$maxoff" -v maxdrift="$maxdrift" 'BEGIN {
	srand(seed); OFS = "\t"
	for (r = 0; r < ranks; r++) {
		off = (r == 0) ? 0 : int((rand() * 2 - 1) * maxoff)
		drift = (r == 0) ? 0 : (rand() * 2 - 1) * maxdrift
		printf "%d\t%.0f\t%.6f\n", r, off, drift
	}
}' >"$dir/truth.tsv"
while IFS=$'\t' read -r r off drift; do
	awk -v r="$r" -v off="$off" -v drift="$drift" -v iters="$iters" -v seed="$seed" -v ranks="$ranks" \
		-v period="$period" -v unix="$unix" -v jitter="$jitter" -v anchor="$anchor" '
	# Times are kept below 1e12 ns in awk (exact in doubles) and printed
	# with %.0f (mawk clamps %d to 32 bits); with GEN_UNIX the digits of
	# 1759300000 s are put in front as text.
	function ts(t) { return unix ? sprintf("1759300%012.0f", t) : sprintf("%.0f", t) }
	function n(v) { return sprintf("%.0f", v) }
	function local(t) { return t + off + int(drift * (t - T0) / 1e6) }
	BEGIN {
		srand(seed * 1000 + r); OFS = "\t"
		T0 = unix ? 10000000000 : 1000000000
		if (anchor == "p2p")
			print "#comm 78 nranks=" ranks
		else
			print "#comm 77 nranks=" ranks
		print "#rank " r " world_size=" ranks
		print "type", "op", "rank", "stream", "ts", "dur", "bytes", "name", "comm", "seq", "peer"
		for (i = 0; i < iters; i++) {
			base = T0 + i * period                  # true time of the iteration
			gdur = int(period / 4) + int(rand() * period / 10)
			end = base + int(period * 3 / 4)        # the communication ends together
			cdur = int(period / 5) + int(rand() * period / 7)
			je = end + (jitter ? int(rand() * jitter) : 0)
			g0 = base + int(rand() * 1000); c0 = je - cdur
			lg = local(g0); lc = local(c0); le = local(je)
			print "kernel", "gemm", r, 7, ts(lg), n(gdur), 0, "Cijk_gemm_" (i % 3), 0, 0, -1
			if (anchor == "coll")
				print "coll", "allreduce", r, 4, ts(lc), n(le - lc), 1048576, "ncclDevKernel_Generic_1", 77, i, -1
			else if (anchor == "kernel")
				print "kernel", "comm", r, 4, ts(lc), n(le - lc), 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 0, -1
			else {
				# Ring: send to r+1 and receive from r-1, both ending at the same instant.
				to = (r + 1) % ranks; from = (r + ranks - 1) % ranks
				print "p2p", "send", r, 4, ts(lc), n(le - lc), 65536, "ncclDevKernel_SendRecv", 78, i, to
				print "p2p", "recv", r, 5, ts(lc), n(le - lc), 65536, "ncclDevKernel_SendRecv", 78, i, from
			}
		}
	}' | ev-view --pack -o "$dir/rank$r.ev"
done <"$dir/truth.tsv"
