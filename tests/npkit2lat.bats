#!/usr/bin/env bats
# npkit2lat: NPKit summaries -> latency table (TSV).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	FX="$TESTS_DIR/fixtures/npkit2lat"
	T="$BATS_TEST_TMPDIR"
}

@test "small summary gives the expected table (nearest-rank percentiles, sorted)" {
	run -0 --separate-stderr npkit2lat --proto simple "$FX/small_Simple.json"
	assert_output - <<'EOF'
primitive	proto	size_bytes	n	mean_ns	p10	p50	p90	min	max
DIRECT_RECV_COPY_SEND	simple	4	2	92.5	90	90	95	90	95
DIRECT_RECV_COPY_SEND	simple	1024	1	150.0	150	150	150	150	150
DIRECT_RECV_COPY_SEND	simple	65536	2	810.0	800	800	820	800	820
DIRECT_RECV_REDUCE_COPY_SEND	simple	4	1	180.0	180	180	180	180	180
DIRECT_RECV_REDUCE_COPY_SEND	simple	65536	1	1900.0	1900	1900	1900	1900	1900
RECV_REDUCE_SEND	simple	4	3	110.0	100	110	120	100	120
RECV_REDUCE_SEND	simple	1024	2	210.0	200	200	220	200	220
RECV_REDUCE_SEND	simple	65536	4	1050.0	900	1000	1200	900	1200
SEND	simple	4	1	50.0	50	50	50	50	50
EOF
}

@test "protocol comes from the file name: LL128 before LL, Simple" {
	cp "$FX/small_Simple.json" "$T/npkit_data_summary_LL.json"
	cp "$FX/small_Simple.json" "$T/sum-LL128.json"
	run -0 npkit2lat "$T/npkit_data_summary_LL.json" "$T/sum-LL128.json" "$FX/small_Simple.json"
	run -0 bash -c "npkit2lat -q '$T/npkit_data_summary_LL.json' '$T/sum-LL128.json' '$FX/small_Simple.json' | cut -f2 | LC_ALL=C sort | uniq -c | sed 's/^ *//'"
	assert_output - <<'EOF'
9 ll
9 ll128
1 proto
9 simple
EOF
}

@test "a name without a protocol needs --proto" {
	cp "$FX/small_Simple.json" "$T/summary.json"
	run -1 npkit2lat "$T/summary.json"
	assert_output --partial "summary.json: cannot tell the protocol from the file name; use --proto"
	run -0 --separate-stderr npkit2lat --proto ll128 "$T/summary.json"
	assert_line --index 1 --partial "	ll128	4	"
}

@test "output is deterministic and independent of input order" {
	need_shared_data
	npkit2lat -o "$T/a.tsv" "$SHARED_DATA/npkit/clariden/npkit_data_summary_Simple.json" "$SHARED_DATA/npkit/clariden/npkit_data_summary_LL.json"
	npkit2lat -o "$T/b.tsv" "$SHARED_DATA/npkit/clariden/npkit_data_summary_LL.json" "$SHARED_DATA/npkit/clariden/npkit_data_summary_Simple.json"
	cmp "$T/a.tsv" "$T/b.tsv"
	# 5 events x (19 Simple + 15 LL sizes) + header
	run -0 wc -l <"$T/a.tsv"
	assert_output 171
}

@test "clariden Simple means match the GOAL note's examples" {
	need_shared_data
	npkit2lat -o "$T/c.tsv" "$SHARED_DATA/npkit/clariden/npkit_data_summary_Simple.json"
	run -0 awk -F'\t' '($1 == "RECV_REDUCE_SEND" || $1 == "DIRECT_RECV_COPY_SEND") && ($3 == 4 || $3 == 65536 || $3 == 1048576) { print $1, $3, $5 }' "$T/c.tsv"
	assert_output - <<'EOF'
DIRECT_RECV_COPY_SEND 4 2273.8
DIRECT_RECV_COPY_SEND 65536 2396.3
DIRECT_RECV_COPY_SEND 1048576 38168.7
RECV_REDUCE_SEND 4 2348.8
RECV_REDUCE_SEND 65536 2032.2
RECV_REDUCE_SEND 1048576 28148.0
EOF
}

@test "the play site's huge samples print as integers" {
	need_shared_data
	run -0 bash -c "npkit2lat -q '$SHARED_DATA/npkit/play/npkit_data_summary_LL.json' | awk -F'\t' '\$1 == \"SEND\" && \$3 == 768'"
	assert_output "$(printf 'SEND\tll\t768\t1\t1000000000000000.0\t1000000000000000\t1000000000000000\t1000000000000000\t1000000000000000\t1000000000000000')"
}

@test "a missing required event is an error" {
	printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": {"4": [1]}}\n' >"$T/x_Simple.json"
	run -1 npkit2lat -o "$T/out.tsv" "$T/x_Simple.json"
	assert_output "npkit2lat: $T/x_Simple.json: missing event NPKIT_EVENT_GPU_DIRECT_RECV_COPY_SEND (see --require)"
	[ ! -e "$T/out.tsv" ]
	run -0 npkit2lat --require none "$T/x_Simple.json"
	run -0 npkit2lat --require RECV_REDUCE_SEND "$T/x_Simple.json"
}

