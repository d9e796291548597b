#!/usr/bin/env bats
# Regression replay of the fuzz corpus (tests/fuzz/corpus/<harness>/) through
# the programs themselves: every input must end with exit 0 or 1, never a
# signal, a sanitizer report or another status; a failure must say why in
# one `tool: ...` line and leave nothing under the -o name.  Under
# `make asan` / `make ubsan` this runs the sanitized tools.  (`make
# fuzz-regress` replays the same corpus through the harnesses themselves.)
bats_require_minimum_version 1.5.0
load ../test_helper

CORPUS="$TESTS_DIR/fuzz/corpus"
FINDINGS="$TESTS_DIR/fuzz/findings"

# check_one TOOL FILE OUT ARGS...: runs TOOL ARGS... -o OUT FILE; prints a
# line and returns 1 on a violation.
check_one() {
	local tool="$1" file="$2" out="$3" rc=0
	shift 3
	rm -f "$out"
	"$tool" "$@" -o "$out" "$file" >/dev/null 2>"$BATS_TEST_TMPDIR/err" || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "$tool $*: $(basename "$file"): exit $rc"; head -n 5 "$BATS_TEST_TMPDIR/err"; return 1
	fi
	if grep -qE 'Sanitizer|runtime error:|LeakSanitizer' "$BATS_TEST_TMPDIR/err"; then
		echo "$tool $*: $(basename "$file"): sanitizer report"; head -n 20 "$BATS_TEST_TMPDIR/err"; return 1
	fi
	if [ "$rc" -eq 1 ]; then
		if ! head -n 1 "$BATS_TEST_TMPDIR/err" | grep -q "^$tool: "; then
			echo "$tool $*: $(basename "$file"): exit 1 without a '$tool: ' message"; return 1
		fi
		if [ -e "$out" ]; then
			echo "$tool $*: $(basename "$file"): exit 1 but output left under the final name"; return 1
		fi
	elif [ ! -e "$out" ]; then
		echo "$tool $*: $(basename "$file"): exit 0 without output"; return 1
	fi
	return 0
}

# Reported findings in other owners' code, not fixed yet: TOOL|INPUT and
# the bug.  A violation on one of these is listed, not failed; once fixed,
# delete the line (the input then counts like any other).
KNOWN_FINDINGS=(
)
known() { # known TOOL FILE: is it a listed finding?
	local k
	for k in "${KNOWN_FINDINGS[@]}"; do
		[ "${k%%|*}" = "$1" ] || continue
		k="${k#*|}"
		[ "${k%%|*}" = "$(basename "$2")" ] && return 0
	done
	return 1
}

# replay HARNESS TOOL ARGS...: every corpus file of HARNESS through TOOL.
replay() {
	local h="$1" tool="$2" f n=0 fails=0
	shift 2
	for f in "$CORPUS/$h"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		if ! check_one "$tool" "$f" "$BATS_TEST_TMPDIR/out" "$@" >"$BATS_TEST_TMPDIR/why"; then
			if known "$tool" "$f"; then
				echo "known finding: $tool $(basename "$f")"
			else
				cat "$BATS_TEST_TMPDIR/why"
				fails=$((fails + 1))
			fi
		fi
	done
	echo "$h: $n inputs, $fails failures"
	[ "$n" -gt 0 ] && [ "$fails" -eq 0 ]
}

@test "fuzz corpus: ev streams through ev-view --ev, ev-view (TSV) and ev-merge" {
	replay ev_read ev-view --ev -q
	replay ev_read ev-view -q
	replay ev_read ev-merge -q
}

@test "fuzz corpus: ev streams through ev-stats timeline and ev-overlap" {
	replay ev_read ev-stats timeline -q
	replay ev_read ev-overlap -q
}

@test "fuzz corpus: Kineto and JSON documents through kineto2ev" {
	replay kineto kineto2ev -q --python
	replay json kineto2ev -q --max-object 64K --max-tokens 4096
}

@test "fuzz corpus: rocprofv3 documents through rocprof2ev" {
	replay rocprof rocprof2ev -q --names=formatted
	replay rocprof rocprof2ev -q --max-object 1K --max-markers 1
}

@test "fuzz corpus: NPKit summaries through npkit2lat" {
	replay npkit npkit2lat -q --proto simple
	replay npkit npkit2lat -q --proto ll --require none
}

@test "fuzz corpus: TSV through ev-view --pack" {
	replay tsv_pack ev-view --pack -q
}

@test "fuzz corpus: ev streams of sends, receives and dependencies through ev2goal" {
	command -v ev2goal >/dev/null || skip "no ev2goal in $EV_BIN"
	replay goal ev2goal -q
	replay goal ev2goal -q --binary
	replay ev_read ev2goal -q
}

@test "fuzz corpus: ev streams through ev-merge --sort and --align, ev-view filters" {
	replay ev_read ev-merge -q --sort -S 1M
	replay ev_read ev-merge -q --align=coll
	replay stats ev-merge -q --align=coll-drift
	replay ev_read ev-view -q --type=kernel,coll --rank=0-3 --name=.
}

@test "fuzz corpus: ev streams through every ev-stats subcommand" {
	local sub
	for sub in timeline kernels categories ops coll variance; do
		replay stats ev-stats "$sub" -q
	done
	replay stats ev-stats compare -q
	replay stats ev-overlap -q --table
}

@test "fuzz corpus: ev streams through coll-expand and ev2perfetto" {
	replay nccl_sched coll-expand -q --lead-in
	replay ev_read coll-expand -q
	replay stats ev2perfetto -q
	replay ev_read ev2perfetto -q --layout=aorta --rank-prefix
}

@test "fuzz corpus: SQLite databases through nsys2ev" {
	replay nsys nsys2ev -q
}

@test "fuzz corpus: Flex JSON through flex2ev" {
	replay flex flex2ev -q
}

@test "fuzz corpus: the replay notices a bad exit (the check can fail)" {
	# A stand-in tool that dies from a signal must be reported.
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\nkill -SEGV $$\n' >"$BATS_TEST_TMPDIR/fake/ev-crash"
	chmod +x "$BATS_TEST_TMPDIR/fake/ev-crash"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" run -1 replay ev_read ev-crash
	assert_output --partial 'exit 139'
}

@test "known findings (tests/fuzz/findings): fixed yet?" {
	# Crashes found by fuzzing whose fix belongs in lib/ (see the README
	# there).  Skipped while they still reproduce; once fixed, this test
	# holds them to exit 0/1 and they should move into the corpus.
	local f tool args still=""
	for f in "$FINDINGS"/*.json; do
		case "$(basename "$f")" in
		npkit-*) tool=npkit2lat args=(-q --proto simple) ;;
		*) tool=kineto2ev args=(-q) ;;
		esac
		if ! check_one "$tool" "$f" "$BATS_TEST_TMPDIR/out" "${args[@]}" >/dev/null; then
			still="$still $(basename "$f")"
		fi
	done
	[ -z "$still" ] || skip "still crashing (lib/json/json_scan.c NULL value buffer):$still"
}
