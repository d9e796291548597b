#!/usr/bin/env bash
# Helpers for bench scripts (source it): timing with peak RSS, medians.
# measure OUTVAR CMD: runs CMD (a shell string) 3 times, sets
#   OUTVAR_wall (median seconds), OUTVAR_range (min-max seconds),
#   OUTVAR_rss (median peak RSS in MiB) and OUTVAR_cpu (median user+system
#   seconds of CMD and every process it waited for).
measure() { measure_rounds 3 "$@"; }
# imeasure VAR CMD [VAR CMD ...]: 5 rounds each running every CMD once,
# medians over the rounds: a tool and its floor measured in turn, so that
# the machine's drift (tens of percent within minutes on the 2-core class)
# reaches both alike and their ratio holds.  BENCH_ROUNDS=N (a quick check
# that a script runs) takes N rounds instead; its figures are not results.
imeasure() { measure_rounds "${BENCH_ROUNDS:-5}" "$@"; }
# measure_rounds N VAR CMD [VAR CMD ...]: N rounds of every CMD in turn.
measure_rounds() {
	local n="$1" f t0 t1 i r vars=() cmds=()
	shift
	while [ $# -ge 2 ]; do
		vars+=("$1")
		cmds+=("$2")
		shift 2
	done
	local -a walls rsss cpus
	f=$(mktemp)
	# Inputs generated just before (hundreds of MiB) are written back
	# now, not by the kernel during the timed runs.
	sync
	for ((r = 0; r < n; r++)); do
		for i in "${!cmds[@]}"; do
			# Wall time from the clock in ns (time's %e has 10 ms steps),
			# peak RSS and CPU seconds from /usr/bin/time.
			t0=$(date +%s%N)
			/usr/bin/time -f '%M %U %S' -o "$f" bash -c "${cmds[$i]}" >/dev/null
			t1=$(date +%s%N)
			walls[i]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') "
			rsss[i]+="$(tail -n 1 "$f" | cut -d' ' -f1) "
			cpus[i]+="$(tail -n 1 "$f" | awk '{ printf "%.2f", $2 + $3 }') "
		done
	done
	rm -f "$f"
	local mid=$(((n + 1) / 2))
	for i in "${!cmds[@]}"; do
		printf -v "${vars[$i]}_wall" '%s' "$(tr ' ' '\n' <<<"${walls[i]}" | grep . | sort -g | sed -n "${mid}p")"
		printf -v "${vars[$i]}_range" '%s' "$(tr ' ' '\n' <<<"${walls[i]}" | grep . | sort -g | sed -n '1p;$p' | paste -sd-)"
		printf -v "${vars[$i]}_rss" '%s' "$(tr ' ' '\n' <<<"${rsss[i]}" | grep . | sort -g | sed -n "${mid}p" | awk '{printf "%.1f", $1/1024}')"
		printf -v "${vars[$i]}_cpu" '%s' "$(tr ' ' '\n' <<<"${cpus[i]}" | grep . | sort -g | sed -n "${mid}p")"
	done
}
# rate COUNT SECONDS UNIT: "12.3 M UNIT/s"
rate() {
	awk -v n="$1" -v s="$2" -v u="$3" 'BEGIN { if (s <= 0) s = 0.001; printf "%.2f M %s/s", n / s / 1e6, u }'
}
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }

gen_colls() { # gen_colls NCOLL FILE: 64 ranks in one communicator, time-ordered,
	# mixed kinds, sizes and protocols (input of coll-expand and ev2goal benches)
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
				# %.0f: mawk prints integers past 2^31 in exponent form
				print "coll", op[i % 4 + 1], r, 7, sprintf("%.0f", i * 100000 + r), 50000, sz[i % 6 + 1] * (op[i % 4 + 1] == "allreduce" ? 1 : 64),
				      5, i, "ring", pr[int(i / 4) % 4 + 1], "float32", 1 + i % 2, 64
	}' | ev-view --pack -o "$2"
}
# scale N: N, or N/10 with BENCH_SMALL=1 (a quick run of every script).
scale() {
	if [ "${BENCH_SMALL:-0}" = 1 ]; then echo $(($1 / 10)); else echo "$1"; fi
}
# count_label N: "1m", "100k"... for the input column.
count_label() {
	awk -v n="$1" 'BEGIN { if (n >= 1e6 && n % 1e6 == 0) printf "%dm", n / 1e6; else if (n >= 1e3 && n % 1e3 == 0) printf "%dk", n / 1e3; else printf "%d", n }'
}
# The Python of the distribution, not whatever python3 comes first on PATH
# (a virtualenv's would measure another json module).
BENCH_PYTHON="${BENCH_PYTHON:-/usr/bin/python3}"
export BENCH_PYTHON
