#!/usr/bin/env bats
# pipelines/nsys2goal: schedule options reach coll-expand and ev2goal, every
# stage's warnings are shown, and what was inferred is summarised.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
}

gen_nsys() {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour "$1" --nodes 2 --gpus 2 --iters 1 "$2" >/dev/null
}

@test "each stream starts at its first operation; --lead-in and --compute reach coll-expand" {
	gen_nsys annotated "$T/nsys"
	run -0 --separate-stderr nsys2goal -i "$T/nsys" -o "$T/a" -k
	[[ "$stderr" == *"coll-expand: warning: 4 stream(s) start at their first operation"* ]]
	# the first CALC of every rank is a gap between operations, never the
	# time since the rank's first record: with --lead-in it is longer
	first() { ev-view -M -H -t calc -c rank,op,dur "$1" | awk -F'\t' '$2 == "gap" && !($1 in s) { s[$1] = $3 } END { for (r in s) t += s[r]; print t + 0 }'; }
	nsys2goal -q --lead-in -k -i "$T/nsys" -o "$T/b" 2>/dev/null
	[ "$(first "$T/b/sched.ev")" -gt "$(first "$T/a/sched.ev")" ]
	nsys2goal -q --compute=none -k -i "$T/nsys" -o "$T/c" 2>/dev/null
	run -0 bash -c "ev-view -M -H -t calc -c op '$T/c/sched.ev' | awk '\$1 == \"gap\"' | wc -l"
	assert_output 0
	# ev2goal's options too: --cpu=lane keeps the record lanes
	nsys2goal -q --cpu=lane -i "$T/nsys" -o "$T/d" 2>/dev/null
	! cmp -s "$T/a/output.goal" "$T/d/output.goal"
	# and generic lists
	nsys2goal -q -X "--intra=send" -G "--keep-sync" -i "$T/nsys" -o "$T/e" 2>/dev/null
	! cmp -s "$T/a/output.goal" "$T/e/output.goal"
}

@test "stock NCCL: every chooser decision is shown, counted, and summarised" {
	gen_nsys stock "$T/nsys"
	run -0 --separate-stderr nsys2goal -q -i "$T/nsys" -o "$T/out" --preset=mi300x
	# nsys2ev states ring/simple of the 4 MiB allreduce from its launch
	# geometry; the 64 KiB tree one is left to the tuning model.
	[[ "$stderr" == *"coll-expand: warning: chose allreduce of 65536 bytes on 4 ranks, 2 node(s): "*"preset mi300x) [4 operations]"* ]]
	[[ "$stderr" == *"nsys2goal: inferred: "*" algorithm/protocol choice(s) by the tuning model (preset mi300x, option), listed above"* ]]
	# each distinct line once
	run -0 bash -c 'printf "%s\n" "$1" | sort | uniq -d' _ "$stderr"
	assert_output ""
}

@test "annotated NCCL without init markers: the synthesized communicators are summarised, once" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour annotated --nodes 2 --gpus 2 --iters 1 --no-init "$T/nsys" >/dev/null
	run -0 --separate-stderr nsys2goal -m -i "$T/nsys" -o "$T/out"
	run -0 grep -c 'nsys2goal: inferred: 1 communicator(s) synthesized without NCCL init markers' <<<"$stderr"
	assert_output 1
	# one stream per GPU: nothing serialised, so -m says nothing of it
	[[ "$stderr" != *"-m serialised"* ]]
	gen_nsys annotated "$T/init"
	run -0 --separate-stderr nsys2goal -i "$T/init" -o "$T/out2"
	[[ "$stderr" != *"synthesized"* ]]
}

@test "stock NCCL: the converted stream is named by the exports, never by its temporary path" {
	gen_nsys stock "$T/nsys"
	run -0 --separate-stderr nsys2goal -i "$T/nsys" -o "$T/out"
	[[ "$stderr" == *"coll-expand: warning: $T/nsys (converted): the trace does not say which algorithm"* ]]
	[[ "$stderr" != *.nsys2goal.* && "$stderr" != *trace.ev* ]]
}

@test "a failing stage shows its own message" {
	gen_nsys annotated "$T/nsys"
	run -1 nsys2goal -q -i "$T/nsys" -o "$T/out" --max-messages=2
	assert_output --partial "(--max-messages)"
	assert_output --partial "nsys2goal: coll-expand failed"
	# ev2goal, reading the cut stream, adds no second error
	refute_output --partial "ev2goal"
	run -2 nsys2goal -q -i "$T/nsys" -o "$T/out" --compute=maybe
	assert_output --partial "coll-expand: --compute: expected gaps, kernels or none, got 'maybe'"
	refute_output --partial "ev2goal"
}

