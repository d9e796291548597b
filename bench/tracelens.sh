#!/usr/bin/env bash
# TraceLens's per-rank performance report against evkit's, measured in the
# same run on the real Kineto traces of ../shared/data (HTA's test traces):
#   TraceLens  generate_perf_report_pytorch(trace, output_csvs_dir=...)
#   evkit      process-traces --xlsx: the same sheets (gpu_timeline,
#              kernel and category summaries, ops, collectives, short
#              kernels) in one workbook, plus the Perfetto timeline and
#              the per-rank CSVs
# TraceLens is not a Debian package: set TRACELENS_DIR to a checkout of
# https://github.com/AMD-AGI/TraceLens; it runs on $BENCH_PYTHON with
# Debian's python3-pandas and python3-openpyxl.  Without them the rows are
# skipped, saying why.  BENCH_SMALL=1: the two smaller traces.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$root/pipelines:$PATH"
d="$BENCH_DIR/tracelens"
shared="$root/../shared/data/kineto/hta"
tl="${TRACELENS_DIR:-}"
if [ -z "$tl" ] || [ ! -d "$tl/TraceLens" ]; then
	echo "| TraceLens | skipped: TRACELENS_DIR is not set to a TraceLens checkout | | | | |"
	exit 0
fi
if ! "$BENCH_PYTHON" -c 'import pandas, openpyxl' 2>/dev/null; then
	echo "| TraceLens | skipped: $BENCH_PYTHON has no pandas/openpyxl (apt-get install python3-pandas python3-openpyxl) | | | | |"
	exit 0
fi
if [ ! -d "$shared" ]; then
	echo "| TraceLens | skipped: no ../shared/data | | | | |"
	exit 0
fi
mkdir -p "$d"
real=(nccl_parser_config/nccl_data ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace
      negative_queue_length_values_check/rank0 df_index_resolver/df_index_resolver)
[ -z "${BENCH_SMALL:-}" ] || real=("${real[@]:0:2}")
for t in "${real[@]}"; do
	f="$d/$(basename "$(dirname "$t")").json"
	[ -s "$f" ] || gzip -dc "$shared/$t.json.gz" >"$f"
	mb=$(mib "$(stat -c %s "$f")")
	measure tl "rm -rf '$d/tl' && PYTHONPATH='$tl' '$BENCH_PYTHON' -c 'import sys
from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
generate_perf_report_pytorch(sys.argv[1], output_csvs_dir=sys.argv[2])' '$f' '$d/tl' 2>'$d/tracelens.log'"
	measure ev "rm -rf '$d/ev' && process-traces -q --xlsx -o '$d/ev' '$f' 2>'$d/process-traces.log'"
	echo "| TraceLens | perf report (CSVs), hta/$t | $mb JSON | $tl_wall | | $tl_rss |"
	echo "| process-traces | --xlsx, same trace | $mb JSON | $ev_wall | $(awk -v a="$tl_wall" -v b="$ev_wall" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1fx faster than TraceLens", a / b }') | $ev_rss (largest stage) |"
done
rm -rf "$d/tl" "$d/ev"
