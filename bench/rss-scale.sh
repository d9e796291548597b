#!/usr/bin/env bash
# rss-scale: peak RSS of every streaming tool at 1x and 10x of a real-shaped
# input, default options (issue 43: 10x within 1.2x of 1x).  The ev input is
# kineto2ev's output for gen-kineto's ranks (BENCH_RSS_RANKS, default 2;
# kernels with classes, ops with signatures, runtime calls, memcpy,
# annotations, collectives with communicators; BENCH_RSS_KERNELS, default
# 3000, kernels per step, about 4 MB of JSON as in real traces), not a
# synthetic stream.  1x is BENCH_RSS_MB MiB of JSON per rank (default 384;
# 38 with BENCH_SMALL=1): its sorter spills many runs of kineto2ev's 16 MiB
# default buffer, so that buffer does not make 1x small.  flex2ev's input is gen-flex.py's (1x = 4 of its three
# 16 MiB passes), rocprof2ev's the test fixture's records repeated, nsys2ev's
# gen-nsys.py's NCCL mix.  coll-expand and ev2goal read a smaller stream
# (BENCH_RSS_COLL_MB per rank): their output is about 4000x their input.
# Rows: wall s and peak RSS MiB at 1x / 10x, one run each (peak RSS does not
# depend on the machine's load); the case says the ratio and OVER past 1.2.
# BENCH_RSS_TOOLS=LIST (comma-separated tool names as in the rows' first
# column, ev-stats for all its subcommands) runs only those.
# Alone: BENCH_ONLY=rss-scale make bench
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/.." && pwd)"
d="$BENCH_DIR/rss-scale"
mkdir -p "$d"
mb="${BENCH_RSS_MB:-384}"
ranks="${BENCH_RSS_RANKS:-2}"
kernels="${BENCH_RSS_KERNELS:-3000}"
cmb="${BENCH_RSS_COLL_MB:-4}"
omb="${BENCH_RSS_OTHER_MB:-256}"
[ -z "${BENCH_SMALL:-}" ] || { mb=38 omb=26; }
tools="${BENCH_RSS_TOOLS:-}"
want() { [ -z "$tools" ] || [[ ",$tools," == *",$1,"* ]]; }
tf="$d/time.out"

# peak VAR CMD: one run of CMD (a shell string) into VAR_wall (s) and
# VAR_rss (MiB).  A {T} in CMD marks the process measured (one stage of a
# pipeline); without it the whole command is (its largest process).
peak() {
	local t="/usr/bin/time -f '%e %M' -o '$tf'" cmd="$2" w r
	if [[ "$cmd" == *"{T}"* ]]; then cmd="${cmd//\{T\}/$t}"; else cmd="$t $cmd"; fi
	bash -c "$cmd" >/dev/null 2>"$d/err" || {
		echo "rss-scale: failed: $2" >&2
		cat "$d/err" >&2
		return 1
	}
	read -r w r <"$tf"
	printf -v "${1}_wall" '%s' "$w"
	printf -v "${1}_rss" '%s' "$(awk -v r="$r" 'BEGIN { printf "%.1f", r / 1024 }')"
}
# pair TOOL CASE INPUT1 INPUT10 CMD: CMD with {IN} replaced by each input,
# measured at both sizes, and its row.
pair() {
	local c1="${5//\{IN\}/$3}" c10="${5//\{IN\}/$4}" ratio flag=""
	if ! peak a "$c1" || ! peak b "$c10"; then
		echo "| $1 | $2 | FAILED | | | |"
		return 0
	fi
	ratio=$(awk -v a="$a_rss" -v b="$b_rss" 'BEGIN { printf "%.2f", b / (a > 0 ? a : 0.1) }')
	awk -v r="$ratio" 'BEGIN { exit !(r > 1.2) }' && flag=" OVER 1.2"
	echo "| $1 | $2, RSS 10x/1x $ratio$flag | $in_label | $a_wall / $b_wall | | $a_rss / $b_rss |"
}
# kin MB: gen-kineto's ranks at MB MiB of JSON per rank (kept for reruns).
kin() {
	local k="$d/kineto${ranks}x$1m$kernels"
	[ -s "$k/rank$((ranks - 1))/trace.json" ] || gen-kineto -q --ranks "$ranks" --kernels "$kernels" --seed 43 --size "$1M" "$k"
	echo "$k"/rank*/trace.json
}
# The real-shaped streams, kineto2ev's output at 1x and 10x, with
# kineto2ev's own row.
e1="$d/k${ranks}x${mb}m$kernels.ev" e10="$d/k${ranks}x$((mb * 10))m$kernels.ev"
in_label="$ranks ranks x $mb / $((mb * 10)) MiB Kineto JSON"
if want kineto2ev || [ ! -s "$e1" ] || [ ! -s "$e10" ]; then
	pair kineto2ev "gen-kineto, $ranks ranks, $kernels kernels/step" "$(kin "$mb") -o $e1" "$(kin $((mb * 10))) -o $e10" "kineto2ev -q {IN}"
