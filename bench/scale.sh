#!/usr/bin/env bash
# scale: the 200 GB-class run, streamed.  gen-kineto writes one rank's
# Kineto JSON of BENCH_SCALE_SIZE (default 20G; 2G with BENCH_SMALL=1) to a
# pipe, kineto2ev converts it and ev-stats timeline reads the stream:
# nothing is stored.  Floor: the generator into cat, in the same rounds.
# Each of 5 rounds runs both in turn; the rows give the median wall (with
# the rounds' min-max), the CPU seconds and peak RSS of each stage, and
# the wall extrapolated linearly to 200 GB.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
d="$BENCH_DIR/scale"
mkdir -p "$d"
size="${BENCH_SCALE_SIZE:-20G}"
[ -z "${BENCH_SMALL:-}" ] || size=2G
gen="gen-kineto -q --ranks 8 --only 0 --seed 5 --size $size -"
pipe_ms="" floor_ms="" kcpu="" scpu="" krss="" srss=""
for _ in 1 2 3 4 5; do
	t0=$(date +%s%N)
	$gen | /usr/bin/time -f '%U %S %M' -o "$d/k.time" kineto2ev -q - |
		/usr/bin/time -f '%U %S %M' -o "$d/s.time" ev-stats -q timeline -o /dev/null
	t1=$(date +%s%N)
	$gen | cat >/dev/null
	t2=$(date +%s%N)
	pipe_ms+="$(((t1 - t0) / 1000000)) " floor_ms+="$(((t2 - t1) / 1000000)) "
	read -r u s m <"$d/k.time"
	kcpu+="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') " krss+="$m "
	read -r u s m <"$d/s.time"
	scpu+="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') " srss+="$m "
done
med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rng() { tr ' ' '\n' <<<"$1" | grep . | sort -g | sed -n '1p;$p' | paste -sd-; }
bytes=$(numfmt --from=iec "$size")
w=$(med "$pipe_ms") f=$(med "$floor_ms")
echo "| gen-kineto \\| kineto2ev \\| ev-stats timeline | streamed, never stored | $(mib "$bytes") JSON | $(awk -v w="$w" 'BEGIN { printf "%.1f", w / 1000 }') ($(rng "$pipe_ms" | awk -F- '{ printf "%.1f-%.1f", $1 / 1000, $2 / 1000 }')) | $(awk -v b="$bytes" -v w="$w" 'BEGIN { printf "%.0f MB/s; 200 GB in %.1f min", b / w / 1000, 200e9 / (b / w * 1000) / 60 }'); CPU s kineto2ev $(med "$kcpu"), ev-stats $(med "$scpu"); $(awk -v w="$w" -v f="$f" 'BEGIN { printf "%.2fx", w / f }') the generator alone | kineto2ev $(med "$krss" | awk '{ printf "%.1f", $1 / 1024 }'), ev-stats $(med "$srss" | awk '{ printf "%.1f", $1 / 1024 }') |"
echo "| gen-kineto \\| cat (floor) | the generator alone | $(mib "$bytes") JSON | $(awk -v f="$f" 'BEGIN { printf "%.1f", f / 1000 }') ($(rng "$floor_ms" | awk -F- '{ printf "%.1f-%.1f", $1 / 1000, $2 / 1000 }')) | | |"
