#!/usr/bin/env bats
# Slurm: evkit-slurm.sh's job arrays, and gemm-variance, compare-configs and
# merge-traces --slurm with their per-file conversions as one job array, on
# a one-node cluster started on this machine once for the file
# (tests/slurm-cluster.bash), skipped with the reason when it cannot start.
bats_require_minimum_version 1.5.0
load ../test_helper
load ../slurm-cluster

setup_file() {
	slurm_setup_file
}

teardown_file() {
	slurm_teardown_file
}

setup() {
	if [ -n "$SLURM_WHY" ]; then
		[ -z "${CI:-}" ] || fail "no Slurm cluster (CI must have one: make deps-full): $SLURM_WHY"
		skip "no Slurm cluster: $SLURM_WHY"
	fi
	T="$BATS_TEST_TMPDIR"
	GEN="$TESTS_DIR/gen/gen-kineto.py"
	cd "$T"
}

@test "a job array runs every command, at most N at a time, and passes stderr on" {
	run --separate-stderr bash -c '. "$1"; printf "%s\0" "echo a >out.0" "echo b >out.1; echo warn-b >&2" "echo c >out.2" |
		evk_slurm_run 2 ""' _ "$TESTS_DIR/../pipelines/evkit-slurm.sh"
	assert_success
	[ "$(cat out.0 out.1 out.2)" = "$(printf 'a\nb\nc')" ]
	[[ "$stderr" == *"[slurm task 1] warn-b"* ]]
	# Nothing of the task directory is left.
	[ -z "$(find . -name '.evkit-slurm.*')" ]
}

@test "a failing task fails the run and is named with its command" {
	run --separate-stderr bash -c '. "$1"; printf "%s\0" "true" "echo boom >&2; exit 3" | evk_slurm_run 2 ""' _ \
		"$TESTS_DIR/../pipelines/evkit-slurm.sh"
	assert_failure
	[[ "$stderr" == *"task 1 exited 3: echo boom >&2; exit 3"* ]]
	[[ "$stderr" == *"[slurm task 1] boom"* ]]
}

@test "sbatch options pass through, and a refused job is explained" {
	run --separate-stderr bash -c '. "$1"; printf "%s\0" "true" | evk_slurm_run 1 "--partition=nosuchpartition"' _ \
		"$TESTS_DIR/../pipelines/evkit-slurm.sh"
	assert_failure
	[[ "$stderr" == *"sbatch refused the job"*"artition"* ]]
}

@test "kineto2ev conversions as a job array give the files a local run gives" {
	mkdir -p traces
	"$EV_BIN/gen-kineto" --ranks 2 --iters 1 traces >/dev/null
	local cmds=() f
	for f in traces/rank*/trace.json*; do
		cmds+=("$EV_BIN/kineto2ev -q -o $PWD/${f%%/trace*}.slurm.ev $PWD/$f")
		"$EV_BIN/kineto2ev" -q -o "${f%%/trace*}.local.ev" "$f"
	done
	run bash -c '. "$1"; shift; printf "%s\0" "$@" | evk_slurm_run 2 ""' _ "$TESTS_DIR/../pipelines/evkit-slurm.sh" "${cmds[@]}"
	assert_success
	for f in traces/rank*; do
		cmp <(grep -v '^#src' "$f.local.ev") <(grep -v '^#src' "$f.slurm.ev")
	done
}

@test "gemm-variance --slurm: the same tables as a local run, nothing left behind" {
	python3 "$GEN" --ranks 2 --iters 3 --jitter 5 "$T/sweep"
	run -0 gemm-variance -q --no-traces -o "$T/local" "$T/sweep"
	run -0 --separate-stderr gemm-variance -j 2 --no-traces --slurm='--job-name=evkit-gv --time=5' -o "$T/slurm" "$T/sweep"
	[[ "$stderr" == *"submitting the jobs as one Slurm job array (sbatch --job-name=evkit-gv --time=5)"* ]]
	for f in top5_gemm_kernels_time_variance.tsv gemm_by_config.tsv gemm_across_configs.tsv variance_summary.tsv; do
		cmp "$T/local/$f" "$T/slurm/$f"
	done
	run -0 find "$T/slurm" -name '.*'
	assert_output ""
}

