#!/usr/bin/env bash
# coll-expand: messages/s for a 64-rank stream of N collectives of mixed
# sizes, kinds and protocols, and peak RSS at N and 10 N collectives (must
# stay flat: memory does not grow with the number of events).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/coll-expand"
mkdir -p "$d"
gen() { # gen NCOLL FILE: 64 ranks in one communicator, time-ordered
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN {
		OFS = "\t"
		printf "#ev 1.0 96 clock=ns origin=trace\n#meta nccl_version=2.22.3\n#comm 5 nranks=64 ranks=0"
		for (r = 1; r < 64; r++) printf ",%d", r
		printf "\n"
		for (r = 0; r < 64; r++) printf "#rank %d host=node%d\n", r, int(r / 8)
		print "type", "op", "rank", "stream", "ts", "dur", "bytes", "comm", "seq", "algo", "proto", "dtype", "channel", "aux"
		split("16384 65536 262144 1048576 4096 524288", sz, " ")
		split("allreduce allgather reducescatter allreduce", op, " ")
		split("simple ll ll128 simple", pr, " ")
		for (i = 0; i < n; i++)
			for (r = 0; r < 64; r++)
				print "coll", op[i % 4 + 1], r, 7, i * 100000 + r, 50000, sz[i % 6 + 1] * (op[i % 4 + 1] == "allreduce" ? 1 : 64),
				      5, i, "ring", pr[int(i / 4) % 4 + 1], "float32", 1 + i % 2, 64
	}' | ev-view --pack -o "$2"
}
for n in 1000 10000; do
	gen "$n" "$d/c$n.ev"
	msgs=$(coll-expand -q --only-comm "$d/c$n.ev" | ev-view -M -H -c type -t send,recv | wc -l)
	if [ "$n" -eq 1000 ]; then
		measure m "coll-expand -q --only-comm -o /dev/null $d/c$n.ev"
	else
		f=$(mktemp)
		/usr/bin/time -f '%e %M' -o "$f" coll-expand -q --only-comm -o /dev/null "$d/c$n.ev"
		read -r m_wall r <"$f"
		rm -f "$f"
		m_rss=$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')
	fi
	echo "| coll-expand | 64 ranks, mixed ring AR/AG/RS, 1-2 ch | $n collectives, $msgs SEND+RECV | $m_wall | $(rate "$msgs" "$m_wall" msgs) | $m_rss |"
done
