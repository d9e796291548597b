#!/usr/bin/env bats
# pipelines/merge-traces: one Perfetto timeline per run or sweep configuration.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	V="$TESTS_DIR/fixtures/ev2perfetto/validate.py"
}

# mkrun DIR RANK...: a run directory with one small Kineto trace per rank
# (the kineto2ev fixture with its distributedInfo rank replaced).
mkrun() {
	local dir="$1" r
	shift
	for r in "$@"; do
		mkdir -p "$dir/torch_profiler/rank$r"
		sed "s/\"rank\": 1,/\"rank\": $r,/" "$TESTS_DIR/fixtures/kineto2ev/small.json" >"$dir/torch_profiler/rank$r/trace.json"
	done
}

@test "--help prints usage and the exit status table" {
	run -0 merge-traces --help
	assert_line --index 0 "Usage: merge-traces [options] -o OUT DIR"
	assert_output --partial "Exit status:"
}

@test "usage errors exit 2 with a hint" {
	run -2 merge-traces "$T"
	assert_output --partial "an output is required"
	assert_output --partial "Try 'merge-traces --help'."
	run -2 merge-traces -o "$T/o" -j 0 "$T"
	assert_output --partial "--jobs: not a positive number"
	run -2 merge-traces -o "$T/o" "$T" "$T"
	run -2 merge-traces -o "$T/o" --align=sideways "$T"
	run -2 merge-traces --no-such-option
}

@test "a missing directory or one without traces exits 1" {
	run -1 merge-traces -o "$T/o" "$T/nosuch"
	assert_output "merge-traces: $T/nosuch: No such file or directory"
	mkdir -p "$T/empty"
	run -1 merge-traces -o "$T/o" "$T/empty"
	assert_output --partial "no run or sweep configuration found"
}

@test "a run with any number of ranks becomes one file; ranks sorted numerically" {
	mkrun "$T/run" 0 1 2 10
	run -0 merge-traces -q -k -o "$T/out/run.json" "$T/run"
	assert_output ""
	run -0 python3 "$V" "$T/out/run.json"
	assert_line "process 0 rank 0 GPU (device 0)"
	assert_line "process 20 rank 10 GPU (device 0)"
	run -0 jq -r '[.traceEvents[] | select(.name == "process_name") | .args.name] | length' "$T/out/run.json"
	assert_output 8
	# -k keeps the merged ev stream: all four ranks in it.
	run -0 bash -c 'ev-view -M -H -c rank "$1" | sort -un | tr "\n" " "' _ "$T/out/run.ev"
	assert_output "0 1 2 10 "
}

@test "a failing rank trace fails the run and leaves no timeline" {
	mkrun "$T/run" 0 1
	head -c 700 "$T/run/torch_profiler/rank1/trace.json" >"$T/cut" && mv "$T/cut" "$T/run/torch_profiler/rank1/trace.json"
	run -1 merge-traces -q -o "$T/out" "$T/run"
	assert_output --partial "kineto2ev: "
	assert_output --partial "merge-traces: a conversion failed"
	[ -z "$(ls -A "$T/out")" ]
}

@test "shared data: the aorta sweep merges into one valid file per configuration" {
	need_shared_data
	run -0 merge-traces -z -j 2 -o "$T/merged" "$SHARED_DATA/kineto/aorta-sweep"
	assert_line "merge-traces: wrote 4 timeline(s)"
	run -0 ls "$T/merged"
	assert_output - <<'EOF'
256thread_28ch.json.gz
256thread_56ch.json.gz
512thread_28ch.json.gz
512thread_56ch.json.gz
EOF
	for f in "$T"/merged/*.json.gz; do
		run -0 python3 "$V" "$f" --gzip
		assert_line "process 14 rank 7 GPU (device 7)"
		assert_line --regexp '^flows collective=[0-9]+ launch=[0-9]+$'
	done
	# --layout=aorta reaches ev2perfetto.
	run -0 merge-traces -q --layout=aorta -o "$T/one.json" "$SHARED_DATA/kineto/aorta-sweep/256thread/nccl_28channels"
	run -0 python3 "$V" "$T/one.json"
	assert_line "process 7500 rank 7 CPU (pid 258)"
}

@test "shared data: -a coll and -a coll-drift write every configuration and show the alignment report" {
	need_shared_data
	for mode in coll coll-drift; do
		rm -rf "$T/merged"
		run -0 --separate-stderr merge-traces -a "$mode" -j 2 -o "$T/merged" "$SHARED_DATA/kineto/aorta-sweep"
		grep -q "merge-traces: wrote 4 timeline(s)" <<<"$stderr"
		# The report of every configuration on stderr, residuals included.
		[ "$(grep -c "^ev-merge: align $mode: configuration" <<<"$stderr")" = 4 ]
		grep -q 'align:   rank 7: offset .* residual median .* max ' <<<"$stderr"
		for c in 256thread_28ch 256thread_56ch 512thread_28ch 512thread_56ch; do
			run -0 python3 "$V" "$T/merged/$c.json"
			assert_line "process 14 rank 7 GPU (device 7)"
			# The report file: the reference and seven aligned ranks.
			run -0 awk -F'\t' 'NR > 1 { n[$3]++ } END { print n["reference"] + 0, n["aligned"] + 0 }' "$T/merged/$c.align.tsv"
			assert_output "1 7"
		done
	done
}

@test "-a coll: the alignment report and its TSV name each configuration" {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --ranks 2 --iters 2 --threads 256 --channels 28,56 "$T/sweep"
	merge-traces -a coll -j 2 -o "$T/out" "$T/sweep" 2>"$T/err"
	run -0 grep -c -e '^ev-merge: align coll: configuration 256thread_28ch: 2 ranks' -e '^ev-merge: align coll: configuration 256thread_56ch: 2 ranks' "$T/err"
	assert_output 2
	run -1 grep -F '(single)' "$T/err" "$T/out/256thread_28ch.align.tsv" "$T/out/256thread_56ch.align.tsv"
	run -0 cut -f1 "$T/out/256thread_56ch.align.tsv"
	assert_output "$(printf 'config\n256thread_56ch\n256thread_56ch')"
}

@test "-a coll on traces without collective records says so instead of doing nothing" {
	mkrun "$T/run" 0 1
	# No collective arguments and no NCCL kernel names (kineto2ev infers
	# older PyTorch's collectives from those): nothing to anchor on.
	sed -i 's/"Collective name"/"Unknown arg"/; s/nccl/xccl/g' "$T"/run/torch_profiler/rank*/trace.json
	run -0 --separate-stderr merge-traces -a coll -o "$T/out" "$T/run"
	grep -q "merge-traces: wrote 1 timeline(s)" <<<"$stderr"
	grep -q 'ev-merge: align coll: configuration' <<<"$stderr"
	grep -q 'warning: .*no coll or p2p records' <<<"$stderr"
	[ -s "$T/out/run.align.tsv" ] || ls "$T/out"
}

