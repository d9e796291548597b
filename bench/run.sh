#!/usr/bin/env bash
# Runs every bench/<tool>.sh and writes bench/RESULTS.md: machine, date,
# commit, then each script's Markdown rows.  Scripts get bin/ on PATH and a
# scratch directory in $BENCH_DIR; they print rows
# | tool | case | input | wall s | throughput | peak RSS MiB |
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/bin:$PATH"
export BENCH_DIR="${BENCH_DIR:-$root/bench/out}"
mkdir -p "$BENCH_DIR"
out=bench/RESULTS.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
	echo "# evkit benchmark results"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "- load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores shared with other work make wall times noisy; the ratios are to floors measured in the same run)"
	echo "- scale: ${BENCH_SMALL:+BENCH_SMALL=1 (small inputs)}${BENCH_SMALL:-full}"
	echo "- method: median of 3 runs (a tool and the floor it is divided by: medians of 5 rounds, measured in turn); wall time and peak RSS from /usr/bin/time; inputs generated in \$BENCH_DIR${BENCH_ROUNDS:+; BENCH_ROUNDS=$BENCH_ROUNDS rounds instead of 5: a check that the scripts run, not results}"
	echo
	echo "| tool | case | input | wall s | throughput | peak RSS MiB |"
	echo "|---|---|---|---|---|---|"
} >"$tmp"
only="${BENCH_ONLY:-}"
for s in bench/*.sh; do
	case "$s" in bench/run.sh | bench/lib.sh) continue ;; esac
	name=$(basename "$s" .sh)
	[ -z "$only" ] || [[ ",$only," == *",$name,"* ]] || continue
	echo "bench: $name" >&2
	if ! bash "$s" >>"$tmp"; then
		echo "| $name | FAILED | | | | |" >>"$tmp"
	fi
done
mv "$tmp" "$out"
trap - EXIT
cat "$out"
