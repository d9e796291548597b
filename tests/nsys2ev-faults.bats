#!/usr/bin/env bats
# nsys2ev on damaged input: truncated and byte-mutated SQLite files, exports
# with tables or columns missing, wrong value types, empty and non-SQLite
# files.  Every case must end with exit 0 or 1 (never a signal), a failure
# must say why in one `nsys2ev: FILE: ...` line and leave nothing under the
# -o name, and a success must be a valid ev stream.
bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
	local d="$BATS_FILE_TMPDIR/gen"
	python3 "$TESTS_DIR/gen/gen-nsys.py" --nodes 1 --gpus 2 --iters 1 "$d" >/dev/null
	cp "$d/nsys_nid000000.sqlite" "$BATS_FILE_TMPDIR/good.sqlite"
	python3 "$TESTS_DIR/gen/gen-nsys.py" --flavour stock --nodes 1 --gpus 2 --iters 1 "$d-stock" >/dev/null
	cp "$d-stock/nsys_nid000000.sqlite" "$BATS_FILE_TMPDIR/stock.sqlite"
}

# judge FILE: runs nsys2ev on FILE; prints one line per violation and
# returns 1.  Sets JUDGE_RC.
judge() {
	local f="$1" out="$BATS_TEST_TMPDIR/out.ev" err="$BATS_TEST_TMPDIR/err" rc=0
	rm -f "$out"
	nsys2ev -q -o "$out" "$f" >/dev/null 2>"$err" || rc=$?
	JUDGE_RC=$rc
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "$(basename "$f"): exit $rc"; head -n 5 "$err"; return 1
	fi
	if grep -qE 'Sanitizer|runtime error:' "$err"; then
		echo "$(basename "$f"): sanitizer report"; head -n 20 "$err"; return 1
	fi
	if [ "$rc" -eq 1 ]; then
		grep -q "^nsys2ev: .*$(basename "$f")" "$err" || { echo "$(basename "$f"): exit 1 without 'nsys2ev: FILE:' message"; cat "$err"; return 1; }
		[ "$(wc -l <"$err")" -le 3 ] || { echo "$(basename "$f"): more than 3 lines of errors"; return 1; }
		[ ! -e "$out" ] || { echo "$(basename "$f"): exit 1 left $out"; return 1; }
	else
		ev-view -q -M "$out" >/dev/null 2>&1 || { echo "$(basename "$f"): exit 0 but the output is not a valid ev stream"; return 1; }
	fi
	return 0
}

@test "the fault checks can fail: a healthy export passes, a crashing stand-in does not" {
	run -0 judge "$BATS_FILE_TMPDIR/good.sqlite"
	mkdir -p "$BATS_TEST_TMPDIR/fake"
	printf '#!/bin/sh\nkill -SEGV $$\n' >"$BATS_TEST_TMPDIR/fake/nsys2ev"
	chmod +x "$BATS_TEST_TMPDIR/fake/nsys2ev"
	PATH="$BATS_TEST_TMPDIR/fake:$PATH" run -1 judge "$BATS_FILE_TMPDIR/good.sqlite"
	assert_output --partial 'exit 139'
}

@test "truncated at every page boundary and mid-page: exit 1, no output" {
	local src="$BATS_FILE_TMPDIR/good.sqlite" size n fails=0
	size=$(stat -c %s "$src")
	for n in 0 1 50 100 4096 6000 8192 $((size / 2)) $((size - 4096)) $((size - 1)); do
		head -c "$n" "$src" >"$BATS_TEST_TMPDIR/trunc$n.sqlite"
		judge "$BATS_TEST_TMPDIR/trunc$n.sqlite" || fails=$((fails + 1))
		# Cut short is never a success (the contract's "truncated" case).
		[ "$JUDGE_RC" -eq 1 ] || { echo "truncated to $n bytes: exit $JUDGE_RC"; fails=$((fails + 1)); }
	done
	[ "$fails" -eq 0 ]
}

