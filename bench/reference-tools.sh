#!/usr/bin/env bash
# The Python tools our users run today, timed against evkit in the same run
# on the real Kineto traces of ../shared/data (HTA's test traces):
#   TraceLens  generate_perf_report_pytorch(trace, output_csvs_dir=...), its
#              defaults; and (output_xlsx_path=..., kernel_summary=True,
#              short_kernel_study=True), the workbook of the same sheets
#              as evkit's --tracelens one, which that row is timed against
#     evkit    ev-stats report --tracelens --xlsx TRACE.json: TraceLens's
#              sheets in its layout (gpu_timeline, ops and kernel
#              summaries, the perf-model sheets, short kernels,
#              collectives) in one workbook, from one pass, linked as
#              TraceLens links, the JSON converted in the same process;
#              the same through kineto2ev --flow-links | ev-stats report
#              --tracelens --xlsx; kineto2ev | ev-stats report --xlsx, evkit's
#              own report (the same analyses, fewer sheets: no perf models);
#              and process-traces --xlsx, which adds the Perfetto timeline
#              and the per-rank CSVs
# TraceLens's two runs and the evkit commands are measured in turn, 5 rounds
# (imeasure): medians, with the min-max of the rounds.  evkit's commands
# take tens of milliseconds: in each round one runs BENCH_REF_REPS (10)
# times in a row under one bash and time(1), and its times are divided by
# that, as bench/kineto2ev.sh does, so that the measuring's own few
# milliseconds per run (bash, time(1), date) are not counted as the
# tool's; TraceLens's and HTA's runs, seconds long, run once.
#   HTA        TraceAnalysis(trace_dir) with get_temporal_breakdown and
#              get_comm_comp_overlap
#     evkit    kineto2ev | ev-stats timeline, whose hta_* rows are those
#              two analyses (docs/ev-stats.md)
# Neither is a Debian package: set TRACELENS_DIR to a checkout of
# https://github.com/AMD-AGI/TraceLens and HTA_DIR to one of
# https://github.com/facebookresearch/HolisticTraceAnalysis.  They run on
# $BENCH_PYTHON with Debian's python3-pandas, python3-openpyxl,
# python3-tqdm (TraceLens), python3-plotly, python3-networkx and
# python3-psutil (HTA).  A tool that is missing gets one row
# saying why.  BENCH_SMALL=1: the two smaller traces; BENCH_REF_TRACES: a
# list of them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$root/pipelines:$PATH"
d="$BENCH_DIR/reference-tools"
shared="$root/../shared/data/kineto/hta"
if [ ! -d "$shared" ]; then
	echo "| TraceLens, HTA | skipped: no ../shared/data | | | | |"
	exit 0
fi
# usable NAME DIR PACKAGE MODULES VAR: the tool's checkout (DIR/PACKAGE)
# and the Python modules it needs are there, or one row says what is not.
usable() {
	if [ -z "$2" ] || [ ! -d "$2/$3" ]; then
		echo "| $1 | skipped: set $5 to a $1 checkout | | | | |"
		return 1
	fi
	if ! "$BENCH_PYTHON" -c "import $4" 2>/dev/null; then
		echo "| $1 | skipped: $BENCH_PYTHON lacks one of: $4 | | | | |"
		return 1
	fi
}
mkdir -p "$d"
real=(nccl_parser_config/nccl_data ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace
      negative_queue_length_values_check/rank0 df_index_resolver/df_index_resolver
      ../tracelens/mi300/resnet_act_checkpoint)
[ -z "${BENCH_SMALL:-}" ] || real=("${real[@]:0:2}")
# BENCH_REF_TRACES="a b": only these (paths as above), e.g. the ResNet one.
[ -z "${BENCH_REF_TRACES:-}" ] || read -r -a real <<<"$BENCH_REF_TRACES"
faster() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1fx faster than %s", a / b, n }'; }
evreps="${BENCH_REF_REPS:-10}"
reps() { echo "for _ in \$(seq $evreps); do $1; done"; }
# per_run VAR...: VAR_wall and VAR_range (when set) per run of the reps.
per_run() {
	local v w r
	for v in "$@"; do
		w="${v}_wall" r="${v}_range"
		printf -v "$w" '%s' "$(awk -v a="${!w}" -v n="$evreps" 'BEGIN { printf "%.4f", a / n }')"
		[ -z "${!r:-}" ] || printf -v "$r" '%s' "$(awk -v s="${!r}" -v n="$evreps" 'BEGIN { split(s, x, "-"); printf "%.4f-%.4f", x[1] / n, x[2] / n }')"
	done
}
tl="${TRACELENS_DIR:-}" hta="${HTA_DIR:-}"
use_tl=0 use_hta=0
if usable TraceLens "$tl" TraceLens "pandas, openpyxl, tqdm" TRACELENS_DIR; then use_tl=1; fi
if usable HTA "$hta" hta "pandas, plotly, networkx, psutil" HTA_DIR; then use_hta=1; fi
for t in "${real[@]}"; do
	name=$(basename "$(dirname "$t")")
	mkdir -p "$d/in/$name"
	f="$d/in/$name/trace.json" # HTA reads every trace of a directory
	[ -s "$f" ] || gzip -dc "$shared/$t.json.gz" >"$f"
	mb=$(mib "$(stat -c %s "$f")")
	if [ "$use_tl" = 1 ]; then
		imeasure tl "rm -rf '$d/tl' && PYTHONPATH='$tl' '$BENCH_PYTHON' -c 'import sys