@test "symlinked exports and symlinked input folders are read like the files" {
	gen_nsys annotated "$T/real"
	nsys2goal -q -i "$T/real" -o "$T/ref" 2>/dev/null
	# a folder of symlinks, a symlink to the folder, a folder holding one
	mkdir "$T/links" "$T/outer"
	for f in "$T"/real/*.sqlite; do ln -s "$f" "$T/links/"; done
	ln -s "$T/real" "$T/dirlink"
	ln -s "$T/real" "$T/outer/run"
	for d in links dirlink outer; do
		run -0 --separate-stderr nsys2goal -q -i "$T/$d" -o "$T/out-$d"
		cmp "$T/ref/output.goal" "$T/out-$d/output.goal"
		cmp "$T/ref/stats.tsv" "$T/out-$d/stats.tsv"
	done
}

@test "an export that is missing (a symlink to nothing) is named, not left out" {
	gen_nsys annotated "$T/real"
	mkdir "$T/in"
	cp "$T/real/nsys_nid000000.sqlite" "$T/in/"
	ln -s "$T/real/gone.sqlite" "$T/in/nsys_nid000001.sqlite"
	run -1 nsys2goal -q -i "$T/in" -o "$T/out"
	assert_output "nsys2goal: $T/in/nsys_nid000001.sqlite: No such file or directory"
	[ ! -e "$T/out" ]
}

# The one line a stock export written without NCCL's payload values gets.
no_payloads() {
	printf "nsys2goal: %s: exported without NCCL's payload values (no communicator, size or peer for any NCCL call): re-export the report with 'nsys export --type sqlite --include-blobs=true REPORT.nsys-rep', or give --nccl-log=FILE with the run's NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output" "$1"
}

@test "shared data: an export without NCCL payload values stops at nsys2ev with the fix, no output" {
	need_shared_data
	N="$SHARED_DATA/npkit/clariden"
	mkdir "$T/in"
	ln -s "$SHARED_DATA/nsys/nsysai_mfu_2gpu_before.sqlite" "$T/in/"
	run -1 nsys2goal -q -i "$T/in" -o "$T/out" -s "$N/npkit_data_summary_Simple.json" -l "$N/npkit_data_summary_LL.json"
	assert_output "$(no_payloads "$T/in/nsysai_mfu_2gpu_before.sqlite")"
	[ ! -e "$T/out" ]
	# an existing OUT_DIR is left as it was; progress lines are no reasons
	mkdir "$T/out"
	: >"$T/out/mine"
	run -1 --separate-stderr nsys2goal -i "$T/in" -o "$T/out" -s "$N/npkit_data_summary_Simple.json"
	assert_equal "${stderr_lines[-1]}" "$(no_payloads "$T/in/nsysai_mfu_2gpu_before.sqlite")"
	run -0 grep -c -v '^nsys2goal: [0-9]* export(s) -> ev$' <<<"$stderr"
	assert_output 1
	run -0 ls -A "$T/out"
	assert_output mine
}

@test "an export without NCCL payload values: the advice given works" {
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour stock --no-blobs --nccl-log "$T/nccl.log" --nodes 1 --gpus 2 --iters 1 "$T/nsys" >/dev/null
	run -1 nsys2goal -q -i "$T/nsys" -o "$T/out"
	assert_output "$(no_payloads "$T/nsys/nsys_nid000000.sqlite")"
	run -0 --separate-stderr nsys2goal -q --nccl-log="$T/nccl.log" -i "$T/nsys" -o "$T/out"
	[ -s "$T/out/output.goal" ]
	# a log that does not describe the run is named
	: >"$T/other.log"
	run -1 nsys2goal -q -N "--nccl-log $T/other.log" -i "$T/nsys" -o "$T/out2"
	assert_output "nsys2goal: $T/nsys/nsys_nid000000.sqlite: its NCCL operations have no communicator, and $T/other.log does not describe them: give the NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL output of this run"
}

@test "shared data: -s and -l say which protocol a table is, whatever its file name" {
	need_shared_data
	N="$SHARED_DATA/npkit/clariden"
	S="$N/npkit_data_summary_Simple.json" L="$N/npkit_data_summary_LL.json"
	gen_nsys annotated "$T/nsys"
	nsys2goal -q -i "$T/nsys" -o "$T/ref" -s "$S" -l "$L" 2>/dev/null
	# renamed tables: read as the options say, no warning, the same output
	cp "$S" "$T/table-a.json"
	cp "$L" "$T/table-b.json"
	run -0 --separate-stderr nsys2goal -q -i "$T/nsys" -o "$T/renamed" -s "$T/table-a.json" -l "$T/table-b.json"
	[[ "$stderr" != *warning:*table-* ]]
	cmp "$T/ref/lat.tsv" "$T/renamed/lat.tsv"
	cmp "$T/ref/output.goal" "$T/renamed/output.goal"
	# swapped: each file read as its option says, each name contradiction said
	run -0 --separate-stderr nsys2goal -q -i "$T/nsys" -o "$T/swapped" -s "$L" -l "$S"
	run -0 grep '^nsys2goal: warning:' <<<"$stderr"
	assert_output - <<OUT
nsys2goal: warning: $S: its name says simple, but it is given with -l (LL): read as ll
nsys2goal: warning: $L: its name says ll, but it is given with -s (Simple): read as simple
OUT
	rows() { awk -F'\t' -v p="$2" 'NR > 1 && $2 == p { $2 = ""; print }' "$1"; }
	[ "$(rows "$T/swapped/lat.tsv" ll)" = "$(rows "$T/ref/lat.tsv" simple)" ]
	[ "$(rows "$T/swapped/lat.tsv" simple)" = "$(rows "$T/ref/lat.tsv" ll)" ]
	! cmp -s "$T/ref/output.goal" "$T/swapped/output.goal"
}

@test "input and output directories named with *, [, ?, a leading - and a newline" {
	gen_nsys annotated "$T/plain"
	nsys2goal -q -i "$T/plain" -o "$T/ref" 2>/dev/null
	N=$'-gl*ob[1]?\nrun'
	cd "$T"
	cp -r plain "./$N"
	run -0 --separate-stderr nsys2goal -q -i "$N" -o "$N.goal"
	cmp ref/output.goal "./$N.goal/output.goal"
	cmp ref/stats.tsv "./$N.goal/stats.tsv"
}

@test "one schedule: coll-expand builds it in-process, the bytes of coll-expand -> ev2goal (-k)" {
	gen_nsys annotated "$T/nsys"
	# An ev2goal that notes each call: the fused path makes none.
	mkdir "$T/shim"
	printf '#!/bin/sh\necho "$*" >>"%s/calls"\nexec "%s" "$@"\n' "$T" "$(command -v ev2goal)" >"$T/shim/ev2goal"
	chmod +x "$T/shim/ev2goal"
	for b in "" -b; do
		PATH="$T/shim:$PATH" run -0 nsys2goal -q -m $b --nic=channel -i "$T/nsys" -o "$T/one$b"
		[ ! -e "$T/calls" ]
		PATH="$T/shim:$PATH" run -0 nsys2goal -q -m $b --nic=channel -k -i "$T/nsys" -o "$T/two$b"
		[ "$(wc -l <"$T/calls")" = 1 ]
		rm "$T/calls"
		ext=goal
		[ -z "$b" ] || ext=bin
		cmp "$T/one$b/output.$ext" "$T/two$b/output.$ext"
		cmp "$T/one$b/stats.tsv" "$T/two$b/stats.tsv"
	done
}

@test "stages that run side by side still speak in step order; a failure leaves OUT_DIR as it was" {
	# npkit2lat runs during nsys2ev, coll-expand during the checks: what
	# stops the run is said where it was when they ran one after the other,
	# and what coll-expand (here failing too) would have said is not shown.
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour stock --nodes 2 --gpus 2 --iters 1 --no-blobs "$T/nb" >/dev/null
	gen_nsys annotated "$T/ok"
	echo '{}' >"$T/bad_LL.json"
	mkdir "$T/out"
	: >"$T/out/mine"
	run -1 nsys2goal -i "$T/nb" -o "$T/out" --max-messages=2
	assert_equal "${#lines[@]}" 2
	assert_line -n 0 "nsys2goal: 2 export(s) -> ev"
	assert_line -n 1 "$(no_payloads "$T/nb/nsys_nid000000.sqlite, $T/nb/nsys_nid000001.sqlite")"
	run -0 ls -A "$T/out"
	assert_output mine
	# a failing latency table: after nsys2ev's stage and the checks, and
	# the Simple table (after it) not read
	cp "$T/bad_LL.json" "$T/bad_Simple.json"
	run -1 nsys2goal -i "$T/ok" -o "$T/out" -l "$T/bad_LL.json" -s "$T/bad_Simple.json" --max-messages=2
	assert_equal "${#lines[@]}" 4
	assert_line -n 0 "nsys2goal: 2 export(s) -> ev"
	assert_line -n 1 "nsys2goal: annotated NCCL: algorithm, protocol, channels and chunking from the markers"
	assert_line -n 2 "npkit2lat: $T/bad_LL.json: no NPKit events"
	assert_line -n 3 "nsys2goal: npkit2lat failed (exit 1; see the messages above)"
	run -0 ls -A "$T/out"
	assert_output mine
}