@test "a symlinked, oddly named sweep with a subset selection; any layout by path regex" {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --ranks 4 --iters 2 --channels 28,42 "$T/real"
	odd_sweep "$T/real" "$T/-my sweep"$'\n'"v2"
	cd "$T"
	run -0 merge-traces -q -k --select threads=512 --ranks 1,3 -o "-out dir" -- "-my sweep"$'\n'"v2"
	run -0 ls "$T/-out dir"
	assert_output - <<'OUT'
512thread_28ch.ev
512thread_28ch.json
512thread_42ch.ev
512thread_42ch.json
OUT
	for c in 28 42; do
		run -0 bash -c 'ev-view -M -H -c rank "$1" | sort -u' _ "$T/-out dir/512thread_${c}ch.ev"
		assert_output $'1\n3'
		python3 "$V" "$T/-out dir/512thread_${c}ch.json"
	done
	# Another layout: <system>-t<T>-c<C>/gpu<R>.json, keys from a regex.
	for t in 256 512; do
		d="$T/exp/mi300 box-t$t-c28"
		mkdir -p "$d"
		for r in 0 1; do ln -s "$T/real/${t}thread/nccl_28channels/torch_profiler/rank$r/trace.json" "$d/gpu$r.json"; done
	done
	run -0 merge-traces -q -x '([^/]*)-t([0-9]+)-c([0-9]+)/gpu([0-9]+)\.json' -K system,threads,channels,rank -o "$T/rx" "$T/exp"
	run -0 ls "$T/rx"
	assert_equal "${#lines[@]}" 2
}

@test "7 of 8 ranks: ev-stats coll's warning about incomplete collectives is passed on, once, counted" {
	python3 "$TESTS_DIR/gen/gen-kineto.py" --run --ranks 8 --iters 2 "$T/run" >/dev/null
	run -0 merge-traces -q -o "$T/all" "$T/run"
	assert_output ""
	rm -r "$T/run/torch_profiler/rank5"
	run -0 merge-traces -q -o "$T/seven" "$T/run"
	assert_output - <<'OUT'
ev-stats: warning: run: 4 collectives were not seen on every rank of their communicator
merge-traces: 1 warning(s) from the tools, shown above: read them before the results
OUT
	# with --ranks too, each configuration named
	python3 "$TESTS_DIR/gen/gen-kineto.py" --ranks 4 --iters 1 --channels 28 "$T/sweep" >/dev/null
	run -0 merge-traces -q --ranks 0-2 -o "$T/sub" "$T/sweep"
	assert_output - <<'OUT'
ev-stats: warning: 256thread_28ch: 2 collectives were not seen on every rank of their communicator
ev-stats: warning: 512thread_28ch: 2 collectives were not seen on every rank of their communicator
merge-traces: 2 warning(s) from the tools, shown above: read them before the results
OUT
}

@test "a run directory named with *, [, ?, a leading - and a newline is a run, not a pattern" {
	mkrun "$T/plain" 0 1
	cd "$T"
	for N in 'gl*ob[1]?' $'-gl*ob[1]?\nrun'; do
		# rank<N>/ folders, then a flat folder of JSON traces
		mkdir -- "./$N" "./$N.flat"
		cp -r plain/torch_profiler/rank0 plain/torch_profiler/rank1 "./$N/"
		cp plain/torch_profiler/rank0/trace.json "./$N.flat/a.json"
		cp plain/torch_profiler/rank1/trace.json "./$N.flat/b.json"
		for d in "$N" "$N.flat"; do
			rm -rf out
			run -0 merge-traces -q -o out -- "$d"
			# the label: the name with its newline shown as a space
			run -0 python3 "$V" "out/${d//$'\n'/ }.json"
			assert_line "process 2 rank 1 GPU (device 0)"
		done
	done
}