fi
# ev-stats report straight from the same JSON (the conversion in its own
# process); BENCH_RSS_TOOLS=ev-stats-json runs this row alone.
if want ev-stats || want ev-stats-json; then
	pair ev-stats "report --tracelens from the Kineto JSON (one process)" "$(kin "$mb")" "$(kin $((mb * 10)))" \
		"rm -rf $d/repj && {T} ev-stats report -q --tracelens -o $d/repj {IN}"
fi
[ -s "$e1" ] && [ -s "$e10" ] || exit 1
in_label="kineto2ev output, $(mib "$(stat -c %s "$e1")") / $(mib "$(stat -c %s "$e10")") ev"
ev1() { # ev1 TOOL CASE CMD: CMD on the kineto2ev streams
	want "$1" || return 0
	pair "$1" "$2" "$e1" "$e10" "$3"
}
ev1 ev-view "ev -> TSV" "ev-view -q {IN}"
ev1 ev-view "--type=kernel --ev" "ev-view -q --type=kernel --ev -o /dev/null {IN}"
ev1 ev-merge "two configurations" "ev-merge -q -o /dev/null base={IN} test={IN}"
for sub in timeline kernels categories ops coll variance short idle launch queue membw \
	ops-summary ops-category kernel-ops ops-args critpath kdist; do
	ev1 ev-stats "$sub" "ev-stats $sub -q -o /dev/null {IN}"
done
ev1 ev-stats "compare (ev-merge base= test=)" "ev-merge -q base={IN} test={IN} | {T} ev-stats compare -q -o /dev/null"
ev1 ev-stats "report (a file per table)" "rm -rf $d/rep && {T} ev-stats report -q -o $d/rep {IN}"
ev1 ev-overlap "ev out" "ev-overlap -q -o /dev/null {IN}"
ev1 ev-overlap "--table" "ev-overlap -q --table -o /dev/null {IN}"
# ev2perfetto: all of the 10x stream passes its --max-events (20 M trace
# events), and one rank alone leaves every collective open (held up to
# 65536), so 1x and 10x are the first 1/20 and 1/2 of the 10x stream's
# time span, both ranks.
if want ev2perfetto; then
	read -r t0 tn < <(ev-view -q -M -H -c ts "$e10" | awk 'NR == 1 { a = $1 } END { print a, $1 }')
	in_label="kineto2ev output, 1/20 and 1/2 of the 10x stream's span"
	pair ev2perfetto "Chrome JSON, 1/20 and 1/2 of the 10x span" "$((t0 + (tn - t0) / 20))" "$((t0 + (tn - t0) / 2))" \
		"ev-view -q --to={IN} --ev $e10 | {T} ev2perfetto -q -o /dev/null"
fi

