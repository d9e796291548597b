#!/usr/bin/env bats
# The CLI contract every program in bin/ must keep, written once and run for
# each tool.  A tool describes its inputs in tests/contract/<tool>.bash:
#   contract_good FILE     write a small valid input to FILE
#   contract_truncated FILE  write an input cut short to FILE
#   CONTRACT_ARGS          extra arguments before the input (array)
#   CONTRACT_TRUNC_MSG     regex the truncated-input error must match
#   CONTRACT_NO_OUTPUT=1   tool takes no -o (skips /dev/full)
bats_require_minimum_version 1.5.0
load test_helper

tools() {
	local t
	for t in "$EV_BIN"/*; do
		[ -x "$t" ] || continue
		case "$(basename "$t")" in gen-* | bench-*) continue ;; esac
		basename "$t"
	done
}

load_contract() {
	CONTRACT_ARGS=()
	CONTRACT_TRUNC_MSG='truncated|unexpected end|incomplete'
	CONTRACT_NO_OUTPUT=
	unset -f contract_good contract_truncated
	local f="$TESTS_DIR/contract/$1.bash"
	[ -f "$f" ] || { echo "no contract file $f for $1"; return 1; }
	# shellcheck disable=SC1090
	. "$f"
}

for_each_tool() {
	local fn="$1" t fails=0
	for t in $(tools); do
		if ! "$fn" "$t"; then
			echo "FAILED for $t"
			fails=$((fails + 1))
		fi
	done
	[ "$fails" -eq 0 ]
}

@test "there are tools to check" {
	run tools
	assert_output --partial ev-view
}

check_help() {
	local t="$1" out err
	out="$BATS_TEST_TMPDIR/$t.out"; err="$BATS_TEST_TMPDIR/$t.err"
	"$t" --help >"$out" 2>"$err" || { echo "$t --help: exit $?"; return 1; }
	grep -q '^Usage:' "$out" || { echo "$t --help: no Usage: line"; return 1; }
	grep -q 'Exit status' "$out" || { echo "$t --help: no exit status table"; return 1; }
	[ ! -s "$err" ] || { echo "$t --help wrote to stderr"; return 1; }
}
@test "contract: --help prints usage on stdout and exits 0" { for_each_tool check_help; }

check_version() {
	local t="$1"
	run -0 "$t" --version
	[[ "$output" == *"$t (evkit) "* ]] || { echo "$t --version: $output"; return 1; }
	[[ "$output" == *"ev format 1."* ]] || { echo "$t --version lacks format"; return 1; }
}
@test "contract: --version names tool and format" { for_each_tool check_version; }

check_badopt() {
	local t="$1"
	run "$t" --no-such-option-xyz </dev/null
	[ "$status" -eq 2 ] || { echo "$t bad option: exit $status"; return 1; }
	[[ "$output" == *"Try '$t --help'"* ]] || { echo "$t bad option: $output"; return 1; }
}
@test "contract: an unknown option exits 2 with a hint" { for_each_tool check_badopt; }

check_missing() {
	local t="$1"
	load_contract "$t" || return 1
	run "$t" "${CONTRACT_ARGS[@]}" "$BATS_TEST_TMPDIR/nosuch.input" </dev/null
	[ "$status" -eq 1 ] || { echo "$t missing file: exit $status: $output"; return 1; }
	[[ "$output" == *"$t: "*"nosuch.input"* ]] || { echo "$t missing file message: $output"; return 1; }
}
@test "contract: a missing file exits 1 naming the file" { for_each_tool check_missing; }

check_truncated() {
	local t="$1" in
	load_contract "$t" || return 1
	in="$BATS_TEST_TMPDIR/$t.trunc"
	contract_truncated "$in"
	run "$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.trunc.out" "$in"
	[ "$status" -eq 1 ] || { echo "$t truncated: exit $status: $output"; return 1; }
	[[ "$output" =~ $CONTRACT_TRUNC_MSG ]] || { echo "$t truncated message: $output"; return 1; }
	[ ! -e "$BATS_TEST_TMPDIR/$t.trunc.out" ] || { echo "$t left partial output"; return 1; }
	[ -z "$(find "$BATS_TEST_TMPDIR" -name ".$t.trunc.out.*")" ] || { echo "$t left a temp file"; return 1; }
}
@test "contract: truncated input exits 1, names the place, leaves no output" { for_each_tool check_truncated; }

check_devfull() {
	local t="$1" in
	load_contract "$t" || return 1
	[ -z "$CONTRACT_NO_OUTPUT" ] || return 0
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	run "$t" "${CONTRACT_ARGS[@]}" -f -o /dev/full "$in"
	[ "$status" -eq 1 ] || { echo "$t /dev/full: exit $status: $output"; return 1; }
	[[ "$output" == *"$t: "* ]] || { echo "$t /dev/full: no message"; return 1; }
	run bash -c '"$@" >/dev/full' _ "$t" "${CONTRACT_ARGS[@]}" -f "$in"
	[ "$status" -eq 1 ] || { echo "$t >/dev/full: exit $status: $output"; return 1; }
	[[ "$output" == *"$t: "* ]] || { echo "$t >/dev/full: no message"; return 1; }
}
@test "contract: a full disk exits 1 with a message" { for_each_tool check_devfull; }

check_head() {
	local t="$1" in
	load_contract "$t" || return 1
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	run --separate-stderr bash -c '"$@" | head -c 1 >/dev/null' _ "$t" "${CONTRACT_ARGS[@]}" -f "$in"
	[ -z "$stderr" ] || { echo "$t | head: stderr: $stderr"; return 1; }
}
@test "contract: a reader that goes away causes no message" { for_each_tool check_head; }

check_good_and_gzip() {
	local t="$1" in
	load_contract "$t" || return 1
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	"$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.plain.out" "$in" || { echo "$t good input failed"; return 1; }
	if [ -z "${CONTRACT_NO_GZIP:-}" ]; then
		gzip -c "$in" >"$in.gz"
		"$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.gz.out" "$in.gz" || { echo "$t gzip input failed"; return 1; }
		# #src lines name the input file, which differs by its .gz suffix.
		cmp <(grep -av '^#src ' "$BATS_TEST_TMPDIR/$t.plain.out") <(grep -av '^#src ' "$BATS_TEST_TMPDIR/$t.gz.out") ||
			{ echo "$t gzip output differs"; return 1; }
	fi
}
@test "contract: good input works, gzip input gives the same output" { for_each_tool check_good_and_gzip; }

check_empty() {
	local t="$1"
	load_contract "$t" || return 1
	: >"$BATS_TEST_TMPDIR/empty"
	run "$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.empty.out" "$BATS_TEST_TMPDIR/empty"
	# An empty file is not a valid stream for any tool: a clear error, exit 1.
	[ "$status" -eq 1 ] || { echo "$t empty input: exit $status: $output"; return 1; }
	[[ "$output" == *"$t: "* ]] || { echo "$t empty input: no message"; return 1; }
}
@test "contract: empty input exits 1 with a message" { for_each_tool check_empty; }

check_dir_input() {
	local t="$1"
	load_contract "$t" || return 1
	mkdir -p "$BATS_TEST_TMPDIR/adir"
	run "$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.dir.out" "$BATS_TEST_TMPDIR/adir"
	[ "$status" -eq 1 ] || { echo "$t directory input: exit $status: $output"; return 1; }
	[[ "$output" == *"$t: "*"adir"* ]] || { echo "$t directory input message: $output"; return 1; }
	[ ! -e "$BATS_TEST_TMPDIR/$t.dir.out" ] || { echo "$t left output"; return 1; }
}
@test "contract: an unreadable input (a directory) exits 1 naming it" { for_each_tool check_dir_input; }

check_fsize() {
	local t="$1" in
	load_contract "$t" || return 1
	[ -z "$CONTRACT_NO_OUTPUT" ] || return 0
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	run bash -c 'ulimit -f 0; "$@"' _ "$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.fsize.out" "$in"
	[ "$status" -eq 1 ] || { echo "$t ulimit -f: exit $status: $output"; return 1; }
	[[ "$output" == *"$t: "* ]] || { echo "$t ulimit -f: no message"; return 1; }
	[ ! -e "$BATS_TEST_TMPDIR/$t.fsize.out" ] || { echo "$t left partial output"; return 1; }
	[ -z "$(find "$BATS_TEST_TMPDIR" -name ".$t.fsize.out.*")" ] || { echo "$t left a temp file"; return 1; }
}
@test "contract: a file-size limit during output exits 1 and leaves nothing" { for_each_tool check_fsize; }

check_output_is_input() {
	local t="$1" in link
	load_contract "$t" || return 1
	[ -z "$CONTRACT_NO_OUTPUT" ] || return 0
	in="$BATS_TEST_TMPDIR/$t.sacred"
	contract_good "$in"
	cp "$in" "$in.orig"
	run "$t" "${CONTRACT_ARGS[@]}" -o "$in" "$in"
	[ "$status" -ne 0 ] || { echo "$t -o onto its input: exit 0"; return 1; }
	[[ "$output" == *"input"* ]] || { echo "$t -o onto its input: message: $output"; return 1; }
	cmp -s "$in" "$in.orig" || { echo "$t -o onto its input destroyed it"; return 1; }
	link="$BATS_TEST_TMPDIR/$t.link"
	ln -sf "$in" "$link"
	run "$t" "${CONTRACT_ARGS[@]}" -o "$link" "$in"
	[ "$status" -ne 0 ] || { echo "$t -o onto a link to its input: exit 0"; return 1; }
	cmp -s "$in" "$in.orig" || { echo "$t -o onto a link to its input destroyed it"; return 1; }
	[ -z "$(find "$BATS_TEST_TMPDIR" -name ".$t.sacred.*")" ] || { echo "$t left a temp file"; return 1; }
}
@test "contract: -o onto an input (or a link to it) is refused and the input kept" { for_each_tool check_output_is_input; }

check_link_output() {
	local t="$1" in out
	load_contract "$t" || return 1
	[ -z "$CONTRACT_NO_OUTPUT" ] || return 0
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	out="$BATS_TEST_TMPDIR/$t.target"
	echo previous >"$out"
	chmod 600 "$out"
	ln -sf "$out" "$BATS_TEST_TMPDIR/$t.outlink"
	"$t" "${CONTRACT_ARGS[@]}" -f -o "$BATS_TEST_TMPDIR/$t.outlink" "$in" || { echo "$t -o LINK failed"; return 1; }
	[ -L "$BATS_TEST_TMPDIR/$t.outlink" ] || { echo "$t replaced the symlink itself"; return 1; }
	[ "$(stat -c %a "$out")" = 600 ] || { echo "$t reset the target's mode to $(stat -c %a "$out")"; return 1; }
	! grep -qx previous "$out" || { echo "$t did not write the target"; return 1; }
}
@test "contract: -o onto a symlink writes its target and keeps the target's mode" { for_each_tool check_link_output; }

check_options_after_files() {
	local t="$1" in
	load_contract "$t" || return 1
	[ -z "$CONTRACT_NO_OUTPUT" ] || return 0
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	"$t" "${CONTRACT_ARGS[@]}" -o "$BATS_TEST_TMPDIR/$t.before" "$in" || { echo "$t options first failed"; return 1; }
	"$t" "${CONTRACT_ARGS[@]}" "$in" -o "$BATS_TEST_TMPDIR/$t.after" || { echo "$t options after the file failed"; return 1; }
	cmp -s "$BATS_TEST_TMPDIR/$t.before" "$BATS_TEST_TMPDIR/$t.after" || { echo "$t: output depends on option order"; return 1; }
}
@test "contract: options are accepted after file names" { for_each_tool check_options_after_files; }

# A tool killed while it streams: its input is a FIFO that the test holds
# open for writing after half of the input, so the tool is mid-stream with
# -o open, waiting for more, when the signal comes.
check_sigterm() {
	local t="$1" in fifo out pid sig
	load_contract "$t" || return 1
	[ -z "$CONTRACT_NO_OUTPUT" ] || return 0
	[ -z "${CONTRACT_NO_STREAM:-}" ] || return 0
	in="$BATS_TEST_TMPDIR/$t.good"
	contract_good "$in"
	for sig in TERM INT HUP; do
		fifo="$BATS_TEST_TMPDIR/$t.$sig.fifo"
		out="$BATS_TEST_TMPDIR/$t.$sig.out"
		rm -f "$fifo"; mkfifo "$fifo"
		echo previous >"$out"
		# Read-write, so that opening it does not wait for the reader.
		exec 5<>"$fifo"
		head -c "$(($(wc -c <"$in") / 2))" "$in" >&5
		"$t" "${CONTRACT_ARGS[@]}" -f -o "$out" "$fifo" 2>/dev/null 5>&- &
		pid=$!
		if ! wait_reading "$pid"; then
			echo "$t never waited for more input"; kill "$pid" 2>/dev/null; exec 5>&-; return 1
		fi
		kill -"$sig" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		exec 5>&-
		[ -z "$(find "$BATS_TEST_TMPDIR" -name ".$t.$sig.out.*")" ] || { echo "$t left a temp file on SIG$sig"; return 1; }
		grep -qx previous "$out" || { echo "$t: SIG$sig replaced the previous output"; return 1; }
	done
}
@test "contract: TERM, INT or HUP mid-stream leaves no temp file and the previous output" { for_each_tool check_sigterm; }
