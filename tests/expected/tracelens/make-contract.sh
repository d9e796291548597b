#!/usr/bin/env bash
# TraceLens's sheet/column contract: the header line of every CSV that
# TraceLens's generate_perf_report_pytorch wrote for the traces in
# shared data (kineto/tracelens, default options) and for the report made
# here (resnet_act_checkpoint/headers.tsv, see README.md), one line per sheet and
# distinct header: sheet, the traces that have it, then the columns, TAB
# separated.  Usage: make-contract.sh [SHARED_DATA] > contract.tsv
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tl=${1:-$here/../../../../shared/data}/kineto/tracelens
dirs=("$tl"/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs
	"$tl"/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs
	"$tl"/mi300/gaunernst_bert-small-uncased__1016001_perf_report_csvs
	"$tl"/torch_compile_triton/trace_perf_report_csvs)
{
for d in "${dirs[@]}"; do
	trace=${d#"$tl"/}
	trace=${trace%_perf_report_csvs}
	for f in "$d"/*.csv; do
		printf '%s\t%s\t%s\n' "$(basename "$f" .csv)" "$trace" "$(head -1 "$f" | tr -d '\r')"
	done
done
sed 's/\t/\tmi300\/resnet_act_checkpoint\t/' "$here"/resnet_act_checkpoint/headers.tsv
} | python3 -c '
import csv, sys
seen = {}
for line in sys.stdin:
    sheet, trace, header = line.rstrip("\n").split("\t", 2)
    cols = next(csv.reader([header])) if header else []
    seen.setdefault((sheet, tuple(cols)), []).append(trace)
for (sheet, cols), traces in sorted(seen.items()):
    print("\t".join([sheet, ",".join(traces)] + list(cols)))
'
