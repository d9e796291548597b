#!/usr/bin/env bats
# ev-view: decoding, encoding (--pack), filters, lossless round trips.
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	FX="$TESTS_DIR/fixtures/ev-view"
	EXP="$TESTS_DIR/expected/ev-view"
	T="$BATS_TEST_TMPDIR"
	ev-view --pack -o "$T/small.ev" "$FX/small.tsv"
}

@test "pack then view gives the expected TSV" {
	ev-view -M -c type,op,rank,stream,ts,dur,bytes,name,sig,comm,seq,peer,flags "$T/small.ev" >"$T/out.tsv"
	diff -u "$EXP/small.tsv" "$T/out.tsv"
}

@test "ev -> TSV -> ev is byte-identical" {
	ev-view "$T/small.ev" >"$T/full.tsv"
	ev-view --pack -o "$T/again.ev" "$T/full.tsv"
	cmp "$T/small.ev" "$T/again.ev"
}

@test "round trip keeps metadata, several segments and every field" {
	{
		printf '#ev 1.0 96 clock=ns origin=unix\n'
		printf '#rank 0 host=node1 device=0\n#comm 77 nranks=2 ranks=0,1\n#ring 77 0 0 1\n'
		printf 'type\top\trank\tts\tdur\tname\tnthreads\tchunk_steps\tslice_steps\tstep_size\tflags\taux\talgo\tproto\tdtype\tredop\n'
		printf 'coll\treducescatter\t0\t5\t6\tx\t512\t4\t2\t524288\tintra|clipped\t4294967295\tring\tll128\tbfloat16\tsum\n'
		printf '#end 1\n'
		printf '#ev 1.0 96 clock=ns origin=trace\n'
		printf 'mark\tstep\t1\t-5\t0\tx\t0\t0\t0\t0\t-\t0\t-\t-\t-\t-\n'
		printf '#end 1\n'
	} >"$T/multi.tsv"
	ev-view --pack -o "$T/multi.ev" "$T/multi.tsv"
	ev-view "$T/multi.ev" >"$T/multi.out"
	ev-view --pack -o "$T/multi2.ev" "$T/multi.out"
	cmp "$T/multi.ev" "$T/multi2.ev"
	run -0 grep -c '^#ev ' "$T/multi.ev"
	assert_output 2
	run -0 ev-view -M -H -c ts,flags,aux,step_size,algo,proto,dtype,redop "$T/multi.ev"
	assert_output - <<'OUT'
5	intra|clipped	4294967295	524288	ring	ll128	bfloat16	sum
-5	-	0	0	-	-	-	-
OUT
}

@test "column order in the TSV may change and missing columns default" {
	printf 'name\tts\ttype\nk\t7\tkernel\n' >"$T/min.tsv"
	ev-view --pack -o "$T/min.ev" "$T/min.tsv"
	run -0 ev-view -M -H -c type,ts,peer,name "$T/min.ev"
	assert_output "$(printf 'kernel\t7\t-1\tk')"
}

@test "CSV quotes fields that need it" {
	run -0 ev-view --csv -c type,name,sig --type=kernel "$T/small.ev"
	assert_line --index 0 'type,name,sig'
	assert_line --index 1 'kernel,Cijk_Alik_Bljk,"aten::mm [[4096,4096],[4096,4096]]"'
}

@test "JSON Lines parse and keep types" {
	ev-view --jsonl "$T/small.ev" >"$T/out.jsonl"
	run -0 jq -r 'select(.type=="send") | [.name, .bytes, .peer, .flags] | @tsv' "$T/out.jsonl"
	assert_output "$(printf 'name with\\ttab and \\\\ backslash\t65536\t0\tintra|phase_rs')"
	run -0 jq -s 'length' "$T/out.jsonl"
	assert_output 5
}

@test "filters: type, rank, name regex, time window, src" {
	run -0 ev-view -M -H -c rank,ts --type=coll --rank=1 "$T/small.ev"
	assert_output "$(printf '1\t1120')"
	run -0 ev-view -M -H -c ts --name='^Cijk_' "$T/small.ev"
	assert_output "$(printf '1000\n1010')"
	run -0 ev-view -M -H -c ts --from=1010 --to=1120 "$T/small.ev"
	assert_output "$(printf '1100\n1010')"
	run -0 ev-view -M -H -c ts --src=1 "$T/small.ev"
	assert_output ""
	run -0 ev-view -M -H -c ts --rank=0-0,1 --type=send,kernel "$T/small.ev"
	assert_output "$(printf '1000\n1010\n1200')"
}

@test "--ev filtering writes a valid stream with only the strings it uses" {
	ev-view --ev --type=kernel -o "$T/k.ev" "$T/small.ev"
	run -0 grep -ac '^#str ' "$T/k.ev"
	assert_output 2
	run -0 ev-view -M -H -c ts "$T/k.ev"
	assert_output "$(printf '1000\n1010')"
	run -0 tail -n 1 "$T/k.ev"
	assert_output '#end 2'
}

