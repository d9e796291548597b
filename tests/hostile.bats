#!/usr/bin/env bats
# Hostile input: what reaches the terminal, closed standard streams,
# compressed input that is not what it says.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "control bytes from names and paths reach the terminal escaped" {
	# A path with an ESC sequence, and an ev stream whose #src line holds one.
	run -1 kineto2ev -o "$T/x.ev" $'/nonexistent/\e[2Jx.json'
	assert_output --partial '/nonexistent/\x1b[2Jx.json'
	[[ "$output" != *$'\e'* ]]
	printf '#ev 1.0 96 clock=ns\n#src 0 label=\e[31mred\r\n' >"$T/ctl.ev"
	run -1 ev-view "$T/ctl.ev"
	[[ "$output" != *$'\e'* && "$output" != *$'\r'* ]]
	# The pipelines too.
	run -1 gemm-variance -o "$T/out" $'/nonexistent/\e[2Jdir'
	assert_output --partial '/nonexistent/?[2Jdir'
	[[ "$output" != *$'\e'* ]]
}

@test "a closed standard stream is named, never confused with a file" {
	gen-kineto -q --ranks 1 --iters 1 "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T/g/rank0/trace.json"
	for t in ev-view ev-merge "ev-stats timeline" "ev-overlap --summary" coll-expand ev2perfetto; do
		# Reading standard input when it is closed.
		run -1 bash -c "$t <&-"
		assert_output --regexp "standard input: (Bad file descriptor|empty input)"
		# Writing standard output when it is closed.
		run -1 bash -c "$t \"\$1\" >&-" _ "$T/g.ev"
		assert_output --partial "standard output: Bad file descriptor"
		# A file read with standard input closed is still that file.
		run -0 bash -c "$t -o \"\$2\" \"\$1\" <&-" _ "$T/g.ev" "$T/out"
	done
	# An input opened while stdout is closed must not become standard output.
	run -0 bash -c 'kineto2ev -q -o "$2" "$1" >&- <&-' _ "$T/g/rank0/trace.json" "$T/k.ev"
	cmp "$T/k.ev" "$T/g.ev"
	cmp <(gzip -c "$T/g/rank0/trace.json" | gzip -dc) "$T/g/rank0/trace.json"
}

@test "gzip problems say what they are and where" {
	gen-kineto -q --ranks 1 --iters 2 "$T/g"
	gzip -c "$T/g/rank0/trace.json" >"$T/t.json.gz"
	n=$(stat -c %s "$T/t.json.gz")
	head -c $((n / 2)) "$T/t.json.gz" >"$T/cut.json.gz"
	run -1 kineto2ev -o "$T/x.ev" "$T/cut.json.gz"
	assert_output --partial "gzip: the file ends inside the compressed data, after $((n / 2)) compressed bytes"
	# A damaged byte in the middle.
	cp "$T/t.json.gz" "$T/bad.json.gz"
	printf '\377\377\377\377\377\377\377\377' | dd of="$T/bad.json.gz" bs=1 seek=$((n / 2)) conv=notrunc 2>/dev/null
	run -1 kineto2ev -o "$T/x.ev" "$T/bad.json.gz"
	assert_output --regexp "gzip: corrupt compressed data near compressed byte [0-9]+ \("
	# An ev stream: gzip then plain text after it.
	kineto2ev -q -o "$T/g.ev" "$T/g/rank0/trace.json"
	{ gzip -c "$T/g.ev"; cat "$T/g.ev"; } >"$T/cat.ev.gz"
	run -1 ev-view "$T/cat.ev.gz"
	assert_output --partial "are not gzip data (two files concatenated?)"
	gzip -c "$T/g.ev" | head -c 1000 >"$T/cut.ev.gz"
	run -1 ev-stats timeline "$T/cut.ev.gz"
	assert_output --partial "gzip: the file ends inside the compressed data, after 1000 compressed bytes"
	[ ! -e "$T/x.ev" ]
}

