# Contract inputs for coll-expand: two ranks, one ring AllReduce each.
contract_good() {
	cp "$TESTS_DIR/fixtures/coll-expand/ar2.tsv" "$1.tsv"
	ev-view --pack -o "$1" "$1.tsv"
}
contract_truncated() {
	contract_good "$1.full"
	head -n 4 "$1.full" >"$1"
}
CONTRACT_TRUNC_MSG='record [0-9]+|line [0-9]+|truncated'
# ar2.tsv has a kernel before the first operation: keep it (--lead-in), so
# that the good input gives no note about the time left out.
CONTRACT_ARGS=(--lead-in)