@test "compare-configs --slurm: a refused job array is explained, OUT untouched" {
	python3 "$GEN" --ranks 2 --iters 2 --threads 256,512 --channels 28 "$T/sweep"
	S="$T/sweep"
	run -0 compare-configs -q --slurm -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	run -0 cat "$T/out/dashboard.tsv"
	assert_line --partial "GPU_total_time_ms"
	before=$(cd "$T/out" && find . -type f -exec md5sum {} + | sort)
	run -1 compare-configs -q --slurm=--partition=nosuchpartition -b "$S/256thread/nccl_28channels" -t "$S/512thread/nccl_28channels" -o "$T/out"
	assert_output --partial "sbatch refused the job"
	assert_output --partial "compare-configs: a conversion failed"
	assert_equal "$(cd "$T/out" && find . -type f -exec md5sum {} + | sort)" "$before"
	run -0 find "$T/out" -name '.*'
	assert_output ""
}

@test "merge-traces --slurm: the same timelines and alignment reports as a local run" {
	python3 "$GEN" --ranks 2 --iters 2 --threads 256,512 --channels 28 "$T/sweep"
	run -0 merge-traces -q -k -a coll -o "$T/local" "$T/sweep"
	run -0 --separate-stderr merge-traces -j 2 -k -a coll --slurm='--job-name=evkit-mt --time=5' -o "$T/slurm" "$T/sweep"
	[[ "$stderr" == *"submitting the jobs as one Slurm job array"* ]]
	[[ "$stderr" == *"ev-merge: align coll: configuration"* ]]
	for f in 256thread_28ch 512thread_28ch; do
		cmp "$T/local/$f.json" "$T/slurm/$f.json"
		cmp "$T/local/$f.ev" "$T/slurm/$f.ev"
		cmp "$T/local/$f.align.tsv" "$T/slurm/$f.align.tsv"
	done
	run -0 find "$T/slurm" -name '.*'
	assert_output ""
}

@test "TERM while a job array runs: the array is cancelled, its task directory and the new OUT removed" {
	python3 "$GEN" --ranks 2 --iters 2 --threads 256 --channels 28,56 "$T/sweep"
	# A kineto2ev that hangs on the node (sbatch passes PATH on).
	mkdir -p "$T/slow"
	printf '#!/bin/bash\nexec sleep 300\n' >"$T/slow/kineto2ev"
	chmod +x "$T/slow/kineto2ev"
	PATH="$T/slow:$PATH" EVKIT_SLURM_DIR="$T" gemm-variance -q --no-traces --slurm='--job-name=evkit-term --time=5' \
		-o "$T/new/out" "$T/sweep" 2>"$T/err" &
	pid=$!
	for _ in $(seq 200); do [ -n "$(squeue -h -n evkit-term -t R 2>/dev/null)" ] && break; sleep 0.1; done
	[ -n "$(squeue -h -n evkit-term -t R)" ] || { cat "$T/err"; fail "the array never ran"; }
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	run -0 cat "$T/err"
	assert_output "gemm-variance: interrupted by SIGTERM: stopped its jobs, removed its temporary files and the output directory it had created; earlier outputs are left as they were"
	for _ in $(seq 100); do [ -z "$(squeue -h -n evkit-term 2>/dev/null)" ] && break; sleep 0.1; done
	run -0 squeue -h -n evkit-term
	assert_output ""
	run -0 find "$T" -maxdepth 1 -name '.evkit-slurm.*'
	assert_output ""
	[ ! -e "$T/new" ]
}
