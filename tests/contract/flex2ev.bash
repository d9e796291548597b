# Contract inputs for flex2ev: a small AIU Flex trace that needs no warning
# (its clock is the default 1000 MHz), and the same cut short.
contract_good() {
	cp "$TESTS_DIR/fixtures/flex2ev/clean.json" "$1"
}
contract_truncated() {
	head -c 400 "$TESTS_DIR/fixtures/flex2ev/clean.json" >"$1"
}
CONTRACT_TRUNC_MSG='truncated'
