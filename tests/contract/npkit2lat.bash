# Contract inputs for npkit2lat: a small NPKit summary, and the same cut short.
contract_good() {
	cp "$TESTS_DIR/fixtures/npkit2lat/small_Simple.json" "$1"
}
contract_truncated() {
	head -c 150 "$TESTS_DIR/fixtures/npkit2lat/small_Simple.json" >"$1"
}
CONTRACT_ARGS=(--proto simple)
CONTRACT_TRUNC_MSG='truncated'
CONTRACT_NO_GZIP=
