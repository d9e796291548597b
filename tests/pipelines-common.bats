#!/usr/bin/env bats
# The shell helpers shared by the pipelines: sweep discovery, rank order,
# parallel runs, HTML report pieces.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	. "$ROOT_DIR/pipelines/evkit-common.sh"
	. "$ROOT_DIR/pipelines/evkit-report.sh"
	T="$BATS_TEST_TMPDIR"
}

mk() { mkdir -p "$(dirname "$1")"; : >"$1"; }

@test "sweep layouts are discovered with their keys, in numeric order" {
	for t in 512 256; do for c in 70 28 8; do
		mk "$T/sweep/${t}thread/nccl_${c}channels/torch_profiler/rank0/trace.json"
	done; done
	mk "$T/sweep/unrelated/file.json"
	run -0 evk_sweep_configs "$T/sweep"
	assert_line --index 0 "$(printf '256thread_8ch\t%s\tthreads=256 channels=8' "$T/sweep/256thread/nccl_8channels")"
	assert_line --index 2 "$(printf '256thread_70ch\t%s\tthreads=256 channels=70' "$T/sweep/256thread/nccl_70channels")"
	assert_equal "${#lines[@]}" 6
	mk "$T/cu/56cu_256threads/torch_profiler/rank0/t.json"
	mk "$T/cu/37cu_384threads/torch_profiler/rank0/t.json"
	run -0 evk_sweep_configs "$T/cu"
	assert_line --index 0 "$(printf '37cu_384threads\t%s\tcu=37 threads=384' "$T/cu/37cu_384threads")"
}

@test "a single run directory is one configuration" {
	mk "$T/run/torch_profiler/rank0/t.json"
	run -0 evk_sweep_configs "$T/run"
	assert_output "$(printf 'run\t%s\t' "$T/run")"
}

@test "rank traces come in numeric rank order, any count" {
	for r in 10 2 0 1; do mk "$T/run/torch_profiler/rank$r/trace.json.gz"; done
	run -0 evk_rank_traces "$T/run"
	assert_line --index 0 "$T/run/torch_profiler/rank0/trace.json.gz"
	assert_line --index 2 "$T/run/torch_profiler/rank2/trace.json.gz"
	assert_line --index 3 "$T/run/torch_profiler/rank10/trace.json.gz"
}

@test "the parallel runner runs everything and reports failure" {
	run -0 bash -c '. "$0"; printf "echo a >%s/a\0echo b >%s/b\0" "$1" "$1" | evk_parallel 2' "$ROOT_DIR/pipelines/evkit-common.sh" "$T"
	[ -s "$T/a" ] && [ -s "$T/b" ]
	run bash -c '. "$0"; printf "true\0false\0" | evk_parallel 2' "$ROOT_DIR/pipelines/evkit-common.sh"
	[ "$status" -ne 0 ]
}

@test "the HTML report escapes text, colours status and embeds plots" {
	printf 'metric\tbase\ttest\tdiff_pct\tstatus\n<gemm>\t1\t2\t100\tWorse\ncomm\t2\t1\t-50\tBetter\n' >"$T/t.tsv"
	plot_bars "$T/t.tsv" metric base,test "$T/p.svg" "Bars" ms
	rpt_begin "$T/r.html" "A & B"
	rpt_table "$T/t.tsv"
	rpt_svg "$T/p.svg"
	rpt_end
	run -0 grep -c '<td class="t">&lt;gemm&gt;</td>' "$T/r.html"
	run -0 grep -c '<td class="worse">Worse</td>' "$T/r.html"
	run -0 grep -c '<svg' "$T/r.html"
	run -1 grep -E '<script|https?://[^"]*\.(js|css)' "$T/r.html"
	run -0 grep -c '<title>A &amp; B</title>' "$T/r.html"
}