@test "non-numeric, negative and missing samples are errors naming the place" {
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": [1, "x"]}}\n' >"$T/a_Simple.json"
	run -1 npkit2lat --require none "$T/a_Simple.json"
	assert_output "npkit2lat: $T/a_Simple.json: event NPKIT_EVENT_GPU_SEND: size 4: sample 2 is not a number"
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": [1, -3]}}\n' >"$T/b_Simple.json"
	run -1 npkit2lat --require none "$T/b_Simple.json"
	assert_output --partial "sample 2 is not a number >= 0: '-3'"
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": []}}\n' >"$T/c_Simple.json"
	run -1 npkit2lat --require none "$T/c_Simple.json"
	assert_output --partial "size 4: no samples"
	printf '{"NPKIT_EVENT_GPU_SEND": {"four": [1]}}\n' >"$T/d_Simple.json"
	run -1 npkit2lat --require none "$T/d_Simple.json"
	assert_output --partial "size key 'four' is not a byte count"
	printf '{"NPKIT_EVENT_GPU_SEND": [1, 2]}\n' >"$T/e_Simple.json"
	run -1 npkit2lat --require none "$T/e_Simple.json"
	assert_output --partial "expected an object of sizes"
}

@test "bad JSON, truncated JSON and empty input are errors" {
	printf '{"NPKIT_EVENT_GPU_SEND": {"4" [1]}}\n' >"$T/a_Simple.json"
	run -1 npkit2lat --require none "$T/a_Simple.json"
	assert_output --partial "invalid JSON"
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": [1, 2' >"$T/b_Simple.json"
	run -1 npkit2lat --require none "$T/b_Simple.json"
	assert_output --partial "truncated"
	printf '{}' >"$T/c_Simple.json"
	run -1 npkit2lat --require none "$T/c_Simple.json"
	assert_output --partial "no NPKit events"
}

@test "the same row from two inputs is an error" {
	run -1 npkit2lat --proto simple "$FX/small_Simple.json" "$FX/small_Simple.json"
	assert_output --partial "given twice"
}

@test "usage errors exit 2" {
	run -2 npkit2lat --proto xyz "$FX/small_Simple.json"
	assert_output --partial "--proto: expected ll, ll128 or simple"
	run -2 npkit2lat --max-object=abc "$FX/small_Simple.json"
}

@test "infinite, over-2^53 and 2^64 samples are errors naming the file" {
	for v in 1e400 1e300 18446744073709551616 9007199254740994; do
		printf '{"NPKIT_EVENT_GPU_SEND": {"4": [1000, %s]}}\n' "$v" >"$T/a_Simple.json"
		run -1 npkit2lat --require none -o "$T/out.tsv" "$T/a_Simple.json"
		assert_output --regexp "^npkit2lat: $T/a_Simple.json: event NPKIT_EVENT_GPU_SEND: size 4: sample 2 is (not a finite number|over 2\^53 \(104 days in ns\), no primitive's time): '$v'\$"
		[ ! -e "$T/out.tsv" ]
	done
	# 2^53 itself is the largest time taken
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": [9007199254740992]}}\n' >"$T/b_Simple.json"
	run -0 npkit2lat -q --require none "$T/b_Simple.json"
	assert_line --index 1 --partial "	9007199254740992	9007199254740992"
	# microseconds that pass 2^53 once in ns
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": [9007199254741]}}\n' >"$T/c_Simple.json"
	run -1 npkit2lat --unit=us --require none "$T/c_Simple.json"
	assert_output "npkit2lat: $T/c_Simple.json: SEND size 4: sample 9007199254741 times 1000 is over 2^53 ns (104 days), no primitive's time"
}

# The clariden Simple means of two primitives at three sizes, in us.
us_summary() {
	printf '{"NPKIT_EVENT_GPU_RECV_REDUCE_SEND": {"4": [2.349, 2.3486], "65536": [2.032], "1048576": [28.148]},\n'
	printf ' "NPKIT_EVENT_GPU_DIRECT_RECV_COPY_SEND": {"4": [2.274], "65536": [2.396], "1048576": [38.169]}}\n'
}

