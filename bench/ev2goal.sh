#!/usr/bin/env bash
# ev2goal: GOAL text lines/s and binary ops/s on the expansion of a 64-rank
# stream of N collectives; peak RSS at N and 10 N collectives (piped from
# coll-expand, so only ev2goal is measured: it must stay flat); --join of
# the per-rank parts; and the nsys2goal pipeline end to end on a generated
# export of 64 GPUs (8 nodes x 8) and about 1000 collectives.
# BENCH_SMALL=1: a tenth of the input and a 2 x 2 GPU export (a quick check
# that every row still works; its rates are dominated by start-up).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$root/pipelines:$PATH"
d="$BENCH_DIR/ev2goal"
mkdir -p "$d"
n=$(scale 30)
if [ "${BENCH_SMALL:-0}" = 1 ]; then nodes=2 gpus=2 iters=10; else nodes=8 gpus=8 iters=143; fi

# stat_of FILE KEY: a value of ev2goal --stats; fails the bench when missing or 0
# (a rate of "0.00 M/s" is a broken row, not a result).
stat_of() {
	local v
	v=$(awk -F'\t' -v k="$2" '$1 == k { print $2 }' "$1")
	if [ -z "$v" ] || [ "$v" = 0 ]; then
		echo "bench/ev2goal.sh: $1: no $2 count" >&2
		exit 1
	fi
	echo "$v"
}
t_wall="" t_rss=""

gen_colls "$n" "$d/c$n.ev"
gen_colls $((n * 10)) "$d/c$((n * 10)).ev"
x="$d/x$n.ev"
[ -s "$x" ] || coll-expand -q --only-comm -o "$x" "$d/c$n.ev"
ev2goal -q --stats="$d/stats" -o "$d/x.goal" "$x"
lines=$(stat_of "$d/stats" lines)
ops=$(stat_of "$d/stats" ops)
recs=$(ev-view -M -H -c type "$x" | wc -l)
rm -f "$d/x.goal"
# Text, binary and the floor (reading the same stream and writing it back
# unchanged) measured in turn, medians of 5 rounds.  The expansion has about
# 2.8 records (ops and their DEPs) per GOAL op, so the ops/s that ev2goal
# can reach is bounded by this pass.
imeasure t "ev2goal -q -o /dev/null $x" b "ev2goal -q --binary -o /dev/null $x" f "ev-view --ev $x"
echo "| ev2goal | text, 64 ranks, $n ring AR/AG/RS | $recs records, $lines lines | $t_wall | $(rate "$lines" "$t_wall" lines) | $t_rss |"
echo "| ev2goal | binary, same input | $recs records, $ops ops | $b_wall | $(rate "$ops" "$b_wall" ops) | $b_rss |"
echo "| ev-view (floor) | ev -> ev pass-through of the same input | $recs records | $f_wall | $(rate "$recs" "$f_wall" records) | $f_rss |"
awk -v a="$b_wall" -v b="$f_wall" 'BEGIN { if (b <= 0) b = 0.001; printf "| ev2goal | binary / pass-through floor | | %.2fx | | |\n", a / b }'
# Parallel workers' parts and their join (every part checked).
rm -rf "$d/parts"
ev2goal -q --per-rank="$d/parts" "$x"
measure t "ev2goal -q --join=$d/parts -o /dev/null"
echo "| ev2goal | --join of 64 text parts | $lines lines | $t_wall | $(rate "$lines" "$t_wall" lines) | $t_rss |"
rm -rf "$d/parts"
# Peak RSS of ev2goal alone at 1x and 10x, fed by coll-expand.
for k in "$n" $((n * 10)); do
	for mode in text binary; do
		f=$(mktemp)
		b=""
		[ "$mode" = text ] || b=--binary
		t0=$(date +%s%N)
		coll-expand -q --only-comm "$d/c$k.ev" |
			/usr/bin/time -f '%M' -o "$f" ev2goal -q $b --stats="$d/stats$k" -o /dev/null
		t1=$(date +%s%N)
		w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
		r=$(tail -n 1 "$f")
		rm -f "$f"
		if [ "$mode" = text ]; then
			l=$(stat_of "$d/stats$k" lines)
			echo "| ev2goal | text from a pipe (coll-expand included), $k collectives | $l lines | $w | $(rate "$l" "$w" lines) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
		else
			o=$(stat_of "$d/stats$k" ops)
			echo "| ev2goal | binary from a pipe (coll-expand included), $k collectives | $o ops | $w | $(rate "$o" "$w" ops) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
		fi
	done
done
# End to end: nodes x GPUs, iterations of 7 NCCL operations.
nsys="$d/nsys${nodes}x$gpus"
[ -d "$nsys" ] || "$BENCH_PYTHON" "$root/tests/gen/gen-nsys.py" --nodes "$nodes" --gpus "$gpus" --iters "$iters" "$nsys" >/dev/null
f=$(mktemp)
t0=$(date +%s%N)
/usr/bin/time -f '%M' -o "$f" nsys2goal -q -i "$nsys" -o "$d/g64"
t1=$(date +%s%N)
w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
r=$(tail -n 1 "$f")
rm -f "$f"
l=$(stat_of "$d/g64/stats.tsv" lines)
c=$("$BENCH_PYTHON" - "$nsys" "$((nodes * gpus))" <<'EOF'
import glob, sqlite3, sys
n = 0
for p in glob.glob(sys.argv[1] + "/*.sqlite"):
    db = sqlite3.connect(p)
    n += db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON k.demangledName = s.id WHERE s.value LIKE 'nccl%'").fetchone()[0]
print(n // int(sys.argv[2]))
EOF
)
rm -rf "$d/g64"
echo "| nsys2goal | $((nodes * gpus)) GPUs (${nodes}x$gpus), annotated, $c NCCL kernels per GPU | $l GOAL lines | $w | $(rate "$l" "$w" lines) | $(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }') |"
