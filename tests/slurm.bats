#!/usr/bin/env bats
# Per-file jobs on a real Slurm: a one-node cluster started on this machine
# (tests/slurm-cluster.bash), skipped with the reason when it cannot start.
bats_require_minimum_version 1.5.0
load test_helper
load slurm-cluster

setup_file() {
	slurm_setup_file
}

teardown_file() {
	slurm_teardown_file
}

setup() {
	[ -z "$SLURM_WHY" ] || skip "no Slurm cluster: $SLURM_WHY"
	# shellcheck source=pipelines/evkit-slurm.sh
	. "$TESTS_DIR/../pipelines/evkit-slurm.sh"
	cd "$BATS_TEST_TMPDIR"
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