@test "--ids prints string ids and packs them back" {
	ev-view --ids "$T/small.ev" >"$T/ids.tsv"
	run -0 grep -c '^type	op	rank	stream	ts	dur	bytes	name_id	sig_id' "$T/ids.tsv"
	ev-view --pack -o "$T/ids.ev" "$T/ids.tsv"
	cmp "$T/small.ev" "$T/ids.ev"
}

@test "concatenated and gzipped streams read as one" {
	cat "$T/small.ev" "$T/small.ev" | gzip -c >"$T/two.ev.gz"
	run -0 ev-view -M -H -c ts "$T/two.ev.gz"
	assert_equal "$(echo "$output" | wc -l)" 10
	run -0 ev-view -M -H -c ts "$T/small.ev" "$T/small.ev"
	assert_equal "$(echo "$output" | wc -l)" 10
}

@test "bad TSV is rejected with the line number" {
	printf 'type\tts\tbogus\nkernel\t1\t2\n' >"$T/bad1.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad1.tsv"
	assert_output --partial "line 1: unknown column 'bogus'"
	printf 'type\tts\nkernel\t1\t2\n' >"$T/bad2.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad2.tsv"
	assert_output --partial "line 2: more fields"
	printf 'type\tts\nkernel\n' >"$T/bad3.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad3.tsv"
	assert_output --partial "line 2: 1 fields, the header row has 2"
	printf 'type\tts\nwidget\t1\n' >"$T/bad4.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad4.tsv"
	assert_output --partial "bad type value 'widget'"
	printf 'type\top\nkernel\tallreduce\n' >"$T/bad5.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad5.tsv"
	assert_output --partial "bad op value 'allreduce' for type kernel"
	printf 'kernel\t1\n' >"$T/bad6.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad6.tsv"
	assert_output --partial "line 1: unknown column 'kernel' in header row"
	printf 'type\tflags\nkernel\tintra|b12\n' >"$T/bad8.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad8.tsv"
	assert_output --partial "bad flags value 'intra|b12'"
	printf 'type\tts\nkernel\t-1x\n' >"$T/bad7.tsv"
	run -1 ev-view --pack -o "$T/x.ev" "$T/bad7.tsv"
	assert_output --partial "bad ts value '-1x'"
	[ ! -e "$T/x.ev" ]
}

@test "damaged streams name the record or line" {
	head -n 4 "$T/small.ev" >"$T/cut.ev"
	run -1 ev-view "$T/cut.ev"
	assert_output --partial "cut.ev: line 4: truncated: stream ends without #end after record 1"
	sed 's/^#end 5$/#end 4/' "$T/small.ev" >"$T/count.ev"
	run -1 ev-view "$T/count.ev"
	assert_output --partial "#end says 4 records but the segment has 5"
	sed 's/^#ev 1\.[0-9]*/#ev 9.0/' "$T/small.ev" >"$T/v9.ev"
	run -1 ev-view "$T/v9.ev"
	assert_output --partial "format version 9.0 is not supported"
	printf '#ev 1.0 96\n\001short\n#end 1\n' >"$T/short.ev"
	run -1 ev-view "$T/short.ev"
	assert_output --partial "record 1 (line 2): record size 6, expected 96"
	grep -av '^#str' "$T/small.ev" >"$T/nostr.ev"
	run -1 ev-view "$T/nostr.ev"
	assert_output --partial "record 1 (line 2): names a string id with no #str"
}

@test "usage errors exit 2" {
	run -2 ev-view --columns=nope "$T/small.ev"
	assert_output --partial "unknown column"
	run -2 ev-view --name='(' "$T/small.ev"
	run -2 ev-view --rank=3-1 "$T/small.ev"
	run -2 ev-view --pack --csv "$T/small.ev"
	run -2 ev-view --from=abc "$T/small.ev"
	# The bad word is named after its buffer was freed once (use after free).
	run -2 ev-view -t kernel,nosuch "$T/small.ev"
	assert_output --partial "unknown record type 'nosuch'"
}

@test "binary output to a terminal is refused unless forced" {
	command -v script >/dev/null || skip "script(1) not installed"
	run script -qec "ev-view --ev $T/small.ev" /dev/null
	assert_output --partial "refusing to write binary ev output to a terminal"
	run script -qec "ev-view -M -c ts $T/small.ev" /dev/null
	assert_output --partial "1000"
}

@test "output file appears only on success" {
	run -1 ev-view --pack -o "$T/o.ev" "$T/nosuch.tsv"
	[ ! -e "$T/o.ev" ]
	run -0 ev-view -o "$T/o.tsv" "$T/small.ev"
	[ -s "$T/o.tsv" ]
	[ -z "$(ls -A "$T" | grep '^\.o\.')" ]
}