@test "one line limit for files and pipes, naming the long line" {
	python3 -c '
import sys
sys.stdout.write("#ev 1.0 96 clock=ns\n#meta a=" + "x" * (65 << 20) + "\n#end\n")' >"$T/long.ev"
	run -1 ev-view "$T/long.ev"
	assert_output "ev-view: $T/long.ev: line 2: line longer than the limit of 67108864 bytes"
	run -1 bash -c 'cat "$1" | ev-view' _ "$T/long.ev"
	assert_output "ev-view: standard input: line 2: line longer than the limit of 67108864 bytes"
}

@test "standard output onto an input is refused before anything is written" {
	gen-kineto -q --ranks 2 --iters 12 "$T/g"
	kineto2ev -q -o "$T/g.ev" "$T/g/rank0/trace.json" "$T/g/rank1/trace.json"
	kineto2ev -q -o "$T/one.ev" "$T/g/rank0/trace.json"
	gen-kineto -q --ranks 2 --iters 1 "$T/s"
	kineto2ev -q "$T/s/rank0/trace.json" "$T/s/rank1/trace.json" | coll-expand -q -o "$T/ce.ev"
	# A big input first: its output would pass the write buffer before the
	# last input, the output itself, is opened.  ulimit -f bounds a
	# regression that would read its own output without end.
	for t in "ev-view --ev" ev-view ev-merge "ev-stats timeline" "ev-overlap --summary" coll-expand ev2perfetto ev2goal; do
		big="$T/g.ev"
		[ "$t" != ev2goal ] || big="$T/ce.ev"
		cp "$T/one.ev" "$T/y.ev"
		run -1 bash -c "ulimit -f 16384; $t \"\$1\" \"\$2\" >>\"\$2\"" _ "$big" "$T/y.ev"
		assert_output "${t%% *}: $T/y.ev: input file is output file (standard output): refusing to read what is being written"
		cmp "$T/y.ev" "$T/one.ev"
		# Standard input that is standard output.
		run -1 bash -c "ulimit -f 16384; $t <\"\$1\" >>\"\$1\"" _ "$T/y.ev"
		assert_output --partial "standard input: input file is output file (standard output)"
		cmp "$T/y.ev" "$T/one.ev"
	done
	# Converters with their own input loops.
	cp "$T/g/rank0/trace.json" "$T/t.json"
	run -1 bash -c 'ulimit -f 16384; kineto2ev "$1" >>"$1"' _ "$T/t.json"
	assert_output "kineto2ev: $T/t.json: input file is output file (standard output): refusing to read what is being written"
	cmp "$T/t.json" "$T/g/rank0/trace.json"
	cp "$TESTS_DIR/fixtures/flex2ev/job.json" "$T/job.json"
	run -1 bash -c 'ulimit -f 16384; flex2ev "$1" >>"$1"' _ "$T/job.json"
	assert_output --partial "$T/job.json: input file is output file"
	cmp "$T/job.json" "$TESTS_DIR/fixtures/flex2ev/job.json"
	cp "$TESTS_DIR/fuzz/corpus/nsys/seed-annotated-min.sqlite" "$T/n.sqlite"
	run -1 bash -c 'ulimit -f 16384; nsys2ev -q "$1" >>"$1"' _ "$T/n.sqlite"
	assert_output "nsys2ev: $T/n.sqlite: input file is output file (standard output): refusing to read what is being written"
	cmp "$T/n.sqlite" "$TESTS_DIR/fuzz/corpus/nsys/seed-annotated-min.sqlite"
	ev-view --no-meta "$T/one.ev" >"$T/one.tsv"
	cp "$T/one.tsv" "$T/y.tsv"
	run -1 bash -c 'ulimit -f 16384; ev-view --pack "$1" >>"$1"' _ "$T/y.tsv"
	cmp "$T/y.tsv" "$T/one.tsv"
	# -o naming standard output by a path: the same file, the same check.
	for p in /dev/stdout /dev/fd/1 /proc/self/fd/1; do
		cp "$T/one.ev" "$T/y.ev"
		run -1 bash -c "ulimit -f 16384; ev-merge -o $p \"\$1\" >>\"\$1\"" _ "$T/y.ev"
		assert_output "ev-merge: $T/y.ev: input file is output file (standard output): refusing to read what is being written"
		cmp "$T/y.ev" "$T/one.ev"
		# Written where standard output stands: `>>` appends, as it
		# does to plain standard output, instead of a file renamed over it.
		cp "$T/g.ev" "$T/log.ev"
		run -0 bash -c "ev-view --ev -o $p \"\$1\" >>\"\$2\"" _ "$T/one.ev" "$T/log.ev"
		cat "$T/g.ev" "$T/one.ev" | cmp - "$T/log.ev"
		# Through a pipe, those names still write to it.
		run -0 bash -c "ev-view --ev -o $p \"\$1\" | cmp - \"\$1\"" _ "$T/one.ev"
	done
	# Standard output that is a file but no input is written as before.
	run -0 bash -c 'ev-view --ev "$1" >"$2"' _ "$T/one.ev" "$T/z.ev"
	cmp "$T/z.ev" "$T/one.ev"
}

