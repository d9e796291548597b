# Contract inputs for flex-stats: a flex2ev stream of a small clean trace
# (the summary table), and the same stream cut short.
CONTRACT_ARGS=(summary)
contract_good() {
	flex2ev -q -o "$1" "$TESTS_DIR/fixtures/flex2ev/clean.json"
}
contract_truncated() {
	flex2ev -q -o "$1.full" "$TESTS_DIR/fixtures/flex2ev/clean.json"
	head -c 1000 "$1.full" >"$1"
	rm -f "$1.full"
}
CONTRACT_TRUNC_MSG='truncated|unexpected end|incomplete|line'
