#!/usr/bin/env bats
# npkit2lat: NPKit summaries -> latency table (TSV).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	FX="$TESTS_DIR/fixtures/npkit2lat"
	T="$BATS_TEST_TMPDIR"
}

@test "small summary gives the expected table (nearest-rank percentiles, sorted)" {
	run -0 npkit2lat --proto simple "$FX/small_Simple.json"
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
	run -0 bash -c "npkit2lat '$T/npkit_data_summary_LL.json' '$T/sum-LL128.json' '$FX/small_Simple.json' | cut -f2 | LC_ALL=C sort | uniq -c | sed 's/^ *//'"
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
	run -0 npkit2lat --proto ll128 "$T/summary.json"
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
	run -0 bash -c "npkit2lat '$SHARED_DATA/npkit/play/npkit_data_summary_LL.json' | awk -F'\t' '\$1 == \"SEND\" && \$3 == 768'"
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