@test "binary output to a terminal is refused by any name of the terminal" {
	command -v script >/dev/null || skip "script(1) not installed"
	kineto2ev -q -o "$T/k.ev" "$TESTS_DIR/fixtures/kineto2ev/small.json"
	for p in /dev/tty /dev/stdout /dev/fd/1 /proc/self/fd/1; do
		run -0 script -qec "ev-view --ev -o $p '$T/k.ev'; echo rc=\$?" /dev/null
		assert_output --partial "ev-view: $p: refusing to write binary ev output to a terminal"
		assert_output --partial "rc=1"
		run -0 script -qec "ev-merge -o $p '$T/k.ev'; echo rc=\$?" /dev/null
		assert_output --partial "rc=1"
	done
	# -f writes anyway; a text output goes to the terminal as ever.
	run -0 script -qec "ev-view --ev -f -o /dev/tty '$T/k.ev'; echo rc=\$?" /dev/null
	assert_output --partial "#ev 1."
	assert_output --partial "rc=0"
	run -0 script -qec "ev-view -o /dev/tty '$T/k.ev' | head -c 3; echo; echo rc=\$?" /dev/null
	assert_output --partial "type"
}

@test "two lines that describe one communicator differently are an error naming both" {
	# Identical repeats, and a line that only fills members left unknown, are fine.
	sed '2a #comm 7 nranks=2 ranks=0,1\n#comm 7 nranks=2 ranks=-1,1' "$TESTS_DIR/fixtures/coll-expand/ar2.tsv" >"$T/same.tsv"
	ev-view --pack -o "$T/same.ev" "$T/same.tsv"
	run -0 coll-expand -o "$T/x.ev" "$T/same.ev"
	# Another size further down the stream.
	sed '6a #comm 7 nranks=4 ranks=0,1,2,3' "$TESTS_DIR/fixtures/coll-expand/ar2.tsv" >"$T/size.tsv"
	ev-view --pack -o "$T/size.ev" "$T/size.tsv"
	run -1 coll-expand -o "$T/x.ev" "$T/size.ev"
	assert_output --regexp "^coll-expand: $T/size.ev: line [0-9]+: #comm 7 nranks=4 ranks=0,1,2,3: conflicts with line 2 \(#comm 7 nranks=2 ranks=0,1\): 4 ranks here, 2 there$"
	# Other members; in another input.
	printf '#ev 1.0 96 clock=ns\n#comm 7 nranks=2 ranks=1,0\n#end 0\n' >"$T/other.ev"
	rm -f "$T/x.ev"
	for t in coll-expand ev-view "ev-stats coll" ev-merge; do
		run -1 $t -o "$T/x.ev" "$T/same.ev" "$T/other.ev"
		assert_output "${t%% *}: $T/other.ev: line 2: #comm 7 nranks=2 ranks=1,0: conflicts with $T/same.ev line 2 (#comm 7 nranks=2 ranks=0,1): comm rank 0 is global rank 1 here, 0 there"
		[ ! -e "$T/x.ev" ]
	done
}