from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
generate_perf_report_pytorch(sys.argv[1], output_csvs_dir=sys.argv[2])' '$f' '$d/tl' 2>'$d/tracelens.log'" \
			tw "PYTHONPATH='$tl' '$BENCH_PYTHON' -c 'import sys
from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
generate_perf_report_pytorch(sys.argv[1], output_xlsx_path=sys.argv[2], kernel_summary=True, short_kernel_study=True)' '$f' '$d/tl.xlsx' 2>'$d/tracelens-xlsx.log'" \
			rj "$(reps "ev-stats report -q --tracelens --xlsx -o '$d/report-tlj.xlsx' '$f'")" \
			rt "$(reps "kineto2ev -q --flow-links '$f' | ev-stats report -q --tracelens --xlsx -o '$d/report-tl.xlsx'")" \
			rp "$(reps "kineto2ev -q '$f' | ev-stats report -q --xlsx -o '$d/report.xlsx'")" \
			ev "$(reps "rm -rf '$d/ev' && process-traces -q --xlsx -o '$d/ev' '$f' 2>'$d/process-traces.log'")"
		per_run rj rt rp ev
		echo "| TraceLens | perf report (CSVs), ${t#../} | $mb JSON | $tl_wall ($tl_range) | | $tl_rss |"
		echo "| TraceLens | the same workbook as evkit's --tracelens (xlsx, kernel_summary, short_kernel_study), ${t#../} | $mb JSON | $tw_wall ($tw_range) | | $tw_rss |"
		echo "| ev-stats report --tracelens --xlsx TRACE.json | TraceLens's sheets and layout, one workbook, from the JSON in one process; per run, $evreps in a row | $mb JSON | $rj_wall ($rj_range) | $(faster "$tw_wall" "$rj_wall" "TraceLens's same workbook") ($(faster "$tl_wall" "$rj_wall" "its CSVs")) | $rj_rss |"
		echo "| kineto2ev --flow-links \\| ev-stats report --tracelens --xlsx | the same through a pipe; per run, $evreps in a row | $mb JSON | $rt_wall ($rt_range) | $(faster "$tw_wall" "$rt_wall" "TraceLens's same workbook") ($(faster "$tl_wall" "$rt_wall" "its CSVs")) | $rt_rss (larger stage) |"
		echo "| kineto2ev \\| ev-stats report --xlsx | evkit's report, one workbook; per run, $evreps in a row | $mb JSON | $rp_wall ($rp_range) | $(faster "$tl_wall" "$rp_wall" TraceLens) | $rp_rss (larger stage) |"
		echo "| process-traces | --xlsx, and the timeline and CSVs; per run, $evreps in a row | $mb JSON | $ev_wall ($ev_range) | $(faster "$tl_wall" "$ev_wall" TraceLens) | $ev_rss (largest stage) |"
	fi
	if [ "$use_hta" = 1 ]; then
		measure ht "PYTHONPATH='$hta' '$BENCH_PYTHON' -c 'import sys
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
a.get_temporal_breakdown(visualize=False)
a.get_comm_comp_overlap(visualize=False)' '$d/in/$name' 2>'$d/hta.log'"
		measure es "$(reps "kineto2ev -q '$f' | ev-stats -q timeline")"
		per_run es
		echo "| HTA | temporal breakdown + comm/comp overlap, ${t#../} | $mb JSON | $ht_wall | | $ht_rss |"
		echo "| kineto2ev \\| ev-stats timeline | same trace (hta_* rows); per run, $evreps in a row | $mb JSON | $es_wall | $(faster "$ht_wall" "$es_wall" HTA) | $es_rss (larger stage) |"
	fi
done
rm -rf "$d/tl" "$d/ev" "$d/tl.xlsx"
