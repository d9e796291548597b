#!/usr/bin/env bash
# nsys2goal against ATLAHS V2, the generator it replaces, on the same
# export in the same run (issue 43: nsys2goal >= 50x ATLAHS V2):
#   nsys2goal -m           with the NPKit summaries of V2's checkout
#   ATLAHS V2 main.py -m -c (sequential: without -p, so without Dask)
# The export: tests/gen/gen-nsys.py --flavour annotated --nodes 8 --gpus 4
# --iters $ATLAHS_ITERS [40] (7 NCCL operations per iteration; V2 takes
# about 0.85 CPU s per iteration, so 120 iterations are minutes a round),
# files nsys_nid<N>.sqlite, the names V2 reads the node from.  5 rounds,
# each running both (imeasure): median wall with the rounds' min-max, median
# CPU seconds (user+system, every process), median peak RSS (the largest
# process), the GOAL lines each wrote, and the ratio of the medians.
# ATLAHS_DIR: a checkout of https://github.com/Yanksi/nccl_generator_v2
# (spcl/atlahs holds it in goal_gen/ai/nccl_goal_generator); it runs on
# $BENCH_PYTHON with Debian's python3-pandas, -numpy, -scipy, -numba and
# -tqdm, through bench/atlahs-v2.py, which adds Reduce to its collective
# label tables in memory (it says why) and changes nothing else.
# BENCH_SMALL=1: 4 iterations.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$root/pipelines:$PATH"
v2="${ATLAHS_DIR:-}"
if [ -z "$v2" ] || [ ! -f "$v2/main.py" ] || [ ! -f "$v2/nsys_events_common.py" ]; then
	echo "| ATLAHS V2 | skipped: set ATLAHS_DIR to a nccl_generator_v2 checkout | | | | |"
	exit 0
fi
mods="pandas, numpy, scipy, numba, tqdm"
if ! "$BENCH_PYTHON" -c "import $mods" 2>/dev/null; then
	echo "| ATLAHS V2 | skipped: $BENCH_PYTHON lacks one of: $mods | | | | |"
	exit 0
fi
npk="$v2/npkit_benchmark_results/clariden"
iters="${ATLAHS_ITERS:-40}"
[ -z "${BENCH_SMALL:-}" ] || iters=4
d="$BENCH_DIR/atlahs"
in="$d/nsys8x4x$iters"
mkdir -p "$d"
[ -s "$in/nsys_nid000007.sqlite" ] ||
	"$BENCH_PYTHON" "$root/tests/gen/gen-nsys.py" --flavour annotated --nodes 8 --gpus 4 --iters "$iters" "$in" >/dev/null
mb=$(mib "$(cat "$in"/*.sqlite | wc -c)")
what="8 nodes x 4 GPUs x $((iters * 7)) NCCL ops (--iters $iters)"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
imeasure ng "rm -rf '$d/ng' && nsys2goal -q -m -i '$in' -o '$d/ng' -s '$npk/npkit_data_summary_Simple.json' -l '$npk/npkit_data_summary_LL.json' 2>'$d/nsys2goal.log'" \
	v2 "rm -rf '$d/v2' && '$BENCH_PYTHON' '$root/bench/atlahs-v2.py' '$v2' -m -c -i '$in' -o '$d/v2' -s '$npk/npkit_data_summary_Simple.json' -l '$npk/npkit_data_summary_LL.json' 2>'$d/atlahs.log'"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# V2 matches a collective to its kernel markers or logs that it could not
# and leaves the collective out, exiting 0: such a schedule is no match.
miss=$(grep -c 'not found in coll_kernels' "$d/atlahs.log" || true)
if [ "$miss" != 0 ]; then
	echo "| ATLAHS V2 | FAILED: $miss collectives without kernel markers ($d/atlahs.log) | | | | |"
	exit 1
fi
lines() { awk 'NR == 1 { n = $2 } END { printf "%.2f M GOAL lines, %d ranks", NR / 1e6, n }' "$1"; }
times() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1fx", a / b }'; }
echo "| nsys2goal -m | $what | $mb SQLite | $ng_wall ($ng_range) | CPU $ng_cpu s; $(lines "$d/ng/output.goal"); $(times "$v2_wall" "$ng_wall") faster than ATLAHS V2 (CPU $(times "$v2_cpu" "$ng_cpu")) | $ng_rss (largest stage) |"
echo "| ATLAHS V2 main.py -m -c | same export, sequential | $mb SQLite | $v2_wall ($v2_range) | CPU $v2_cpu s; $(lines "$d/v2/output.goal") | $v2_rss |"
echo "| (load average) | ATLAHS rows: before $load0, after $load1 | | | | |"
rm -rf "$d/ng" "$d/v2"
