# Contract inputs for npkit2lat: a small NPKit summary, and the same cut short.
contract_good() {
	cp "$TESTS_DIR/fixtures/npkit2lat/small_Simple.json" "$1"
}
contract_truncated() {
	head -c 150 "$TESTS_DIR/fixtures/npkit2lat/small_Simple.json" >"$1"
}
# (the unit given: an inferred one is said on stderr, which the contract forbids for good input)
CONTRACT_ARGS=(--proto simple --unit ns)
CONTRACT_TRUNC_MSG='truncated'
CONTRACT_NO_GZIP=
