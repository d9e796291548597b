#!/usr/bin/env bash
# ev2goal: GOAL text lines/s and binary ops/s on the expansion of a 64-rank
# stream of N collectives; peak RSS at N and 10 N collectives (piped from
# coll-expand, so only ev2goal is measured: it must stay flat); and the
# nsys2goal pipeline end to end on a generated export of 64 GPUs (8 nodes x
# 8) and about 1000 collectives.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
m_wall="" m_rss="" # set by measure (lib.sh)
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$root/pipelines:$PATH"
d="$BENCH_DIR/ev2goal"
mkdir -p "$d"
n=30
gen_colls "$n" "$d/c$n.ev"
gen_colls $((n * 10)) "$d/c$((n * 10)).ev"
x="$d/x$n.ev"
[ -s "$x" ] || coll-expand -q --only-comm -o "$x" "$d/c$n.ev"
ev2goal -q --stats="$d/stats" -o "$d/x.goal" "$x"
lines=$(wc -l <"$d/x.goal")
ops=$(awk -F'\t' '$1 == "ops" { print $2 }' "$d/stats")
recs=$(ev-view -M -H -c type "$x" | wc -l)
rm -f "$d/x.goal"
measure m "ev2goal -q -o /dev/null $x"
echo "| ev2goal | text, 64 ranks, $n ring AR/AG/RS | $recs records, $lines lines | $m_wall | $(rate "$lines" "$m_wall" lines) | $m_rss |"
measure m "ev2goal -q --binary -o /dev/null $x"
echo "| ev2goal | binary, same input | $recs records, $ops ops | $m_wall | $(rate "$ops" "$m_wall" ops) | $m_rss |"
# Peak RSS of ev2goal alone at 1x and 10x, fed by coll-expand.
for k in "$n" $((n * 10)); do
	f=$(mktemp)
	coll-expand -q --only-comm "$d/c$k.ev" | /usr/bin/time -f '%e %M' -o "$f" ev2goal -q --stats="$d/stats$k" -o /dev/null
	read -r w r <"$f"
	rm -f "$f"
	l=$(awk -F'\t' '$1 == "lines" { print $2 }' "$d/stats$k")
	echo "| ev2goal | text from a pipe, $k collectives | $l lines | $w | $(rate "$l" "$w" lines) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
	f=$(mktemp)
	coll-expand -q --only-comm "$d/c$k.ev" | /usr/bin/time -f '%e %M' -o "$f" ev2goal -q --binary -o /dev/null
	read -r w r <"$f"
	rm -f "$f"
	echo "| ev2goal | binary from a pipe, $k collectives | $l lines | $w | - | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
done
# End to end: 8 nodes x 8 GPUs, 143 iterations of 7 NCCL operations.
nsys="$d/nsys64"
[ -d "$nsys" ] || python3 "$root/tests/gen/gen-nsys.py" --nodes 8 --gpus 8 --iters 143 "$nsys" >/dev/null
f=$(mktemp)
/usr/bin/time -f '%e %M' -o "$f" nsys2goal -q -i "$nsys" -o "$d/g64"
read -r w r <"$f"
rm -f "$f"
l=$(awk -F'\t' '$1 == "lines" { print $2 }' "$d/g64/stats.tsv")
c=$(python3 - "$nsys" <<'EOF'
import glob, sqlite3, sys
n = 0
for p in glob.glob(sys.argv[1] + "/*.sqlite"):
    db = sqlite3.connect(p)
    n += db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON k.demangledName = s.id WHERE s.value LIKE 'nccl%'").fetchone()[0]
print(n // 64)
EOF
)
rm -rf "$d/g64"
echo "| nsys2goal | 64 GPUs (8x8), annotated, $c NCCL kernels per GPU | $l GOAL lines | $w | $(rate "$l" "$w" lines) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
