#!/usr/bin/env bats
# ev2perfetto --counters=queue,membw: HTA's queue length and memory
# bandwidth time series as counter tracks, by hand and against HTA's own
# series on shared traces (tests/expected/hta/README).
bats_require_minimum_version 1.5.0
load test_helper

setup() {
	T="$BATS_TEST_TMPDIR"
	E="$TESTS_DIR/expected/hta"
}

# counters JSON: HTA's counter samples as "series<TAB>name<TAB>ts_us<TAB>value",
# sorted (series: queue or membw).
counters() {
	sed -n 's/.*"name":"\(queue length stream\|memory bandwidth\) \([^"]*\)","ts":\([0-9]*\)\.000,"args":{"[A-Za-z]*":\([^}]*\)}}.*/\1\t\2\t\3\t\4/p' "$1" |
		sed 's/^queue length stream/queue/; s/^memory bandwidth/membw/' | LC_ALL=C sort
}

@test "--counters=all: queue length per stream and bandwidth per kind, by hand" {
	pack "$TESTS_DIR/fixtures/ev-stats/hta.tsv" "$T/h.ev"
	run -0 ev2perfetto --counters=all -o "$T/h.json" "$T/h.ev"
	python3 "$TESTS_DIR/fixtures/ev2perfetto/validate.py" "$T/h.json" >/dev/null
	# Stream 7: +1 at each launch (10, 22, 60, 105, 210), -1 at each start
	# (20, 40, 100, 150, 300): the last step counts too (k5).  Stream 9: the
	# copy launched at 106, started at 160.  Bandwidth: 1000 B over the
	# trace's 25 us = 0.04 GB/s at 150, + 3000 B / 10 us at 160, the first
	# ends at 170, the second at 180.
	run -0 counters "$T/h.json"
	assert_output - <<'OUT'
membw	Memcpy HtoD	150	0.04
membw	Memcpy HtoD	160	0.33999999999999997
membw	Memcpy HtoD	170	0.3
membw	Memcpy HtoD	180	0
queue	7	10	1
queue	7	100	0
queue	7	105	1
queue	7	150	0
queue	7	20	0
queue	7	210	1
queue	7	22	1
queue	7	300	0
queue	7	40	0
queue	7	60	1
queue	9	106	1
queue	9	160	0
OUT
	# One of them alone; none without the option.
	ev2perfetto --counters=membw -o "$T/m.json" "$T/h.ev"
	assert_equal "$(counters "$T/m.json" | cut -f1 | sort -u)" membw
	ev2perfetto -o "$T/n.json" "$T/h.ev"
	assert_equal "$(counters "$T/n.json")" ""
}

@test "--counters: an unknown word is a usage error" {
	run -2 ev2perfetto --counters=queue,bogus /dev/null
	assert_output --partial "--counters: 'bogus' is not one of: queue, membw"
}

@test "--counters=all: every sample equals HTA's time series on four shared traces" {
	need_shared_data
	local name path
	: >"$T/ours"
	for name in cp_event_sync cp_event_sync_ms cp_simple_add cp_alexnet; do
		path=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' "$E/traces.tsv")
		kineto2ev -q -o "$T/$name.ev" "$SHARED_DATA/kineto/hta/$path"
		ev2perfetto -q --time=absolute --counters=all -o "$T/$name.json" "$T/$name.ev"
		counters "$T/$name.json" | sed "s/^/$name\t/" >>"$T/ours"
	done
	# Same keys (trace, series, stream or kind, ts), values within 1e-9
	# relative (queue lengths exactly).
	run -0 awk -F'\t' '
		NR == FNR { if (!/^#/) ref[$1 "|" $2 "|" $3 "|" $4] = $5; next }
		{ k = $1 "|" $2 "|" $3 "|" $4; seen[k] = 1
		  if (!(k in ref)) { print "only ours: " $0; next }
		  d = $5 - ref[k]; if (d < 0) d = -d; m = ref[k] < 0 ? -ref[k] : ref[k]
		  if (d > 1e-9 * (m > 1 ? m : 1)) print "differs: " $0 " vs " ref[k]; n++ }
		END { for (k in ref) if (!(k in seen)) print "only HTA: " k; print n " samples" }' "$E/counters.tsv" "$T/ours"
	assert_output "$(grep -vc '^#' "$E/counters.tsv") samples"
}
