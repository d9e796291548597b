#!/usr/bin/env bash
# kineto2ev: speed and peak RSS on real Kineto traces (HTA's and TraceLens's
# test traces in ../shared/data, when present) and on generated ones at 1x
# and 10x, against floors measured in the same run on the same files: `cat`,
# `gzip -dc` and a plain zlib read loop (bin/bench-zread, tests/gen/bench-zread.c) of the
# same JSON gzipped, and Python's json.load (/usr/bin/python3).
#
# Each measure is the median of 5 runs, interleaved with the other commands
# of the same file (cpumeasure); a run repeats the command until it has read
# about 256 MiB, and its times are per command.  MB/s is given per
# wall second and per CPU second (user + sys: "per core", what the machine's
# load does not change); ratios are CPU time of the floor / CPU time of
# kineto2ev.  Flat RSS from 1x to 10x of input is the streaming promise.
# BENCH_SMALL=1: the two smaller real traces and 1/10 of the generated sizes.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/kineto2ev"
mkdir -p "$d"
PY=/usr/bin/python3
shared="$(cd "$(dirname "$0")/.." && pwd)/../shared/data/kineto"

# cpumeasure VAR CMD [VAR CMD ...]: median wall, CPU (user+sys) seconds and
# peak RSS (MiB) of each CMD into VAR_wall, VAR_cpu, VAR_rss.  Each run
# repeats CMD $reps times and the times are divided by $reps: time(1) counts
# CPU in 10 ms steps, which on a 10 MiB trace would be a quarter of the
# measure.  The commands are interleaved: each of 5 rounds runs every one of
# them once, and the medians are over the rounds, so that a change in the
# machine's speed while they are measured (this 2-core class drifts by tens
# of percent within minutes when its host is busy) reaches a tool and its
# floors alike instead of landing on whichever ran at the time.
cpumeasure() {
	local f w u s r i vars=() cmds=()
	while [ $# -ge 2 ]; do
		vars+=("$1")
		cmds+=("$2")
		shift 2
	done
	local -a walls cpus rsss
	f=$(mktemp)
	for _ in 1 2 3 4 5; do
		for i in "${!cmds[@]}"; do
			/usr/bin/time -f '%e %U %S %M' -o "$f" bash -c "for _ in \$(seq $reps); do ${cmds[$i]}; done" >/dev/null
			read -r w u s r <"$f"
			walls[i]+="$(awk -v w="$w" -v n="$reps" 'BEGIN { printf "%.4f", w / n }') "
			cpus[i]+="$(awk -v u="$u" -v s="$s" -v n="$reps" 'BEGIN { printf "%.4f", (u + s) / n }') "
			rsss[i]+="$r "
		done
	done
	rm -f "$f"
	for i in "${!cmds[@]}"; do
		printf -v "${vars[$i]}_wall" '%s' "$(median "${walls[i]}")"
		printf -v "${vars[$i]}_cpu" '%s' "$(median "${cpus[i]}")"
		printf -v "${vars[$i]}_rss" '%s' "$(median "${rsss[i]}" | awk '{printf "%.1f", $1/1024}')"
	done
}
# median "V1 V2 ...": the middle value.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { if (s <= 0) s = 0.001; printf "%.0f", b / s / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1fx", a / b }'; }

row() { # row LABEL BYTES VAR
	local w c r
	w="${3}_wall" c="${3}_cpu" r="${3}_rss"
	echo "| $1 | $(mib "$2") | ${!w} | ${!c} | $(mbps "$2" "${!w}") | $(mbps "$2" "${!c}") | ${!r} |"
}

one_file() { # one_file LABEL JSON
	local f="$2" bytes
	[ -s "$f.gz" ] || gzip -1 -c "$f" >"$f.gz"
	bytes=$(stat -c %s "$f")
	# Enough repeats for about 256 MiB of JSON per measure (1 from 256 MiB up).
	reps=$(((268435456 + bytes - 1) / bytes))
	cpumeasure conv "kineto2ev -q -o /dev/null '$f'" \
		pipe "kineto2ev -q '$f' | ev-stats -q timeline" \
		convgz "kineto2ev -q -o /dev/null '$f.gz'" \
		cat "cat '$f'" \
		gz "gzip -dc '$f.gz'" \
		zr "bench-zread '$f.gz'" \
		py "$PY -c 'import json, sys; json.load(open(sys.argv[1]))' '$f'"
	echo
	echo "$1 (each measure: $reps runs in a row; times per run; medians of 5 interleaved rounds)"
	echo
	echo "| command | JSON | wall s | CPU s | MB/s wall | MB/s CPU | peak RSS MiB |"
	echo "|---|---|---|---|---|---|---|"
	row "kineto2ev -o /dev/null" "$bytes" conv
	row "kineto2ev \\| ev-stats timeline" "$bytes" pipe
	row "kineto2ev, .json.gz input" "$bytes" convgz
	row "cat (floor)" "$bytes" cat
	row "gzip -dc (floor)" "$bytes" gz
	row "zlib read loop, bench-zread (floor)" "$bytes" zr
	row "python3 json.load (floor)" "$bytes" py
	echo
	echo "CPU ratios: json.load / kineto2ev $(ratio "$py_cpu" "$conv_cpu"); json.load / (kineto2ev | ev-stats timeline) $(ratio "$py_cpu" "$pipe_cpu");" \
	     "kineto2ev / gzip -dc $(ratio "$conv_cpu" "$gz_cpu"); kineto2ev / cat $(ratio "$conv_cpu" "$cat_cpu");" \
	     "kineto2ev .json.gz / zlib read loop $(ratio "$convgz_cpu" "$zr_cpu")"
	echo
	# Why kineto2ev writes nothing before the end of its input.
	echo "Time order of the file: $("$PY" "$(dirname "$0")/kineto-order.py" "$f")"
}

# Real traces (HTA's and TraceLens's test data: real PyTorch profiler output,
# from V100, A100, H100 and MI300X GPUs).
real=(hta/nccl_parser_config/nccl_data hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace
      hta/negative_queue_length_values_check/rank0 hta/df_index_resolver/df_index_resolver
      tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005 tracelens/mi300/resnet_act_checkpoint)
[ -z "${BENCH_SMALL:-}" ] || real=("${real[@]:0:2}")
if [ -d "$shared" ]; then
	for t in "${real[@]}"; do
		f="$d/real-$(echo "$t" | tr / _).json"
		[ -s "$f" ] || gzip -dc "$shared/$t.json.gz" >"$f"
		one_file "Real trace: $t.json.gz" "$f"
	done
else
	echo "(no ../shared/data: real traces skipped)"
fi

# Generated traces at 1x and 10x: speed and flat memory at default settings.
unit=50
[ -z "${BENCH_SMALL:-}" ] || unit=5
for mult in 1 10; do
	mb=$((unit * mult))
	f="$d/k${mb}m/rank3/trace.json"
	[ -s "$f" ] || gen-kineto -q --ranks 8 --only 3 --size "${mb}M" --seed 12 "$d/k${mb}m"
	one_file "Generated trace, 1 rank, ${mult}x" "$f"
	printf -v "rss_$mult" '%s' "$conv_rss"
done
echo
echo "Peak RSS at 10x / 1x input (default settings): $(ratio "$rss_10" "$rss_1") ($rss_10 / $rss_1 MiB)"
# The scripts after this one print rows of the main table: open it again.
echo
echo "| tool | case | input | wall s | throughput | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
