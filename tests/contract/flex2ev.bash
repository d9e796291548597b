# Contract inputs for flex2ev: a small AIU Flex trace, and the same cut short.
contract_good() {
	cp "$TESTS_DIR/fixtures/flex2ev/job.json" "$1"
}
contract_truncated() {
	head -c 700 "$TESTS_DIR/fixtures/flex2ev/job.json" >"$1"
}
CONTRACT_TRUNC_MSG='truncated'
