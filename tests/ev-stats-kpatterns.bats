#!/usr/bin/env bats
# ev-stats kernel-patterns: HTA's frequent CUDA kernel sequences
# (get_frequent_cuda_kernel_sequences), by hand and against what HTA
# returned on the shared traces (tests/expected/hta/kpatterns.tsv, README).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	E="$TESTS_DIR/expected/hta"
}

# A hand-made stream: a main thread (tid 1) with ProfilerStep#1 and #2,
# each holding two "aten::lin" ops that launch kernels, and an inner
# "aten::lin_inner" (deeper: not counted); a backward thread (tid 2)
# whose autograd:: op runs inside step 1 and launches one kernel.
fixture() {
	cat >"$T/k.json" <<'JSON'
{"traceEvents": [
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":900},
{"ph":"X","cat":"cpu_op","name":"aten::lin","pid":1,"tid":1,"ts":110,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::lin_inner","pid":1,"tid":1,"ts":120,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":130,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":180,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"cpu_op","name":"aten::lin","pid":1,"tid":1,"ts":300,"dur":60},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":310,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":320,"dur":5,"args":{"correlation":4}},
{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: X","pid":1,"tid":2,"ts":400,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":410,"dur":5,"args":{"correlation":5}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":1000,"dur":500},
{"ph":"X","cat":"cpu_op","name":"aten::lin","pid":1,"tid":1,"ts":1010,"dur":70},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1020,"dur":5,"args":{"correlation":6}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1030,"dur":5,"args":{"correlation":7}},
{"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":200,"dur":10,"args":{"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":220,"dur":20,"args":{"stream":7,"correlation":2}},
{"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":330,"dur":11,"args":{"stream":7,"correlation":3}},
{"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":350,"dur":21,"args":{"stream":7,"correlation":4}},
{"ph":"X","cat":"kernel","name":"kC","pid":0,"tid":7,"ts":420,"dur":30,"args":{"stream":7,"correlation":5}},
{"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":1040,"dur":12,"args":{"stream":7,"correlation":6}},
{"ph":"X","cat":"kernel","name":"kC","pid":0,"tid":7,"ts":1060,"dur":13,"args":{"stream":7,"correlation":7}}
]}
JSON
	kineto2ev -q -o "$T/k.ev" "$T/k.json"
}

@test "kernel-patterns: whole sequences of the shallowest ops, counted, last step left out" {
	fixture
	run -0 ev-stats kernel-patterns --operator=aten::lin --min-pattern-len=2 "$T/k.ev"
	# the two ops of step 1 share a sequence; step 2's op is in the last step
	assert_equal "$output" "$(printf 'rank\tpattern\tcount\tGPU kernel duration (us)\tCPU op duration (us)\n0\taten::lin|kA|kB\t2\t62\t160')"
}

@test "kernel-patterns: the backward thread hangs under its ProfilerStep" {
	fixture
	run -0 ev-stats kernel-patterns --operator=ProfilerStep --min-pattern-len=1 "$T/k.ev"
	# step 1's kernels include kC, launched by the backward thread inside it
	assert_equal "$(cut -f2- <<<"$output" | tail -n +2)" "$(printf 'ProfilerStep#1|kA|kB|kA|kB|kC\t1\t92\t900')"
	run -0 ev-stats kernel-patterns --operator=autograd:: --min-pattern-len=1 "$T/k.ev"
	assert_equal "$(cut -f2- <<<"$output" | tail -n +2)" "$(printf 'autograd::engine::evaluate_function: X|kC\t1\t30\t50')"
}

@test "kernel-patterns: min length, top, sort and the empty table said" {
	fixture
	run -0 --separate-stderr ev-stats kernel-patterns --operator=aten::lin "$T/k.ev"
	assert_equal "$output" "$(printf 'rank\tpattern\tcount\tGPU kernel duration (us)\tCPU op duration (us)')"
	[[ "$stderr" == *"no op whose name contains 'aten::lin' launched 3 or more GPU events"* ]]
	run -0 ev-stats kernel-patterns --operator=aten::lin_inner --min-pattern-len=1 "$T/k.ev"
	# aten::lin is no candidate here; aten::lin_inner is the shallowest
	assert_equal "$(tail -n +2 <<<"$output" | cut -f2-3)" "$(printf 'aten::lin_inner|kA\t1')"
	run -0 ev-stats kernel-patterns --operator=Step --min-pattern-len=1 --top=1 --sort=cpu "$T/k.ev"
	assert_equal "$(tail -n +2 <<<"$output" | wc -l)" 1
	ev-stats kernel-patterns --operator=aten::lin --min-pattern-len=2 --xlsx -o "$T/k.xlsx" "$T/k.ev"
	unzip -p "$T/k.xlsx" xl/workbook.xml | grep -q 'name="frequent_cuda_kernel_sequences"'
	ev-stats --help | grep -q 'frequent_cuda_kernel_sequences for kernel-patterns'
	run -2 ev-stats kernel-patterns --operator=x --sort=bogus "$T/k.ev"
	run -2 ev-stats kernel-patterns --operator=x --min-pattern-len=0 "$T/k.ev"
	run -2 ev-stats kernels --operator=x "$T/k.ev"
}

@test "kernel-patterns: a GPU event that comes before its call, at one time" {
	# The Stream Wait Event has the time of its cudaStreamWaitEvent and
	# sorts on its stream, ahead of the call's thread: it is the op's all
	# the same (cp_alexnet's aten::conv2d, 733 us without it, HTA's 735).
	cat >"$T/w.json" <<'JSON'
{"traceEvents": [
{"ph":"X","cat":"cpu_op","name":"aten::conv","pid":1,"tid":9,"ts":100,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":9,"ts":110,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":9,"ts":130,"dur":2,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":7,"ts":130,"dur":4,"args":{"stream":7,"correlation":2,"cuda_sync_kind":"Stream Wait Event","wait_on_stream":8}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":9,"ts":140,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":120,"dur":10,"args":{"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":150,"dur":20,"args":{"stream":7,"correlation":3}}
]}
JSON
	kineto2ev -q -o "$T/w.ev" "$T/w.json"
	run -0 ev-stats kernel-patterns --operator=aten::conv --min-pattern-len=1 "$T/w.ev"
	assert_equal "$(tail -n +2 <<<"$output" | cut -f2-)" "$(printf 'aten::conv|kA|Stream Wait Event|kB\t1\t34\t100')"
}

@test "kernel-patterns: a zero-length event where one op closes and one opens" {
	# HTA's comparator has open(item) < as_strided < close(select) <
	# open(item) at 132: its sort may put the as_strided's close before
	# its open, and its stack then keeps aten::item open, the later
	# aten::item under it.  evkit's order is one order: both are top level.
	cat >"$T/z.json" <<'JSON'
{"traceEvents": [
{"ph":"X","cat":"cpu_op","name":"aten::select","pid":1,"tid":9,"ts":131,"dur":1},
{"ph":"X","cat":"cpu_op","name":"aten::as_strided","pid":1,"tid":9,"ts":132,"dur":0},
{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":9,"ts":132,"dur":1},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":9,"ts":132,"dur":1,"args":{"correlation":1}},
{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":9,"ts":140,"dur":3},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":9,"ts":141,"dur":1,"args":{"correlation":2}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","pid":0,"tid":7,"ts":200,"dur":10,"args":{"stream":7,"correlation":1}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD","pid":0,"tid":7,"ts":220,"dur":20,"args":{"stream":7,"correlation":2}}
]}
JSON
	kineto2ev -q -o "$T/z.ev" "$T/z.json"
	run -0 ev-stats kernel-patterns --operator=aten:: --min-pattern-len=1 "$T/z.ev"
	assert_equal "$(tail -n +2 <<<"$output" | cut -f2-)" "$(printf 'aten::item|Memcpy DtoD\t1\t20\t3\naten::item|Memcpy DtoH\t1\t10\t1')"
}

# Per row of a kernel-patterns table (rank column cut): op name, count,
# GPU and CPU sums, pattern length, sha256 of its names sorted.
kp_digest() {
	local pat rest
	while IFS=$'\t' read -r pat rest; do
		printf '%s\t%s\t%s\t%s\n' "${pat%%|*}" "$rest" "$(tr '|' '\n' <<<"$pat" | wc -l)" \
			"$(tr '|' '\n' <<<"$pat" | LC_ALL=C sort | head -c -1 | sha256sum | cut -d' ' -f1)"
	done
}

@test "kernel-patterns: negative_queue's steps, HTA with a consistent event order" {
	need_shared_data
	local path
	path=$(awk -F'\t' '$1 == "negative_queue_length_values_check" { print $2 }' "$E/traces.tsv")
	kineto2ev -q -o "$T/nq.ev" "$SHARED_DATA/kineto/hta/$path"
	ev-stats kernel-patterns -q --operator=ProfilerStep --min-pattern-len=3 "$T/nq.ev" |
		tail -n +2 | cut -f2- | kp_digest >"$T/ours"
	[ "$(wc -l <"$T/ours")" -eq 4 ]
	# equal to HTA's table once its sort is given one order (README)
	run -0 awk -F'\t' 'NR == FNR { if ($1 == "consistent") ref[++n] = $5 "\t" $6 "\t" $7 "\t" $8 "\t" $9 "\t" $10; next }
		{ split(ref[FNR], r, "\t")
		  if ($1 != r[1] || $2 != r[2] || $5 != r[5] || $6 != r[6]) { print "row " FNR " differs"; bad++ }
		  for (i = 3; i <= 4; i++) { d = $i - r[i]; if (d < 0) d = -d; if (d > 1e-6 * r[i]) { print "row " FNR " col " i; bad++ } } }
		END { if (FNR != n) print "rows: " FNR " vs " n; print "bad " bad + 0 }' "$E/kpatterns_order.tsv" "$T/ours"
	assert_equal "$output" "bad 0"
	# HTA as it is moves each step's backward into the step before: the
	# same GPU events and time in all, other counts per step
	run -0 awk -F'\t' 'NR == FNR { if ($1 == "hta") { g += $7; l += $9; c[++n] = $9 } next }
		{ G += $3; L += $5; if ($5 != c[FNR]) m++ }
		END { print (g == G && l == L) " " m }' "$E/kpatterns_order.tsv" "$T/ours"
	assert_equal "$output" "1 2"
}

@test "kernel-patterns: HTA's tables on the shared traces" {
	need_shared_data
	local n op ml path
	cut -f1-3 "$E/kpatterns.tsv" | grep -v '^#' | sort -u >"$T/settings"
	[ "$(wc -l <"$T/settings")" -ge 10 ]
	while read -r n op ml; do
		path=$(awk -F'\t' -v n="$n" '$1 == n { print $2 }' "$E/traces.tsv")
		[ -f "$T/$n.ev" ] || kineto2ev -q -o "$T/$n.ev" "$SHARED_DATA/kineto/hta/$path"
		ev-stats kernel-patterns -q --operator="$op" --min-pattern-len="$ml" "$T/$n.ev" |
			awk -F'\t' -v n="$n" -v o="$op" -v m="$ml" 'NR > 1 { print n "\t" o "\t" m "\t" $2 "\t" $3 "\t" $4 "\t" $5 }' >>"$T/ours"
		awk -F'\t' -v n="$n" -v o="$op" -v m="$ml" '$1 == n && $2 == o && $3 == m && $5 > 0' "$E/kpatterns.tsv" >>"$T/ref"
	done <"$T/settings"
	# same rows in the same order, counts exact, durations within 1e-6
	run -0 awk -F'\t' 'NR == FNR { ref[FNR] = $0; nref = FNR; next }
		{ split(ref[FNR], r, "\t")
		  if ($1 != r[1] || $4 != r[4] || $5 != r[5]) { print "row " FNR " differs"; bad++; next }
		  for (i = 6; i <= 7; i++) { d = $i - r[i]; if (d < 0) d = -d; if (d > 1e-6 * (r[i] > 1 ? r[i] : 1)) { print "row " FNR " col " i; bad++ } } }
		END { if (FNR != nref) print "rows: " FNR " vs " nref; print "bad " bad + 0 }' "$T/ref" "$T/ours"
	assert_equal "$output" "bad 0"
	[ "$(wc -l <"$T/ours")" -ge 80 ]
}

# The marks of an --annotate file as "type op stream ts name sig id aux".
marks() {
	ev-view "$1" | awk -F'\t' '$1 == "mark" { print $1, $2, $4, $5, $8 "/" $9, $13, $16 }'
}

@test "kernel-patterns --annotate: a mark on each op and GPU event of the patterns' instances" {
	fixture
	run -0 ev-stats kernel-patterns --operator=aten::lin --min-pattern-len=2 --annotate="$T/a.ev" "$T/k.ev"
	# the table is unchanged; the two ops of step 1 are marked (their
	# thread at the op's start, stream 7 at each kernel's), the op of the
	# last step is not, nor the inner op or the backward thread's kernel
	assert_equal "$(tail -n +2 <<<"$output")" "$(printf '0\taten::lin|kA|kB\t2\t62\t160')"
	assert_equal "$(marks "$T/a.ev")" "$(printf '%s\n' \
		'mark user 1 110000 pattern 1: 2x/aten::lin 1 0' \
		'mark gpu_user 7 200000 pattern 1: 2x/kA 1 1' \
		'mark gpu_user 7 220000 pattern 1: 2x/kB 1 2' \
		'mark user 1 300000 pattern 1: 2x/aten::lin 2 0' \
		'mark gpu_user 7 330000 pattern 1: 2x/kA 2 1' \
		'mark gpu_user 7 350000 pattern 1: 2x/kB 2 2')"
	# ProfilerStep: step 1 with the backward thread's kernel, not step 2
	ev-stats kernel-patterns --operator=ProfilerStep --min-pattern-len=1 --annotate="$T/s.ev" "$T/k.ev" >/dev/null
	assert_equal "$(marks "$T/s.ev" | cut -d' ' -f3-4 | paste -sd' ')" "1 100000 7 200000 7 220000 7 330000 7 350000 7 420000"
	# ev-merge takes it beside the input; ev2perfetto draws the marks
	# and an arrow from each op's mark to its GPU events' marks
	ev-merge "$T/k.ev" "$T/a.ev" | ev2perfetto -o "$T/m.json"
	run -0 jq -r '[.traceEvents[] | select(.ph == "i") | "\(.pid)/\(.tid)/\(.ts)/\(.name)/\(.args.id)"] | join(" ")' "$T/m.json"
	assert_equal "$output" "1/1/10/pattern 1: 2x/1 0/7/100/pattern 1: 2x/1 0/7/120/pattern 1: 2x/1 1/1/200/pattern 1: 2x/2 0/7/230/pattern 1: 2x/2 0/7/250/pattern 1: 2x/2"
	run -0 jq -r '[.traceEvents[] | select(.cat == "pattern") | "\(.ph)\(.pid)@\(.ts)"] | join(" ")' "$T/m.json"
	assert_equal "$output" "s1@10 f0@100 s1@10 f0@120 s1@200 f0@230 s1@200 f0@250"
}

@test "kernel-patterns --annotate: only the first --top patterns of a rank [HTA's 5]" {
	cat >"$T/t.json" <<'JSON'
{"traceEvents": [
{"ph":"X","cat":"cpu_op","name":"aten::op","pid":1,"tid":1,"ts":100,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"cpu_op","name":"aten::op","pid":1,"tid":1,"ts":200,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":210,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"cpu_op","name":"aten::op","pid":1,"tid":1,"ts":300,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":310,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":120,"dur":10,"args":{"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"kB","pid":0,"tid":7,"ts":220,"dur":10,"args":{"stream":7,"correlation":2}},
{"ph":"X","cat":"kernel","name":"kA","pid":0,"tid":7,"ts":320,"dur":10,"args":{"stream":7,"correlation":3}}
]}
JSON
	kineto2ev -q -o "$T/t.ev" "$T/t.json"
	ev-stats kernel-patterns --operator=aten::op --min-pattern-len=1 --annotate="$T/a.ev" "$T/t.ev" >/dev/null
	assert_equal "$(marks "$T/a.ev" | cut -d' ' -f4- | paste -sd,)" \
		"100000 pattern 1: 2x/aten::op 1 0,120000 pattern 1: 2x/kA 1 1,200000 pattern 2: 1x/aten::op 2 0,220000 pattern 2: 1x/kB 2 1,300000 pattern 1: 2x/aten::op 3 0,320000 pattern 1: 2x/kA 3 1"
	run -0 ev-stats kernel-patterns --operator=aten::op --min-pattern-len=1 --top=1 --annotate="$T/a.ev" "$T/t.ev"
	assert_equal "$(tail -n +2 <<<"$output" | wc -l)" 1
	assert_equal "$(marks "$T/a.ev" | cut -d' ' -f4 | paste -sd' ')" "100000 120000 300000 320000"
	# an empty table: an empty stream
	ev-stats kernel-patterns -q --operator=aten::op --annotate="$T/e.ev" "$T/t.ev" >/dev/null
	assert_equal "$(grep -c '^#end 0' "$T/e.ev")" 1
}

@test "kernel-patterns --annotate: errors, and the file written only when complete" {
	fixture
	run -1 --separate-stderr ev-stats kernel-patterns --operator=aten::lin --annotate="$T/no/such/dir/a.ev" "$T/k.ev"
	assert_equal "$stderr" "ev-stats: $T/no/such/dir/a.ev: No such file or directory"
	run -1 ev-stats kernel-patterns --operator=aten::lin --annotate="$T/k.ev" "$T/k.ev"
	[[ "$output" == *"is also an input"* ]]
	run -2 ev-stats kernels --annotate="$T/a.ev" "$T/k.ev"
	[[ "$output" == *"--annotate does not apply (it is for: kernel-patterns)"* ]]
	# a truncated input: exit 1, no file, no temporary left
	mkdir "$T/d"
	head -n -1 "$T/k.ev" >"$T/cut.ev"
	run -1 ev-stats kernel-patterns --operator=aten::lin --annotate="$T/d/a.ev" "$T/cut.ev"
	assert_equal "$(ls -A "$T/d")" ""
	ev-stats --help | grep -q -- '--annotate=FILE'
}

@test "kernel-patterns --annotate: HTA's top_k patterns marked as often as HTA counts them" {
	need_shared_data
	local n op ml path
	cut -f1-3 "$E/kpatterns.tsv" | grep -v '^#' | sort -u >"$T/settings"
	while read -r n op ml; do
		path=$(awk -F'\t' -v n="$n" '$1 == n { print $2 }' "$E/traces.tsv")
		[ -f "$T/$n.ev" ] || kineto2ev -q -o "$T/$n.ev" "$SHARED_DATA/kineto/hta/$path"
		ev-stats kernel-patterns -q --operator="$op" --min-pattern-len="$ml" --annotate="$T/a.ev" "$T/$n.ev" >/dev/null
		# per pattern (place N and count C from the marks' name "pattern
		# N: Cx"): the instances marked (one op mark each) and all the
		# marks (the op's and one per GPU event of the pattern)
		ev-view "$T/a.ev" | awk -F'\t' -v s="$n $op $ml" '$1 == "mark" { all[$8]++; if ($16 == 0) c[$8]++ }
			END { for (p in c) { split(p, w, /[ :x]+/); print s "\t" w[2] "\t" w[3] "\t" c[p] "\t" all[p] } }' |
			sort -t$'\t' -k2,2n >>"$T/ours"
		awk -F'\t' -v n="$n" -v o="$op" -v m="$ml" '$1 == n && $2 == o && $3 == m && $5 > 0 && ++k <= 5 {
			print n " " o " " m "\t" k "\t" $5 "\t" $5 "\t" $5 * split($4, e, "|") }' "$E/kpatterns.tsv" >>"$T/ref"
	done <"$T/settings"
	run -0 diff "$T/ref" "$T/ours"
	[ "$(wc -l <"$T/ref")" -ge 20 ]
}