@test "a summary in microseconds is told by its bandwidth, scaled to ns and said" {
	us_summary >"$T/old_Simple.json"
	run -0 --separate-stderr npkit2lat "$T/old_Simple.json"
	assert_equal "$stderr" "npkit2lat: warning: $T/old_Simple.json: samples taken as microseconds and scaled to ns: read as ns, RECV_REDUCE_SEND would move 1048576 bytes at 3.725e+04 GB/s and the shortest mean would be 2.032 ns (--unit=ns keeps them as they are)"
	assert_output - <<'EOF'
primitive	proto	size_bytes	n	mean_ns	p10	p50	p90	min	max
DIRECT_RECV_COPY_SEND	simple	4	1	2274.0	2274	2274	2274	2274	2274
DIRECT_RECV_COPY_SEND	simple	65536	1	2396.0	2396	2396	2396	2396	2396
DIRECT_RECV_COPY_SEND	simple	1048576	1	38169.0	38169	38169	38169	38169	38169
RECV_REDUCE_SEND	simple	4	2	2348.8	2348.5999999999999	2348.5999999999999	2349	2348.5999999999999	2349
RECV_REDUCE_SEND	simple	65536	1	2032.0	2032	2032	2032	2032	2032
RECV_REDUCE_SEND	simple	1048576	1	28148.0	28148	28148	28148	28148	28148
EOF
	# --unit=ns keeps the numbers and says nothing; --unit=us scales silently
	run -0 --separate-stderr npkit2lat --unit=ns "$T/old_Simple.json"
	assert_equal "$stderr" ""
	assert_line --index 3 "DIRECT_RECV_COPY_SEND	simple	1048576	1	38.2	38.168999999999997	38.168999999999997	38.168999999999997	38.168999999999997	38.168999999999997"
	run -0 --separate-stderr npkit2lat --unit=us "$T/old_Simple.json"
	assert_equal "$stderr" ""
	assert_line --index 3 "DIRECT_RECV_COPY_SEND	simple	1048576	1	38169.0	38169	38169	38169	38169	38169"
	# a file with only tiny sizes is told by its shortest mean
	printf '{"NPKIT_EVENT_GPU_SEND": {"4": [0.4], "8": [0.5]}}\n' >"$T/tiny_LL.json"
	run -0 --separate-stderr npkit2lat --require none "$T/tiny_LL.json"
	assert_equal "$stderr" "npkit2lat: warning: $T/tiny_LL.json: samples taken as microseconds and scaled to ns: read as ns, SEND would move 8 bytes at 16 GB/s and the shortest mean would be 0.4 ns (--unit=ns keeps them as they are)"
	run -2 npkit2lat --unit=ms "$T/tiny_LL.json"
	assert_output --partial "--unit: 'ms' is not one of: auto, ns, us"
}

@test "a summary in nanoseconds is kept, and stderr says what was assumed" {
	run -0 --separate-stderr npkit2lat --proto simple "$FX/small_Simple.json"
	assert_equal "$stderr" "npkit2lat: $FX/small_Simple.json: samples taken as nanoseconds: DIRECT_RECV_COPY_SEND moves 65536 bytes at 80.91 GB/s, the shortest mean is 50 ns (--unit=us if they are microseconds)"
	assert_line --index 3 "DIRECT_RECV_COPY_SEND	simple	65536	2	810.0	800	800	820	800	820"
	run -0 --separate-stderr npkit2lat -q --proto simple "$FX/small_Simple.json"
	assert_equal "$stderr" ""
}

@test "shared data: every real summary is taken as ns, and as us once divided by 1000" {
	need_shared_data
	for f in "$SHARED_DATA"/npkit/{ault,clariden}/*.json; do
		run -0 --separate-stderr npkit2lat -o "$T/ns.tsv" "$f"
		[[ "$stderr" == "npkit2lat: $f: samples taken as nanoseconds: "* ]]
		b=$(basename "$f")
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump({e:{k:[x/1000 for x in v] for k,v in s.items()} for e,s in d.items()}, open(sys.argv[2],"w"))' "$f" "$T/$b"
		run -0 --separate-stderr npkit2lat -o "$T/us.tsv" "$T/$b"
		[[ "$stderr" == "npkit2lat: warning: $T/$b: samples taken as microseconds and scaled to ns: "* ]]
		# the same sizes and counts, the same medians to the ns
		cmp <(cut -f1-4 "$T/ns.tsv") <(cut -f1-4 "$T/us.tsv")
		cmp <(awk -F'\t' '{ print ($7 == "p50" ? $7 : int($7 + 0.5)) }' "$T/ns.tsv") <(awk -F'\t' '{ print ($7 == "p50" ? $7 : int($7 + 0.5)) }' "$T/us.tsv")
	done
}

@test "a summary with 200,000 sizes of one primitive is read in linear time" {
	awk 'BEGIN { printf "{\"NPKIT_EVENT_GPU_SEND\": {"; for (i = 1; i <= 200000; i++) printf "%s\"%d\": [%d, %d]", (i > 1 ? "," : ""), 4 * i, 1000 + i, 1001 + i; print "}}" }' >"$T/many_LL.json"
	# quadratic, this took over a minute; linear, well under a second
	run -0 timeout 30 npkit2lat -q --require none -o "$T/many.tsv" "$T/many_LL.json"
	run -0 wc -l <"$T/many.tsv"
	assert_output 200001
	run -0 sed -n '200001p' "$T/many.tsv"
	assert_output "SEND	ll	800000	2	201000.5	201000	201000	201001	201000	201001"
}