@test "numbers too big for their field are out of range, not 'not a number'" {
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":0,"ts":%s,"dur":%s}]}\n' 1e300 1 >"$T/ts.json"
	run -1 kineto2ev -o "$T/x.ev" "$T/ts.json"
	assert_output "kineto2ev: $T/ts.json: byte 16: ts out of range (microseconds beyond 2^63 ns)"
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":0,"ts":%s,"dur":%s}]}\n' 1 99999999999999999999 >"$T/dur.json"
	run -1 kineto2ev -o "$T/x.ev" "$T/dur.json"
	assert_output "kineto2ev: $T/dur.json: byte 16: dur out of range (microseconds beyond 2^63 ns)"
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":0,"ts":%s,"dur":%s}]}\n' 1 '"x"' >"$T/nan.json"
	run -1 kineto2ev -o "$T/x.ev" "$T/nan.json"
	assert_output "kineto2ev: $T/nan.json: byte 16: dur is not a number"
	# ev-view --pack and flex2ev alike.
	printf 'type\top\trank\tstream\tts\tdur\nkernel\tgemm\t0\t7\t5\t99999999999999999999\n' >"$T/dur.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/dur.tsv"
	assert_output "ev-view: $T/dur.tsv: line 2: dur value '99999999999999999999' out of range"
	printf 'type\top\trank\tstream\tts\tdur\nkernel\tgemm\t0\t7\tabc\t5\n' >"$T/ts.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/ts.tsv"
	assert_output "ev-view: $T/ts.tsv: line 2: bad ts value 'abc'"
	sed '0,/"ph": *"X"/s/"ph": *"X"/"ph": "X", "ts": 99999999999999999999/' "$TESTS_DIR/fixtures/flex2ev/job.json" >"$T/job.json"
	! cmp -s "$T/job.json" "$TESTS_DIR/fixtures/flex2ev/job.json"
	run -1 flex2ev -o "$T/x.ev" "$T/job.json"
	assert_output --regexp "^flex2ev: $T/job.json: record [0-9]+: ts or dur out of range \(microseconds beyond 2\^63 ns\)$"
	[ ! -e "$T/x.ev" ]
}

@test "standard input is named alike, and nsys2ev says it cannot read it" {
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":0,"ts":1,"dur":"x"}]}\n' >"$T/nan.json"
	run -1 bash -c 'kineto2ev - <"$1"' _ "$T/nan.json"
	assert_output "kineto2ev: standard input: byte 16: dur is not a number"
	run -2 nsys2ev - </dev/null
	assert_output --partial "nsys2ev: -: nsys2ev reads SQLite files (nsys export --type sqlite), not standard input"
}

@test "a gzip member without its trailer is a truncated gzip stream, in JSON too" {
	gen-kineto -q --ranks 1 --iters 1 "$T/g"
	gzip -c "$T/g/rank0/trace.json" >"$T/t.json.gz"
	n=$(stat -c %s "$T/t.json.gz")
	# The document ends, its gzip trailer (CRC and size, 8 bytes) does not.
	head -c $((n - 8)) "$T/t.json.gz" >"$T/notrailer.json.gz"
	run -1 kineto2ev -o "$T/x.ev" "$T/notrailer.json.gz"
	assert_output --regexp "^kineto2ev: $T/notrailer.json.gz: gzip: the file ends inside the compressed data, after [0-9]+ compressed bytes .*truncated"
	# A bare event array the same.
	python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["traceEvents"], sys.stdout)' "$T/g/rank0/trace.json" | gzip -c >"$T/bare.json.gz"
	n=$(stat -c %s "$T/bare.json.gz")
	head -c $((n - 4)) "$T/bare.json.gz" >"$T/bare-cut.json.gz"
	run -1 kineto2ev -o "$T/x.ev" "$T/bare-cut.json.gz"
	assert_output --partial "gzip: the file ends inside the compressed data"
	[ ! -e "$T/x.ev" ]
}
