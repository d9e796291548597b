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

@test "a process group whose only member is a zombie has ended (the supervisor does not wait for it)" {
	# A process whose parent never reaps it: the child leads a group of its
	# own and exits; the parent sleeps.
	python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os._exit(0)
open(sys.argv[1], "w").write(str(pid))
time.sleep(30)' "$T/pgid" >/dev/null 2>&1 3>&- &
	holder=$!
	for _ in $(seq 1000); do [ -s "$T/pgid" ] && [ "$(cut -d' ' -f3 "/proc/$(cat "$T/pgid")/stat" 2>/dev/null)" = Z ] && break; sleep 0.01; done
	pg=$(cat "$T/pgid")
	[ "$(cut -d' ' -f3 "/proc/$pg/stat")" = Z ]
	kill -0 -- "-$pg"
	run ! _evk_group_runs "$pg"
	# A running member counts.
	run -0 _evk_group_runs "$(ps -o pgid= -p "$holder" | tr -d ' ')"
	kill "$holder"
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

@test "discovery follows symlinks: sweep directories, run directories and trace files" {
	mk "$T/real/256thread/nccl_28channels/torch_profiler/rank0/trace.json"
	mk "$T/real/256thread/nccl_28channels/torch_profiler/rank1/trace.json"
	mkdir -p "$T/sweep/512thread/nccl_8channels/torch_profiler/rank0"
	ln -s "$T/real/256thread" "$T/sweep/256thread"
	ln -s "$T/real/256thread/nccl_28channels/torch_profiler/rank0/trace.json" "$T/sweep/512thread/nccl_8channels/torch_profiler/rank0/trace.json"
	run -0 evk_sweep_configs "$T/sweep"
	assert_line --index 0 "$(printf '256thread_28ch\t%s\tthreads=256 channels=28' "$T/sweep/256thread/nccl_28channels")"
	assert_line --index 1 "$(printf '512thread_8ch\t%s\tthreads=512 channels=8' "$T/sweep/512thread/nccl_8channels")"
	run -0 evk_rank_traces "$T/sweep/512thread/nccl_8channels"
	assert_output "$T/sweep/512thread/nccl_8channels/torch_profiler/rank0/trace.json"
}

@test "evk_discover: a flat folder, --select, --ranks and free-text labels" {
	mk "$T/flat run/worker_1.json"
	mk "$T/flat run/rank0.json.gz"
	EVK_PROG=t
	evk_discover "$T/flat run"
	assert_equal "${EVK_CFG_LABEL[*]}" "flat run"
	assert_equal "$EVK_KEYS" ""
	eval "files=(${EVK_CFG_FILES[0]})"
	assert_equal "${files[0]}" "$T/flat run/rank0.json.gz"
	assert_equal "${#files[@]}" 2
	for t in 256 512; do for c in 28 56; do for r in 0 1 2; do
		mk "$T/s/${t}thread/nccl_${c}channels/torch_profiler/rank$r/trace.json"
	done; done; done
	EVK_SELECT=(threads=512 channels=56,28) EVK_RANKS=0,2
	evk_discover "$T/s"
	assert_equal "${EVK_CFG_LABEL[*]}" "512thread_28ch 512thread_56ch"
	eval "files=(${EVK_CFG_FILES[1]})"
	assert_equal "${files[*]}" "$T/s/512thread/nccl_56channels/torch_profiler/rank0/trace.json $T/s/512thread/nccl_56channels/torch_profiler/rank2/trace.json"
	assert_equal "${EVK_CFG_RANKFILTER[*]}" "0 0"
	# A file whose rank is not in its path: the stream is filtered instead.
	EVK_SELECT=() EVK_RANKS=1
	evk_discover "$T/flat run"
	assert_equal "${EVK_CFG_NFILES[0]} ${EVK_CFG_RANKFILTER[0]}" "1 1"
	run -0 evk_convert_files_cmd /o.ev 1 "${EVK_CFG_FILES[0]}"
	assert_output --partial "ev-view -q --ev --rank=1"
}

@test "evk_discover --path-regex: keys and ranks from the path, any layout" {
	for s in mi300 h100; do for r in 0 1; do mk "$T/x/$s/run 7/gpu$r.json"; done; done
	mk "$T/x/README.json"
	EVK_PROG=t EVK_REGEX='^([^/]+)/run ([0-9]+)/gpu([0-9]+)\.json$' EVK_REGEX_KEYS=system,run,rank
	evk_discover "$T/x"
	assert_equal "$EVK_KEYS" "system,run"
	assert_equal "${EVK_CFG_LABEL[*]}" "h100_7 mi300_7"
	assert_equal "${EVK_CFG_KV[1]}" "system=mi300 run=7"
	EVK_RANKS=1
	evk_discover "$T/x"
	eval "files=(${EVK_CFG_FILES[0]})"
	assert_equal "${files[*]}" "$T/x/h100/run 7/gpu1.json"
}

@test "report tables: rounded numbers with the exact value on hover, short names, one escape" {
	long="Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_DTL0_DTVA0_DVO0_ETSP_EPS1_FL0_GRVW8_GSU1_GSUASB_GLS0_ISA942"
	printf 'name\ttime_ms\tcount\tpct\tnote\n%s\t27.298999999999978\t4194304\t-5.43970988214\ta -> b\ngemm\t1608.86657975\t3\t0.000012345\tx\n' "$long" >"$T/t.tsv"
	rpt_begin "$T/r.html" "A > B"
	rpt_p "C -> D"
	rpt_table "$T/t.tsv"
	rpt_end
	run -1 grep -e '>gt;' -e '&amp;gt;' "$T/r.html"
	run -0 grep -c '<title>A &gt; B</title>' "$T/r.html"
	run -0 grep -c '<p class="note">C -&gt; D</p>' "$T/r.html"
	run -0 grep -o '<td title="27.298999999999978">27.299</td>' "$T/r.html"
	run -0 grep -o '<td>4194304</td>' "$T/r.html"
	run -0 grep -o '<td class="neg" title="-5.43970988214">-5.4397</td>' "$T/r.html"
	run -0 grep -o '<td title="1608.86657975">1608.9</td>' "$T/r.html"
	run -0 grep -o '<td class="pos" title="0.000012345">0.000012</td>' "$T/r.html"
	# The long name: shortened in the cell, whole in its title.
	run -0 grep -o "<td class=\"w\" title=\"$long\">Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32…1_GSUASB_GLS0_ISA942</td>" "$T/r.html"
	# The TSV keeps every digit.
	run -0 grep -c '27.298999999999978' "$T/t.tsv"
}

@test "supervised pipelines: --version, helpers found when installed under libexec" {
	run -0 "$ROOT_DIR/pipelines/compare-configs" --version
	assert_line --index 0 --regexp '^compare-configs \(evkit\) [0-9]+\.[0-9]+\.[0-9]+$'
	# An install layout: bin/ with the pipelines, libexec/evkit/ with the helpers.
	mkdir -p "$T/p/bin" "$T/p/libexec/evkit"
	cp "$ROOT_DIR/pipelines/gemm-variance" "$ROOT_DIR/pipelines/compare-sweeps" "$ROOT_DIR/pipelines/compare-configs" "$T/p/bin/"
	cp "$ROOT_DIR/pipelines/evkit-common.sh" "$ROOT_DIR/pipelines/evkit-report.sh" "$T/p/libexec/evkit/"
	cp "$EV_BIN/ev-view" "$T/p/bin/"
	for p in gemm-variance compare-sweeps compare-configs; do
		run -0 "$T/p/bin/$p" --version
		assert_line --index 0 --regexp "^$p \(evkit\) [0-9]+\.[0-9]+\.[0-9]+$"
		run -0 "$T/p/bin/$p" --help
	done
}

@test "evk_show: each distinct line once with its count; lines differing only in numbers folded, with the range" {
	{
		printf 'kineto2ev: warning: a/rank3.json: 12 kernels overrun their stream by 1.5 us\n'
		printf 'kineto2ev: warning: a/rank3.json: 7 kernels overrun their stream by 0.25 us\n'
		printf 'kineto2ev: warning: a/rank3.json: 9 kernels overrun their stream by 0.25 us\n'
		printf 'kineto2ev: warning: a/rank5.json: 7 kernels overrun their stream by 0.25 us\n'
		printf 'ev-merge: note: same 1\nev-merge: note: same 1\n'
	} >"$T/w.txt"
	EVK_NWARN=0
	evk_show "$T/w.txt" 2>"$T/shown"
	run -0 cat "$T/shown"
	assert_output - <<'OUT'
kineto2ev: warning: a/rank3.json: 7..12 kernels overrun their stream by 0.25..1.5 us [3 times]
kineto2ev: warning: a/rank5.json: 7 kernels overrun their stream by 0.25 us
ev-merge: note: same 1 [2 times]
OUT
	# Every warning line still counts for the closing total.
	[ "$EVK_NWARN" = 4 ]
}
