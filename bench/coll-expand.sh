#!/usr/bin/env bash
# coll-expand: messages/s for a 64-rank stream of N collectives of mixed
# sizes, kinds and protocols, and peak RSS at N and 10 N collectives (must
# stay flat: memory does not grow with the number of events).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/coll-expand"
mkdir -p "$d"
for n in 1000 10000; do
	gen_colls "$n" "$d/c$n.ev"
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
