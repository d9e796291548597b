# Contract inputs for kineto2ev: a small Kineto trace, and the same cut short.
contract_good() {
	cp "$TESTS_DIR/fixtures/kineto2ev/small.json" "$1"
}
contract_truncated() {
	head -c 900 "$TESTS_DIR/fixtures/kineto2ev/small.json" >"$1"
}
CONTRACT_TRUNC_MSG='truncated'