# coll-expand and ev2goal: the schedule is about 70x the ev stream (every
# collective as NCCL's messages per channel and step), so their input is a
# smaller kineto2ev stream, default steps (8 collectives in 24 kernels):
# BENCH_RSS_COLL_MB MiB of JSON per rank (4; 1x has about 250 k schedule
# records per rank, 60x ev2goal's 4096-op window).  ev2goal reads
# coll-expand's schedule through a pipe (1.5 GB at 10x, not stored).
if want coll-expand || want ev2goal; then
	c1="$d/c${ranks}x${cmb}m.ev" c10="$d/c${ranks}x$((cmb * 10))m.ev"
	for m in "$cmb" $((cmb * 10)); do
		c="$d/c${ranks}x${m}m.ev"
		[ -s "$c" ] || { gen-kineto -q --ranks "$ranks" --seed 43 --size "${m}M" "$d/kc$m" &&
			kineto2ev -q -o "$c" "$d/kc$m"/rank*/trace.json && rm -rf "$d/kc$m"; }
	done
	in_label="kineto2ev output, $ranks ranks x $cmb / $((cmb * 10)) MiB JSON"
	want coll-expand && pair coll-expand "schedule of every collective" "$c1" "$c10" "coll-expand -q -o /dev/null {IN}"
	want ev2goal && pair ev2goal "GOAL text from coll-expand's schedule" "$c1" "$c10" \
		"coll-expand -q {IN} | {T} ev2goal -q -o /dev/null"
fi

# rocprof2ev: the test fixture's records repeated (tests/gen/gen-rocprof.py)
# to BENCH_RSS_OTHER_MB (256) and 10x that; 1x is several times its 16 MiB
# sort buffer in records.
if want rocprof2ev; then
	for m in "$omb" $((omb * 10)); do
		[ -s "$d/roc${m}m_results.json" ] ||
			"$BENCH_PYTHON" "$root/tests/gen/gen-rocprof.py" --size "${m}M" -o "$d/roc${m}m_results.json"
	done
	in_label="rocprofv3 JSON, $omb / $((omb * 10)) MiB"
	pair rocprof2ev "fixture's records repeated" "$d/roc${omb}m_results.json" "$d/roc$((omb * 10))m_results.json" \
		"rocprof2ev -q -o /dev/null {IN}"
fi

# flex2ev and flex-stats: gen-flex.py's 8 ranks, BENCH_RSS_OTHER_MB and 10x
# that (1x: several times each of flex2ev's three 16 MiB time-ordering
# passes in records).
if want flex2ev || want flex-stats; then
	for m in "$omb" $((omb * 10)); do
		f="$d/flex${m}m.json"
		[ -s "$f" ] || "$BENCH_PYTHON" "$root/tests/gen/gen-flex.py" --ranks 8 --seed 21 --size $((m * 1048576)) -o "$f"
		[ -s "$d/flex${m}m.ev" ] || flex2ev -q -o "$d/flex${m}m.ev" "$f"
	done
	in_label="gen-flex.py, 8 ranks, $omb / $((omb * 10)) MiB JSON"
	want flex2ev && pair flex2ev "8 ranks" "$d/flex${omb}m.json" "$d/flex$((omb * 10))m.json" "flex2ev -q -o /dev/null {IN}"
	in_label="flex2ev output of the same"
	want flex-stats && pair flex-stats "summary" "$d/flex${omb}m.ev" "$d/flex$((omb * 10))m.ev" "flex-stats summary -q -o /dev/null {IN}"
fi

# nsys2ev: gen-nsys.py's annotated NCCL mix (4 ranks in 2 files, markers,
# memcpy/memset, NVTX), BENCH_RSS_NSYS_ITERS iterations and 10x that.
if want nsys2ev; then
	it="${BENCH_RSS_NSYS_ITERS:-400}"
	[ -z "${BENCH_SMALL:-}" ] || it=40
	for n in "$it" $((it * 10)); do
		[ -s "$d/nsys$n/nsys_nid000001.sqlite" ] || "$BENCH_PYTHON" "$root/tests/gen/gen-nsys.py" --iters "$n" "$d/nsys$n" >/dev/null
	done
	in_label="gen-nsys.py, $it / $((it * 10)) iterations"
	pair nsys2ev "annotated NCCL, 4 ranks" "$d/nsys$it" "$d/nsys$((it * 10))" "nsys2ev -q -o /dev/null {IN}"
fi
