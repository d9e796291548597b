#!/usr/bin/env bash
# suite.sh - run one tier of the test suite and say how it went.
#
#   tests/suite.sh NAME [--units "PROG..."] [--jobs N] [BATS_FILE...]
#
# Runs each unit program, then the Bats files, N at a time [the number of
# cores; SUITE_JOBS], the largest first, between two snapshots of the
# shared data and the source tree (tests/untouched.sh: a test that writes
# into its inputs fails the tier).  A line says when each file is done;
# failures are shown with their diagnostics.  The log, with the full TAP
# of every file, goes to $SUITE_LOG_DIR/NAME.log [build/]; its last lines
# are the summary, the first of them the plain closing line CI reads:
#   NAME: 510 passed, 0 failed, 12 skipped
#   NAME: 522 tests (124 unit, 398 bats) in 1 min 52 s wall, 170 CPU-s
# Exit status 0 when every test passed, 1 otherwise, 2 on a usage error.
set -uo pipefail

usage() { echo "usage: suite.sh NAME [--units \"PROG...\"] [--jobs N] [BATS_FILE...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
name="$1"; shift
units="" jobs="${SUITE_JOBS:-$(nproc 2>/dev/null || echo 1)}"
while [ $# -gt 0 ]; do
	case "$1" in
	--units) [ $# -ge 2 ] || usage; units="$2"; shift 2 ;;
	--jobs) [ $# -ge 2 ] || usage; jobs="$2"; shift 2 ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
logdir="${SUITE_LOG_DIR:-$root/build}"
mkdir -p "$logdir"
log="$logdir/$name.log"
: >"$log"
start=$(date +%s)
work=$(mktemp -d "$logdir/.$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
# python3 through a version manager's shim (pyenv) costs two processes per
# call: the tests call the interpreter it resolves to.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ] &&
	[ "$(readlink -f "$py")" != "$(readlink -f "$(command -v python3)")" ]; then
	mkdir -p "$work/bin"
	ln -s "$py" "$work/bin/python3"
	PATH="$work/bin:$PATH"
fi
read -r cpu0 < <(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)

unit_pass=0 unit_fail=0
for u in $units; do
	out=$("$u" 2>&1)
	rc=$?
	printf '%s\n' "$out" >>"$log"
	line=$(printf '%s\n' "$out" | sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' | tail -n 1)
	if [ -z "$line" ]; then
		# A program that died or printed no counts is one failed test.
		line="0 1"
	fi
	read -r p f <<<"$line"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	unit_pass=$((unit_pass + p)) unit_fail=$((unit_fail + f))
	if [ "$f" -ne 0 ]; then
		printf '%s\n' "$out"
		echo "unit: $(basename "$u"): FAILED (exit $rc)"
	else
		echo "unit: $(basename "$u"): $p passed"
	fi
done

bats_pass=0 bats_fail=0 bats_skip=0
if [ $# -gt 0 ]; then
	# The files run N at a time, the largest first, each in a bats of its
	# own; a line says when each is done, and the full TAP of every file
	# follows in order.
	i=0
	for f in "$@"; do
		printf '%s\t%s\t%s\n' "$(wc -c <"$f")" "$i" "$f"
		i=$((i + 1))
	done | sort -t "$(printf '\t')" -k1,1nr | cut -f2,3 >"$work/order"
	state="$logdir/$name.untouched"
	"$root/tests/untouched.sh" snapshot "$state"
	export EV_BIN="${EV_BIN:-$root/bin}" SUITE_WORK="$work"
	# shellcheck disable=SC2016 # the script is bash -c's, expanded there
	tr '\t' '\n' <"$work/order" | tr '\n' '\0' |
		xargs -0 -n 2 -P "$jobs" bash -c '
			TIMEFORMAT="%R %U %S"
			{ time bats --print-output-on-failure --timing "$1" >"$SUITE_WORK/$0.tap" 2>&1; } 2>"$SUITE_WORK/$0.time"
			echo $? >"$SUITE_WORK/$0.rc"
			read -r wall user sys <"$SUITE_WORK/$0.time"
			printf "%-28s %3d ok %2d not ok %6.1f s wall %5.1f CPU-s\n" "${1##*/}" "$(grep -c "^ok " "$SUITE_WORK/$0.tap")" \
				"$(grep -c "^not ok " "$SUITE_WORK/$0.tap")" "$wall" "$(awk -v u="$user" -v s="$sys" "BEGIN { print u + s }")"'
	i=0
	for f in "$@"; do
		echo "# $f"
		cat "$work/$i.tap"
		rc=$(cat "$work/$i.rc" 2>/dev/null || echo 1)
		planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$work/$i.tap" | head -n 1)
		p=$(grep -c '^ok ' "$work/$i.tap")
		s=$(grep -c '^ok [0-9]* .*# skip' "$work/$i.tap")
		n=$(grep -c '^not ok ' "$work/$i.tap")
		bats_pass=$((bats_pass + p - s)) bats_skip=$((bats_skip + s)) bats_fail=$((bats_fail + n))
		# A file that stopped early (did not load, a crash): what did not
		# run counts as failed.
		if [ -z "$planned" ] || [ $((p + n)) -lt "$planned" ]; then
			echo "$name: $f: ran $((p + n)) of ${planned:-?} tests (bats exit $rc)"
			bats_fail=$((bats_fail + ${planned:-$((p + n + 1))} - p - n))
		elif [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
			echo "$name: $f: bats exited $rc with no failed test"
			bats_fail=$((bats_fail + 1))
		fi
		i=$((i + 1))
	done >>"$log"
	# The failures, with their diagnostics, and files that stopped early.
	awk -v stop="^$name: " '/^# .*[.]bats$/ { file = $0; p = 0; next }
		/^not ok / { if (file != "") print file; file = ""; p = 1; print; next }
		/^ok / { p = 0 } $0 ~ stop { print; next } p' "$log"
	if ! "$root/tests/untouched.sh" compare "$state" 2>&1 | tee -a "$log"; then
		bats_fail=$((bats_fail + 1))
	fi
fi

read -r cpu1 < <(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
secs=$(($(date +%s) - start))
cpu=$(((cpu1 - cpu0) / $(getconf CLK_TCK)))
passed=$((unit_pass + bats_pass)) failed=$((unit_fail + bats_fail))
total=$((passed + failed + bats_skip))
{
	echo "$name: $passed passed, $failed failed, $bats_skip skipped"
	echo "$name: $total tests ($((unit_pass + unit_fail)) unit, $((bats_pass + bats_fail + bats_skip)) bats) in $((secs / 60)) min $((secs % 60)) s wall, $cpu CPU-s"
} | tee -a "$log"
[ "$failed" -eq 0 ]