@test "byte-mutated databases (seeded): never a crash, errors name the file" {
	local fails=0 f
	python3 - "$BATS_FILE_TMPDIR/good.sqlite" "$BATS_FILE_TMPDIR/stock.sqlite" "$BATS_TEST_TMPDIR" <<'PY'
import random, sys
srcs, out = sys.argv[1:3], sys.argv[3]
for si, src in enumerate(srcs):
    data = open(src, "rb").read()
    for seed in range(40):
        rnd = random.Random(seed * 7919 + si)
        b = bytearray(data)
        # A few bytes anywhere, or a burst inside one page (b-tree damage).
        if seed % 2:
            for _ in range(1 + seed % 8):
                b[rnd.randrange(100, len(b))] = rnd.randrange(256)
        else:
            page = rnd.randrange(1, len(b) // 4096)
            for i in range(page * 4096 + rnd.randrange(0, 64), page * 4096 + 4096, rnd.randrange(3, 40)):
                b[i] = rnd.randrange(256)
        open(f"{out}/mut{si}_{seed}.sqlite", "wb").write(b)
PY
	for f in "$BATS_TEST_TMPDIR"/mut*.sqlite; do
		judge "$f" || fails=$((fails + 1))
	done
	[ "$fails" -eq 0 ]
}

@test "each table dropped in turn: exit 0 or a clear error" {
	local t fails=0 f
	for t in $(sqlite3 "$BATS_FILE_TMPDIR/good.sqlite" "SELECT name FROM sqlite_master WHERE type = 'table'") \
	         $(sqlite3 "$BATS_FILE_TMPDIR/stock.sqlite" "SELECT name FROM sqlite_master WHERE type = 'table'"); do
		for src in good stock; do
			f="$BATS_TEST_TMPDIR/no_${t}_$src.sqlite"
			cp "$BATS_FILE_TMPDIR/$src.sqlite" "$f"
			sqlite3 "$f" "DROP TABLE IF EXISTS $t"
			judge "$f" || fails=$((fails + 1))
		done
	done
	[ "$fails" -eq 0 ]
}

@test "required tables and columns missing: exit 1 naming what is missing" {
	local f="$BATS_TEST_TMPDIR/no_strings.sqlite"
	cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
	sqlite3 "$f" "DROP TABLE StringIds"
	run -1 --separate-stderr nsys2ev -q -o "$BATS_TEST_TMPDIR/x.ev" "$f"
	assert_equal "$stderr" "nsys2ev: $f: no StringIds table: names cannot be resolved"
	[ ! -e "$BATS_TEST_TMPDIR/x.ev" ]
	for col in start end demangledName; do
		f="$BATS_TEST_TMPDIR/kernel_no_$col.sqlite"
		cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
		sqlite3 "$f" "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN $col"
		run -1 --separate-stderr nsys2ev -q -o "$BATS_TEST_TMPDIR/x.ev" "$f"
		assert_equal "$stderr" "nsys2ev: $f: table CUPTI_ACTIVITY_KIND_KERNEL lacks start, end or demangledName"
	done
	# StringIds without its value column: an error naming the column.
	f="$BATS_TEST_TMPDIR/strings_no_value.sqlite"
	cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
	sqlite3 "$f" "ALTER TABLE StringIds DROP COLUMN value"
	run -1 --separate-stderr nsys2ev -q -o "$BATS_TEST_TMPDIR/x.ev" "$f"
	assert_regex "$stderr" "^nsys2ev: $f: .*value"
}

@test "every column dropped in turn: exit 0 or a clear error" {
	local fails=0 f t c
	while IFS='|' read -r t c; do
		f="$BATS_TEST_TMPDIR/col_${t}_$c.sqlite"
		cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
		sqlite3 "$f" "ALTER TABLE $t DROP COLUMN $c" 2>/dev/null || { rm -f "$f"; continue; }
		judge "$f" || fails=$((fails + 1))
		rm -f "$f"
	done < <(sqlite3 "$BATS_FILE_TMPDIR/good.sqlite" "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'")
	[ "$fails" -eq 0 ]
}

@test "wrong value types and NULLs in the kernel and string tables" {
	local fails=0 f sql
	for sql in \
		"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon'" \
		"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1000" \
		"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 999999999" \
		"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = -5, blockX = 1e30" \
		"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL, globalPid = NULL" \
		"UPDATE StringIds SET value = x'00ff0a09'" \
		"UPDATE NVTX_EVENTS SET text = NULL, textId = 123456789" \
		"UPDATE NVTX_EVENTS SET text = 'commHash 0x' || hex(randomblob(40))" \
		"UPDATE NVTX_EVENTS SET start = end + 1" \
		"UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 'x'" \
		"UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -1, copyKind = 99"; do
		f="$BATS_TEST_TMPDIR/types.sqlite"
		cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
		# NOT NULL constraints stop some updates; what goes in is what counts.
		sqlite3 "$f" "PRAGMA ignore_check_constraints = 1; $sql" 2>/dev/null || true
		judge "$f" || { echo "after: $sql"; fails=$((fails + 1)); }
	done
	[ "$fails" -eq 0 ]
}

@test "empty, non-SQLite and damaged gzip inputs" {
	local d="$BATS_TEST_TMPDIR" fails=0 f
	: >"$d/empty.sqlite"
	printf 'SQLite format 3\0' >"$d/header-only.sqlite"
	python3 -c 'import random, sys; r = random.Random(5); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(3000)))' >"$d/random.sqlite"
	gzip -c "$BATS_FILE_TMPDIR/good.sqlite" | head -c 5000 >"$d/cut.sqlite.gz"
	printf '\037\213garbage' >"$d/bad.sqlite.gz"
	for f in "$d"/empty.sqlite "$d"/header-only.sqlite "$d"/random.sqlite "$d"/cut.sqlite.gz "$d"/bad.sqlite.gz; do
		judge "$f" || fails=$((fails + 1))
		[ "$JUDGE_RC" -eq 1 ] || { echo "$(basename "$f"): exit $JUDGE_RC"; fails=$((fails + 1)); }
	done
	[ "$fails" -eq 0 ]
}

@test "extreme times (INT64_MAX start, INT64_MIN end) and an absurd UTC epoch: counted, never an overflow" {
	local f="$BATS_TEST_TMPDIR/extreme.sqlite" fails=0
	cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
	sqlite3 "$f" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9223372036854775807, end = -9223372036854775808"
	judge "$f" || fails=$((fails + 1))
	[ "$JUDGE_RC" -eq 0 ] || fails=$((fails + 1))
	run -0 --separate-stderr nsys2ev -o "$BATS_TEST_TMPDIR/x.ev" "$f"
	[[ "$stderr" == *"CUPTI_ACTIVITY_KIND_KERNEL: "*" rows: start overflows with the UTC offset; row left out (first: row "* ]]
	cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
	sqlite3 "$f" "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 9223372036854775807"
	run -0 --separate-stderr nsys2ev -o "$BATS_TEST_TMPDIR/x.ev" "$f"
	[[ "$stderr" == *"not a plausible UTC time; the trace clock is used"* ]]
	grep -aq '^#ev 1.1 96 .*origin=trace' "$BATS_TEST_TMPDIR/x.ev"
	[ "$fails" -eq 0 ]
}

@test "the nsys fuzz corpus (tests/fuzz/corpus/nsys) through the program" {
	local f n=0 fails=0
	for f in "$TESTS_DIR"/fuzz/corpus/nsys/*; do
		n=$((n + 1))
		judge "$f" || fails=$((fails + 1))
	done
	[ "$n" -gt 5 ] && [ "$fails" -eq 0 ]
}

@test "a string longer than an ev line may be: refused, naming the file and row, nothing written" {
	local f="$BATS_TEST_TMPDIR/long.sqlite"
	cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
	# The first kernel's name grows past 64 MiB, the readers' line limit.
	sqlite3 "$f" "UPDATE StringIds SET value = value || replace(hex(zeroblob(33554432)), '00', 'xx')
	              WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1)"
	run -1 nsys2ev -q -o "$BATS_TEST_TMPDIR/x.ev" "$f"
	assert_output "nsys2ev: $f: CUPTI_ACTIVITY_KIND_KERNEL: row 1: a string longer than an ev line may be (67108864 bytes, the readers' limit): refusing to write what readers reject"
	[ ! -e "$BATS_TEST_TMPDIR/x.ev" ]
	rm -f "$f"
}

@test "a streamId outside 0..2^32-1 is counted and said, never wrapped" {
	local f="$BATS_TEST_TMPDIR/stream.sqlite"
	cp "$BATS_FILE_TMPDIR/good.sqlite" "$f"
	sqlite3 "$f" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = -5 WHERE rowid IN
	              (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 2)"
	run -0 --separate-stderr nsys2ev -o "$BATS_TEST_TMPDIR/x.ev" "$f"
	[[ "$stderr" == *"$f: CUPTI_ACTIVITY_KIND_KERNEL: 2 rows: streamId is outside 0..2^32-1; stream 0 (first: row 1)"* ]]
	run -0 ev-view -M -c stream "$BATS_TEST_TMPDIR/x.ev"
	refute_output --partial 4294967291
}
